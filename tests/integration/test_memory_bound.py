#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The CLI's memory is bounded by the state it keeps, not by the size of the capture (README,
Performance: the mapped file is given back behind the read position; percentiles go to a
fixed-size histogram past 65,536 samples; finished I/Os and messages leave the state).

Two captures of the same traffic at the same rate, one four times as long as the other (about
100 and 400 MB): `analyze` (one and two threads), `export io` and `export messages` run on both,
and the longer one's peak resident set may exceed the shorter one's by at most a quarter of the
difference in file size (73 MiB). Memory that grew with the input would add more: the mapped
file kept resident adds the whole difference (checked by hand: 298-313 MiB with the pages behind
the read position kept), and so would state kept for every packet from about 40 bytes a packet
or every finished I/O from about 600 bytes. Smaller leaks need longer captures than a test run
can afford. Peak memory comes from GNU time (%M), not from timing: nothing here depends on the
machine's speed.

Skipped (77) under AddressSanitizer, whose quarantine of freed memory grows with the work done.

Usage: test_memory_bound.py RDMATEL_SYNTH RDMATEL"""
import os
import subprocess
import sys

from rdmatel_testlib import SKIP, fail, fail_if, sanitized, scratch_dir

if len(sys.argv) != 3:
    fail(__doc__)
synth, cli = sys.argv[1], sys.argv[2]
if not os.path.exists("/usr/bin/time"):
    print("memory_bound: /usr/bin/time is missing (apt-get install time): skipped", file=sys.stderr)
    sys.exit(SKIP)
if sanitized(cli):
    print("memory_bound: the CLI is built with AddressSanitizer (its quarantine grows with the work): skipped",
          file=sys.stderr)
    sys.exit(SKIP)

tmp = scratch_dir("rdmatel_memory_")
# The same traffic (4 hosts x 4 storage servers x 4 queues, header-snapped) at 40,000 I/Os a
# second, for 1 and 4 seconds.
CAPTURES = {"short": (40000, 1), "long": (160000, 4)}
paths = {}
for name, (ios, seconds) in CAPTURES.items():
    paths[name] = os.path.join(tmp, name + ".pcapng")
    p = subprocess.run([synth, "--scenario", "nvme-large", "--ios", str(ios), "--duration-s", str(seconds),
                        "--seed", "7", "--out", paths[name]], capture_output=True, text=True, timeout=600)
    if p.returncode != 0:
        fail(f"rdmatel-synth: {p.stderr}")
sizes = {name: os.path.getsize(path) for name, path in paths.items()}
if sizes["long"] < 3.5 * sizes["short"] or sizes["short"] < 64 << 20:
    fail(f"the generated captures are not what this test needs: {sizes}")
allowed_kb = (sizes["long"] - sizes["short"]) // 4 // 1024


def peak_kb_and_lines(args, capture):
    """Runs the CLI on `capture`; its peak resident set in KiB and the lines it printed."""
    out = os.path.join(tmp, "out")
    times = os.path.join(tmp, "time")
    with open(out, "wb") as o:
        p = subprocess.run(["/usr/bin/time", "-f", "%M", "-o", times, cli, *args, capture, "--no-progress"],
                           stdout=o, stderr=subprocess.PIPE, timeout=600)
    if p.returncode != 0:
        fail(f"rdmatel {' '.join(args)} {capture}: exit status {p.returncode}: {p.stderr.decode()[-800:]}")
    with open(times) as f:
        peak = int(f.read().split()[-1])
    with open(out, "rb") as f:
        lines = sum(1 for _ in f)
    return peak, lines


problems = []
for args in (["analyze", "--threads", "1"], ["analyze", "--threads", "2"], ["export", "io"],
             ["export", "messages"]):
    label = " ".join(args)
    short_kb, short_lines = peak_kb_and_lines(args, paths["short"])
    long_kb, long_lines = peak_kb_and_lines(args, paths["long"])
    print(f"{label}: peak {short_kb // 1024} MiB on {sizes['short'] >> 20} MB, {long_kb // 1024} MiB on "
          f"{sizes['long'] >> 20} MB (growth allowed: {allowed_kb // 1024} MiB)")
    # The runs measured the whole captures: records scale with the traffic.
    if args[0] == "export" and not long_lines > 3 * short_lines:
        problems.append(f"{label}: {short_lines} and {long_lines} records: the longer capture was not measured")
    if long_kb - short_kb > allowed_kb:
        problems.append(f"{label}: peak memory grew by {(long_kb - short_kb) // 1024} MiB from the "
                        f"{sizes['short'] >> 20} MB capture to the {sizes['long'] >> 20} MB one of the same "
                        f"traffic (allowed {allowed_kb // 1024} MiB): memory follows the capture's size")
fail_if(problems, "memory bounded by state")
print("memory_bound: ok")
