# SPDX-License-Identifier: GPL-2.0-or-later
"""NVMe I/Os over thousands of observation points, written here so every stamp is known.

1. Every point sees the I/O (a mirror of every port of a fabric, a path of 20,000 hops): two
   reads, each command, data and completion seen at p0 .. p19999, 20 ns further at each point
   (the command from p0 on, the data and completion from p19999 back), each point also carrying
   a WRITE of its own before each: 400,000 packets. Each packet looked its point up among all
   those that had seen its flow and its I/O: `analyze --threads 1` took 7 minutes. `export io`
   and `analyze` (one thread and two) must each end within 120 s (a few seconds here), the
   I/Os each exported once, their compute side p0 and storage side p19999, IOL1 the span p0
   saw and DAL p19999's. (Sightings beyond a packet's 64th were not related to the others'
   clocks: the I/O was reported before its storage end saw it, p63 taken for that end, DAL
   798 us for 1.)
2. Every point carries I/Os of its own (a host and a storage server of its own each): 300
   points with 20 reads each, and 4 points with 20,000 each over 20 s (their I/Os wait for role
   evidence that never comes, 10 s of capture: `export io` did not end within 130 s). Each is
   exported once, in order, completed, with the IOL its point saw, within 120 s.

    test_io_at_many_points.py RDMATEL
"""
import json
import os
import subprocess
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "robustness"))
from hostile_captures import Pcapng, Queue, aeth, read_along, reth, roce, udp_ipv4  # noqa: E402

from rdmatel_testlib import fail, scratch_dir  # noqa: E402

cli = sys.argv[1]
tmp = scratch_dir("rdmatel_ioat_")
T0 = 1_700_000_000_000_000_000
HANG = 120
problems = []


def run(label, *args):
    try:
        p = subprocess.run([cli, *args, "--no-progress"], capture_output=True, text=True, timeout=HANG)
    except subprocess.TimeoutExpired:
        fail(f"{label}: no end within {HANG} s (a hang)")
    if p.returncode != 0:
        fail(f"{label}: exit {p.returncode}: {p.stderr[-2000:]}")
    return p


def records(label, cap, *extra):
    p = run(label, "export", "io", cap, *extra)
    return [json.loads(l) for l in p.stdout.splitlines() if l.startswith("{")], p.stderr


# ---- 1. every point sees the I/O
POINTS, HOP, EVERY_READS = 20_000, 20, 4
every = os.path.join(tmp, "every.pcapng")
w = Pcapng(every, [(f"p{k}", 256) for k in range(POINTS)])
q = Queue("10.1.0.1", "10.2.0.1", 0x100, 0x101)
expected = {}
for i in range(EVERY_READS):
    t = T0 + i * 5_000_000_000  # seconds apart, as a sampled capture
    # Traffic of their own at every point first (a WRITE and its ACK), as on a busy fabric: the
    # state of the I/O's flows at each point lies among other flows' (not in one run of memory).
    for k in range(POINTS):
        src, dst = bytes([11, 0, k >> 8, k & 0xFF]), bytes([12, 0, k >> 8, k & 0xFF])
        write = roce(0x0A, 0x1000 + k, i, ext=reth(0, 5, 1024), payload=b"\1" * 1024, ack_req=True)
        t += 200
        w.packet(k, t, udp_ipv4(src, dst, 0xC000 + (k & 0x3FFF), write))
        w.packet(k, t + 50, udp_ipv4(dst, src, 0xC000 + (k & 0x3FFF), roce(0x11, 0x2000 + k, i, ext=aeth(0x1F, i))))
    t_data, t_cpl = read_along(w, q.read_frames(i + 1, 0x1000 + i, q.h_psn + i, q.s_psn + 2 * i), POINTS, t, HOP)
    # At p0: the command at t, the completion last of all. At p19999, the storage end: the
    # command last of all, the data first.
    expected[i + 1] = {"t1_ns": t, "iol1_us": (t_cpl + (POINTS - 1) * HOP - t) / 1000,
                       "dal_us": (t_data - (t + (POINTS - 1) * HOP)) / 1000}
w.close()

got, err = records("export io (every point)", every)
if sorted(r["cid"] for r in got) != sorted(expected):
    problems.append(f"every point: exported CIDs {[r['cid'] for r in got]}, want {sorted(expected)} once each")
for r in got:
    e = expected.get(r["cid"])
    if not e:
        continue
    if r.get("compute_point") != "p0" or r.get("t1_ns") != e["t1_ns"]:
        problems.append(f"every point: cid {r['cid']}: compute side {r.get('compute_point')} at {r.get('t1_ns')}, "
                        f"want p0 at {e['t1_ns']}")
    if r.get("storage_point") != f"p{POINTS - 1}":
        problems.append(f"every point: cid {r['cid']}: storage side {r.get('storage_point')}, want p{POINTS - 1}")
    for f in ("iol1_us", "dal_us"):
        if r.get(f) is None or abs(float(r[f]) - e[f]) > 0.0005:
            problems.append(f"every point: cid {r['cid']}: {f} {r.get(f)}, want {e[f]:.3f}")
    if r.get("end") != "completed":
        problems.append(f"every point: cid {r['cid']}: end {r.get('end')}")
for threads in ("1", "2"):  # (one thread took 7 minutes, two 18 s: the scans fell to the worker)
    p = run(f"analyze --threads {threads} (every point)", "analyze", "--threads", threads, every)
    if f"NVMe commands: {EVERY_READS} (read {EVERY_READS}," not in p.stdout:
        problems.append(f"every point: analyze --threads {threads} does not count the {EVERY_READS} reads: " +
                        next((l for l in p.stdout.splitlines() if "NVMe commands" in l), "no NVMe line"))

# ---- 2. every point its own I/Os
def own_points(label, points, reads, round_gap):
    """`reads` rounds of a read at each of `points` points, a host and storage server of its own
    each, the rounds `round_gap` ns apart: every I/O exported once, completed, with its IOL."""
    cap = os.path.join(tmp, f"own{points}.pcapng")
    w = Pcapng(cap, [(f"p{k}", 256) for k in range(points)])
    queues = [Queue(f"10.3.{k >> 8}.{k & 0xFF}", f"10.4.{k >> 8}.{k & 0xFF}", 0x200, 0x201) for k in range(points)]
    want = {}
    t = T0
    for i in range(reads):
        for k in range(points):
            qk = queues[k]
            cmd, data, cpl = qk.read_frames(i % 65535 + 1, 0x2000 + i, qk.h_psn + i, qk.s_psn + 2 * i)
            t += 1000
            span = 3000 + 7 * k + 11 * (i % 100)  # each I/O a latency of its own
            w.packet(k, t, cmd)
            w.packet(k, t + span // 2, data)
            w.packet(k, t + span, cpl)
            want[(qk.host_txt, i % 65535 + 1, t)] = span / 1000  # IOL, µs
        t += round_gap
    w.close()
    got, _ = records(f"export io ({label})", cap, "--max-ios", "10000")
    seen = {}
    for r in got:
        seen.setdefault(r["host"], []).append(r)
    # (One point each: its role unknown, so no T1; the IOL it saw is the I/O's own, and its I/Os
    # come out in command order.)
    wrong = 0
    for k, q in enumerate(queues):
        mine = [v for (host, _, _), v in want.items() if host == q.host_txt]
        recs = seen.get(q.host_txt, [])
        if len(recs) != len(mine):
            problems.append(f"{label}: host {q.host_txt}: {len(recs)} records, want {len(mine)}")
            continue
        for r, iol in zip(recs, mine):
            if r.get("end") != "completed" or abs(float(r.get("iol_us", -1)) - iol) > 0.0005:
                wrong += 1
                if wrong <= 5:
                    problems.append(f"{label}: {q.host_txt} cid {r.get('cid')}: end {r.get('end')} iol "
                                    f"{r.get('iol_us')}, want completed {iol:.3f}")
    return len(want)


own_small = own_points("300 points", 300, 20, 50_000)
# 4 points, 80,000 I/Os over 20 s: each seen at one point of four, its sides unknown, so it waits
# (10 s of capture) for evidence that never comes: 40,000 wait at once. Each step rebuilt every
# waiting record once the oldest had waited its time: no end within 130 s (now 0.2 s).
own_long = own_points("4 points, 20 s", 4, 20_000, 996_000)

if problems:
    fail("\n".join(problems[:20]))
print(f"{POINTS} points seeing every packet of {EVERY_READS} reads: exported once each, sides p0 and p{POINTS - 1}, "
      f"IOL1 and DAL exact, "
      f"analyze within {HANG} s; reads of their own at each point: all {own_small} (300 points) and {own_long} "
      f"(4 points, 20 s) exact")
