# SPDX-License-Identifier: GPL-2.0-or-later
"""analyze's I/O tables on a fabric of many hosts: beyond 50 rows (or --top N, if more) a table
shows its slowest rows, slowest first, and says how many it left out; --top large enough shows
every row in address order, as with few hosts.

The capture is written here, so the latencies are known: 60 hosts (10.7.0.1 .. 10.7.0.60) each
read once from their own storage server (10.8.0.1 .. 10.8.0.60) at one point, host i's read
completing i microseconds after its command (IOL, the latency at the one point).

    test_analyze_io_tables.py RDMATEL
"""
import os
import subprocess
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "robustness"))
from hostile_captures import Pcapng, Queue  # noqa: E402

from rdmatel_testlib import fail, scratch_dir  # noqa: E402

cli = sys.argv[1]
tmp = scratch_dir("rdmatel_iotables_")
HOSTS = 60
LIMIT = 50  # cli/tables.h kIoTableRows
T0 = 1_700_000_000_000_000_000

cap = os.path.join(tmp, "hosts60.pcapng")
w = Pcapng(cap, [("leaf", 262144)])
for i in range(1, HOSTS + 1):
    q = Queue(f"10.7.0.{i}", f"10.8.0.{i}", 0x1000 + i, 0x2000 + i)
    t = T0 + i * 1_000_000
    latency = i * 1000
    cmd, data, cpl = q.read_frames(7, 0x5000 + i, 100, 500)
    w.packet(0, t, cmd)
    w.packet(0, t + latency // 2, data)
    w.packet(0, t + latency, cpl)
w.close()

problems = []


def host_rows(report):
    """The host table's rows: (host, IOL avg in µs), in the order printed, and its closing note."""
    lines = report.splitlines()
    start = next(i for i, l in enumerate(lines) if l.startswith("NVMe I/O latency per host IP"))
    rows, note = [], None
    for l in lines[start + 2:]:
        if not l.strip():
            break
        parts = l.split()
        if parts[0].startswith("10.7.0."):
            rows.append((parts[0], float(parts[parts.index("IOL") + 1])))
        elif l.strip().startswith("(") and " shown, " in l:
            note = l.strip()
    return rows, note


def analyze(*extra):
    p = subprocess.run([cli, "analyze", cap, "--no-progress", *extra], capture_output=True, text=True)
    if p.returncode != 0:
        fail(f"analyze {' '.join(extra)}: exit {p.returncode}: {p.stderr[-400:]}")
    return p.stdout


# Default: the 50 slowest hosts (60 µs down to 11 µs), slowest first, and the count left out.
rows, note = host_rows(analyze())
want = [(f"10.7.0.{i}", float(i)) for i in range(HOSTS, HOSTS - LIMIT, -1)]
if rows != want:
    problems.append(f"default: {len(rows)} rows {rows[:3]}...{rows[-2:]}, want the {LIMIT} slowest from "
                    f"{want[0]} to {want[-1]}")
if note != f"({LIMIT} of {HOSTS} hosts shown, the slowest by mean IOL1 (or IOL) first; --top N shows more, " \
           "export io every I/O)":
    problems.append(f"default: closing note {note!r}")
# --top above the limit raises it: the 55 slowest.
rows, note = host_rows(analyze("--top", "55"))
if [r[0] for r in rows] != [f"10.7.0.{i}" for i in range(HOSTS, HOSTS - 55, -1)] or not note or "55 of 60" not in note:
    problems.append(f"--top 55: {len(rows)} rows from {rows[:1]}, note {note!r}")
# --top covering every host: all of them, in address order, no note.
rows, note = host_rows(analyze("--top", "100"))
if rows != sorted(((f"10.7.0.{i}", float(i)) for i in range(1, HOSTS + 1)), key=lambda r: int(r[0].split(".")[3])) \
        or note:
    problems.append(f"--top 100: {len(rows)} rows {rows[:3]}, note {note!r}")

if problems:
    for p in problems:
        print(p)
    fail(f"{len(problems)} I/O table problems")
print(f"OK: analyze's I/O tables (the {LIMIT} slowest of {HOSTS} hosts, --top raises the limit)")
