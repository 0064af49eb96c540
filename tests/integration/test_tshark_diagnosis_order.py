#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""`tshark -2 -z rdmatel,diagnosis` lists the findings as `rdmatel analyze` does: by rank, 1 first,
with the CLI's numbers (export diagnosis). Each finding is counted on its frame to look at
(worst_frame), and those come in any order: on captures where the finding ranked 2 or 3 has the
earlier frame, the table listed the rows in frame order (2, 1, 3). With a filter that leaves a
finding's frame out (`-z rdmatel,diagnosis,FILTER`), the others keep their rank order.

Captures: generated with faults of several kinds (slow storage, slow host, slow and lossy paths),
chosen so that the ranks' frames are not in rank order (checked here, or the test proves nothing).

Usage: test_tshark_diagnosis_order.py RDMATEL_SYNTH RDMATEL PLUGIN_SO"""
import json
import os
import re
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
from rdmatel_stats import parse_simple_tables  # noqa: E402
from rdmatel_testlib import Tshark, fail, fail_if, generate_capture, run_cli, scratch_dir  # noqa: E402

if len(sys.argv) != 4:
    fail(__doc__)
synth, cli, plugin = sys.argv[1:]
tmp = scratch_dir("rdmatel_diag_order_")
TABLE = "RDMA Telemetry · Diagnosis: who is to blame"
RANKED = re.compile(r"^  (\d+)\. (.+?): (.+)\.$")
problems = []

SCENARIOS = [
    ("three_faults_3point", ["--scenario", "nvme-3point", "--hosts", "3", "--storages", "3", "--slow-path", "2:1=100",
                             "--slow-storage", "3=400", "--lossy-path", "3:2=0.03"], 5, 300),
    ("two_slow_hosts_blocks", ["--scenario", "nvme-2point", "--hosts", "5", "--storages", "2", "--slow-host", "5=300",
                               "--slow-host", "2=150", "--slow-storage", "1=200", "--order", "blocks"], 6, 400),
]


def cli_ranked(capture):
    """rdmatel analyze's findings in the order it prints them: [(rank, scope, verdict)]."""
    out = run_cli(cli, "analyze", capture, "--no-progress").stdout
    section = out.split("Diagnosis: who is to blame", 1)[1].split("\n\n", 1)[0]
    return [(int(m.group(1)), m.group(2), m.group(3)) for m in map(RANKED.match, section.splitlines()) if m]


def cli_records(capture):
    out = run_cli(cli, "export", "diagnosis", capture, "--format", "jsonl", "--no-progress").stdout
    recs = [json.loads(line) for line in out.splitlines() if line.strip()]
    return {r["rank"]: r for r in recs if r.get("rank")}


def cell(value, fmt):
    return "nan" if value is None else fmt % value


def expected_cells(r):
    pct = lambda k: cell(r[k] * 100 if k in r else None, "%.1f")  # noqa: E731
    return {3: r.get("metric") or "retransmissions", 4: cell(r.get("value_us"), "%.3f"),
            5: cell(r.get("peer_median_us"), "%.3f"), 6: str(r["ios"]), 7: pct("storage_share"),
            8: pct("network_share"), 9: pct("host_share"), 10: str(r.get("worst_frame", 0)), 11: r["evidence"]}


ts = Tshark(plugin)
out_of_frame_order = 0
try:
    for name, args, seed, ios in SCENARIOS:
        cap = generate_capture(synth, tmp, name, args, seed, ios)
        want = cli_ranked(cap)
        recs = cli_records(cap)
        if len(want) < 2 or [w[0] for w in want] != sorted(recs):
            problems.append(f"{name}: rdmatel analyze ranks {[w[0] for w in want]}, export diagnosis {sorted(recs)}")
            continue
        frames = [recs[rank]["worst_frame"] for rank, _, _ in want]
        out_of_frame_order += frames != sorted(frames)
        staged = ts.stage(cap)
        rows = parse_simple_tables(ts.run("-2", "-q", "-r", staged, "-z", "rdmatel,diagnosis").stdout)[TABLE][1]
        rows = [r for r in rows if r and r[0].isdigit()]
        got = [(int(r[0]), r[1], r[2]) for r in rows]
        if got != want:
            problems.append(f"{name}: -z rdmatel,diagnosis lists {got}, rdmatel analyze {want} "
                            f"(frames to look at, in rank order: {frames})")
        for r in rows:
            rec = recs.get(int(r[0]))
            for col, value in (expected_cells(rec) if rec else {}).items():
                if r[col] != value:
                    problems.append(f"{name}: rank {r[0]} column {col}: {r[col][:100]!r}, CLI {value[:100]!r}")
        # A filter leaving out the frame of the finding ranked first: the others, still by rank.
        first = recs[want[0][0]]["worst_frame"]
        filtered = parse_simple_tables(ts.run("-2", "-q", "-r", staged, "-z",
                                              f"rdmatel,diagnosis,frame.number != {first}").stdout)[TABLE][1]
        got = [int(r[0]) for r in filtered if r and r[0].isdigit()]
        if got != [w[0] for w in want[1:]]:
            problems.append(f"{name}: -z rdmatel,diagnosis,frame.number != {first} lists ranks {got}, "
                            f"want {[w[0] for w in want[1:]]}")
finally:
    ts.close()
if not out_of_frame_order:
    problems.append("no capture has its findings' frames out of rank order: the test proves nothing")
fail_if(problems, "differences between -z rdmatel,diagnosis and rdmatel analyze")
print(f"OK: -z rdmatel,diagnosis lists the findings by rank as rdmatel analyze does ({len(SCENARIOS)} captures, "
      f"{out_of_frame_order} with frames out of rank order)")
