# SPDX-License-Identifier: GPL-2.0-or-later
"""One NVMe read crossing K observation points, K beyond what an I/O's role votes compare (16):
the compute side must be the host's end of the path and the storage side the storage server's,
with every metric exact. The capture is written here, so the truth is known: the host's packets
reach point k at +k x HOP, the storage server's at +(K-1-k) x HOP; the storage server sends the
data 10 µs and the completion 13 µs after the command reached it.

    test_long_paths.py RDMATEL
"""
import json
import os
import subprocess
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "robustness"))
from hostile_captures import Pcapng, Queue  # noqa: E402

from rdmatel_testlib import fail, scratch_dir  # noqa: E402

cli = sys.argv[1]
tmp = scratch_dir("rdmatel_longpath_")
HOP = 1000
T0 = 1_700_000_000_000_000_000
problems = []

for points in (16, 17, 40, 120):
    cap = os.path.join(tmp, f"path{points}.pcapng")
    w = Pcapng(cap, [(f"p{k}", 262144) for k in range(points)])
    q = Queue("10.5.0.1", "10.5.0.2", 0x5500, 0x5501)
    cmd, data, cpl = q.read_frames(9, 0x4242, 100, 500)
    arrives = T0 + (points - 1) * HOP  # the command at the storage end
    frames = [(T0, True, cmd), (arrives + 10_000, False, data), (arrives + 13_000, False, cpl)]
    sightings = []
    for t, from_host, frame in frames:
        for k in range(points):
            sightings.append((t + (k if from_host else points - 1 - k) * HOP, k, frame))
    for t, k, frame in sorted(sightings, key=lambda s: (s[0], s[1])):
        w.packet(k, t, frame)
    w.close()
    p = subprocess.run([cli, "export", "io", cap, "--no-progress"], capture_output=True, text=True)
    recs = [json.loads(l) for l in p.stdout.splitlines() if l.strip()]
    if p.returncode != 0 or len(recs) != 1:
        problems.append(f"{points} points: exit {p.returncode}, {len(recs)} records: {p.stderr[-300:]}")
        continue
    r = recs[0]
    want = {"compute_point": "p0", "storage_point": f"p{points - 1}", "dal_us": 10.0, "iol2_us": 13.0,
            "rtt_us": 2 * (points - 1) * HOP / 1000, "iol1_us": (2 * (points - 1) * HOP + 13_000) / 1000}
    for f, v in want.items():
        got = r.get(f)
        if got != v and not (isinstance(v, float) and got is not None and abs(float(got) - v) < 0.0005):
            problems.append(f"{points} points: {f} = {got!r}, want {v!r}")

if problems:
    for p in problems:
        print(p)
    fail(f"{len(problems)} long-path problems")
print("OK: long paths (16, 17, 40 and 120 points: the sides at the path's ends, every metric exact)")
