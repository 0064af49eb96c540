# SPDX-License-Identifier: GPL-2.0-or-later
"""analyze's line of observation points on a capture of many: up to 50 points (or --top N, if
more) are named; beyond that the points with a role come first, then the others by number, and
the rest are summed up (how many, how many of unknown role, their packets). A file of 4,000
interfaces printed every one on that line (139 KB).

The capture is written here, so what each point carried is known: 60 points p0 .. p59, point k
carrying k + 1 RDMA WRITEs of a queue pair of its own; p57 (the compute side) and p58 (the
storage side) also see one NVMe read between a host and a storage server, which gives them their
roles.

    test_analyze_many_points.py RDMATEL
"""
import os
import re
import subprocess
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "robustness"))
from hostile_captures import Pcapng, Queue, reth, roce, udp_ipv4  # noqa: E402

from rdmatel_testlib import fail, scratch_dir  # noqa: E402

cli = sys.argv[1]
tmp = scratch_dir("rdmatel_manypoints_")
POINTS, LIMIT = 60, 50  # cli/tables.h kPointsListed
COMPUTE, STORAGE = 57, 58
T0 = 1_700_000_000_000_000_000

cap = os.path.join(tmp, "points60.pcapng")
w = Pcapng(cap, [(f"p{k}", 256) for k in range(POINTS)])
packets = {}
t = T0
for k in range(POINTS):
    src, dst = bytes([11, 0, 0, k]), bytes([12, 0, 0, k])
    for i in range(k + 1):
        t += 10_000
        w.packet(k, t, udp_ipv4(src, dst, 0xC000 + k, roce(0x0A, 0x1000 + k, i, ext=reth(0, 5, 64), payload=b"\1" * 64)))
    packets[k] = k + 1
q = Queue("10.1.0.1", "10.2.0.1", 0x100, 0x101)
cmd, data, cpl = q.read_frames(1, 0x5000, 100, 500)
t += 1_000_000
for point, dt, frame in ((COMPUTE, 0, cmd), (STORAGE, 1000, cmd), (STORAGE, 5000, data), (COMPUTE, 5500, data),
                         (STORAGE, 9000, cpl), (COMPUTE, 9500, cpl)):
    w.packet(point, t + dt, frame)
    packets[point] += 1
w.close()

problems = []


def points_line(*extra):
    p = subprocess.run([cli, "analyze", cap, "--no-progress", *extra], capture_output=True, text=True)
    if p.returncode != 0:
        fail(f"analyze {' '.join(extra)} exited {p.returncode}: {p.stderr[-2000:]}")
    line = next((l for l in p.stdout.splitlines() if l.strip().startswith("observation points (")), None)
    if line is None:
        fail("no observation points line in:\n" + p.stdout[:2000])
    return line


def check(label, line, expect_listed):
    named = re.findall(r"(?:: |, )(p\d+) \[([^\]]*)\]", line)
    names = [n for n, _ in named]
    if not line.strip().startswith(f"observation points ({POINTS}):"):
        problems.append(f"{label}: the line does not count {POINTS} points: {line[:120]}")
    if names != [f"p{k}" for k in sorted(expect_listed)]:
        problems.append(f"{label}: named {names}, expected {[f'p{k}' for k in sorted(expect_listed)]}")
    for name, text in named:
        k = int(name[1:])
        if not text.endswith(f", {packets[k]} packets"):
            problems.append(f"{label}: {name} [{text}], expected {packets[k]} packets")
    roles = {name: text for name, text in named}
    if roles.get(f"p{COMPUTE}", "").split(":")[0] != "compute" or roles.get(f"p{STORAGE}", "").split(":")[0] != "storage":
        problems.append(f"{label}: the points with roles are not shown with them: {roles.get(f'p{COMPUTE}')}, "
                        f"{roles.get(f'p{STORAGE}')}")
    rest = [k for k in range(POINTS) if k not in expect_listed]
    m = re.search(r"; (\d+) more not listed \(--top N lists up to N\): (\d+) of unknown role, (\d+) packets$", line)
    if not rest:
        if m or "not listed" in line:
            problems.append(f"{label}: says points are not listed though all are: {line[-200:]}")
        return
    expected = (len(rest), len(rest), sum(packets[k] for k in rest))
    if not m or tuple(int(x) for x in m.groups()) != expected:
        problems.append(f"{label}: expected '{expected[0]} more not listed ... {expected[1]} of unknown role, "
                        f"{expected[2]} packets', got: {line[-200:]}")


# Default: the two points with roles, then the first 48 others by number.
check("default", points_line(), {COMPUTE, STORAGE} | set(range(LIMIT - 2)))
check("--top 55", points_line("--top", "55"), {COMPUTE, STORAGE} | set(range(53)))
check("--top 60", points_line("--top", "60"), set(range(POINTS)))

if problems:
    fail("\n".join(problems))
print("analyze's points line: 50 named (roles first), --top 55 and --top 60, the rest summed up exactly")
