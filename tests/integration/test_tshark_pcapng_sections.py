#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""pcapng files joined with cat: one file of several sections, each with its own interface blocks
numbered from 0 (per-point files of the sniffers, ring files of one dumpcap). Wireshark 4.0 hands
the plugin a record's interface as its section numbers it and names interface N by the file's Nth
interface block, so every section's interface 0 was the first section's point: the storage
sniffer's packets were measured as the compute point's (negative latencies, I/Os split between
points that were one), unlike the CLI, which numbers a file's interfaces across its sections.

Checked:
 - per-point files (one interface each) joined with cat: every frame's rdmatel.point is the point
   whose file it came from, no latency is negative, and tshark -2 gives the CLI's numbers on every
   I/O and message (test_cli_vs_tshark.py);
 - ring files of one capture (the same interfaces in each section) joined with cat: tshark -2
   prints the same rdmatel fields as on the capture in one file.

Usage: test_tshark_pcapng_sections.py RDMATEL_SYNTH RDMATEL PLUGIN_SO"""
import os
import subprocess
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
import pcapng_stream as ps  # noqa: E402
from rdmatel_testlib import Tshark, fail, fail_if, first_difference, generate_capture, scratch_dir  # noqa: E402

if len(sys.argv) != 4:
    fail(__doc__)
synth, cli, plugin = sys.argv[1:]
tmp = scratch_dir("rdmatel_sections_")
problems = []
FIELDS = ["frame.number", "rdmatel.point", "rdmatel.point_role", "rdmatel.io.id", "rdmatel.io.stage", "rdmatel.iol1",
          "rdmatel.iol2", "rdmatel.rtt", "rdmatel.dal", "rdmatel.dpl", "rdmatel.iol", "rdmatel.fct",
          "rdmatel.msg.packets", "rdmatel.hop.delay", "rdmatel.hop.lost", "rdmatel.retrans"]
field_args = [a for f in FIELDS for a in ("-e", f)]
LATENCIES = ["rdmatel.iol1", "rdmatel.iol2", "rdmatel.rtt", "rdmatel.dal", "rdmatel.dpl", "rdmatel.iol", "rdmatel.fct"]

tidy = generate_capture(synth, tmp, "tidy", ["--scenario", "nvme-3point", "--duration-s", "0.5"], seed=8, ios=150)
cap = ps.Capture(tidy)

ts = Tshark(plugin)
try:
    # Per-point files joined with cat: section k holds interface k's packets, as its interface 0.
    parts = ps.split_by_interface(cap)
    per_point = os.path.join(tmp, "per_point_cat.pcapng")
    with open(per_point, "wb") as f:
        for part in parts:
            f.write(part)
    # The point of each frame, by the file it came from (the tidy capture's interface names).
    alone_points = []
    for k, part in enumerate(parts):
        path = os.path.join(tmp, f"alone{k}.pcapng")
        with open(path, "wb") as f:
            f.write(part)
        alone_points.append(next((r["rdmatel.point"] for r in ts.fields(path, ["rdmatel.point"]) if r["rdmatel.point"]),
                                 ""))
    want_points = [alone_points[iface] for iface, _, _, _ in sorted(cap.packets, key=lambda p: p[0])]
    rows = ts.fields(per_point, FIELDS)
    got_points = [r["rdmatel.point"] for r in rows]
    if got_points != want_points:
        wrong = [i + 1 for i, (g, w) in enumerate(zip(got_points, want_points)) if g != w]
        problems.append(f"per-point files joined with cat: {len(wrong)} frames at the wrong point, e.g. frame "
                        f"{wrong[0] if wrong else '?'}: {got_points[wrong[0] - 1] if wrong else ''} where its file is "
                        f"{want_points[wrong[0] - 1] if wrong else ''} ({len(got_points)} vs {len(want_points)} frames)")
    negative = [(r["frame.number"], f, v) for r in rows for f in LATENCIES for v in r[f].split("|")
                if v and float(v) < 0]
    if negative:
        problems.append(f"per-point files joined with cat: {len(negative)} negative latencies, e.g. {negative[:3]}")
    p = subprocess.run([sys.executable, os.path.join(here, "test_cli_vs_tshark.py"), cli, plugin, per_point],
                       capture_output=True, text=True, timeout=600)
    if p.returncode != 0:
        lines = p.stdout.strip().splitlines()
        problems.append(f"per-point files joined with cat: the plugin differs from the CLI: "
                        f"{lines[-1] if lines else p.stderr[-500:]}; first: {lines[0] if lines else ''}")
    # Read one after the other, sections overlapping in time are measured apart: an expert info
    # says so (not for ring files, below, whose sections follow each other).
    expert = ts.run("-2", "-r", ts.stage(per_point), "-q", "-z", "expert,warn").stdout
    if "per-point files joined with cat?" not in expert:
        problems.append("per-point files joined with cat: no warning that sections overlapping in time are read one "
                        "after the other")
    # Ring files of one capture joined with cat: each section describes every interface again.
    half = len(cap.packets) // 2
    ring = os.path.join(tmp, "ring_cat.pcapng")
    with open(ring, "wb") as f:
        for chunk in (cap.packets[:half], cap.packets[half:]):
            f.write(cap.header)
            for pkt in chunk:
                f.write(cap.epb(*pkt))
    want = ts.run("-2", "-r", ts.stage(tidy), "-T", "fields", *field_args).stdout
    got = ts.run("-2", "-r", ts.stage(ring), "-T", "fields", *field_args).stdout
    if got != want:
        problems.append(f"ring files joined with cat: {first_difference(got, want)}")
    if "joined with cat?" in ts.run("-2", "-r", ts.stage(ring), "-q", "-z", "expert,warn").stdout:
        problems.append("ring files joined with cat: warned as per-point files")
finally:
    ts.close()
fail_if(problems, "differences on pcapng files of several sections")
print("OK: pcapng files joined with cat (per-point files, ring files): each frame at its point, the CLI's numbers")
