#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The generator refuses a capture larger than --max-size before writing anything (samples/synth/
README.md): losses resend whole go-back-N windows, and a lossy write-flows run with many messages
per flow grew to tens of GB and filled a disk.

Ground truth is the file itself: each scenario is first written without a limit and its size
taken; then the same command with --max-size a tenth of a percent below that size must exit 2,
say how large the capture would be and write no file, and with --max-size a tenth of a percent
above it must write the same bytes. So the size worked out in advance is the real one (within
the few hundred bytes of pcapng section and interface headers it leaves out).

Usage: test_synth_max_size.py RDMATEL_SYNTH"""
import filecmp
import os
import subprocess
import sys

from rdmatel_testlib import fail, fail_if, scratch_dir

if len(sys.argv) != 2:
    fail(__doc__)
synth = sys.argv[1]
work = scratch_dir("rdmatel_synth_max_size_")

# Whole frames and header-only snaps, IPv4 and IPv6 with tags, a lossy run with resends.
SCENARIOS = [
    ["--scenario", "write-flows", "--seed", "3"],
    ["--scenario", "nvme-2point", "--seed", "4", "--snaplen", "128", "--ipv6", "--vlan", "2"],
    ["--scenario", "mixed", "--seed", "5", "--loss", "0.02", "--points", "3"],
]

problems = []
for i, args in enumerate(SCENARIOS):
    reference = os.path.join(work, f"ref{i}.pcapng")
    subprocess.run([synth, *args, "--out", reference], check=True, stdout=subprocess.DEVNULL)
    size = os.path.getsize(reference)
    below, above = size * 0.999 / 1e9, size * 1.001 / 1e9

    refused = os.path.join(work, f"refused{i}.pcapng")
    r = subprocess.run([synth, *args, "--out", refused, "--max-size", f"{below:.9f}"], capture_output=True, text=True)
    if r.returncode != 2:
        problems.append(f"{args}: --max-size just below the real size ({size} bytes): exit {r.returncode}, not 2")
    if "would take" not in r.stderr or "--max-size" not in r.stderr:
        problems.append(f"{args}: refused without saying why: {r.stderr.strip()!r}")
    if os.path.exists(refused) or os.path.exists(refused.replace(".pcapng", ".truth.json")):
        problems.append(f"{args}: a refused capture left files behind")

    allowed = os.path.join(work, f"allowed{i}.pcapng")
    r = subprocess.run([synth, *args, "--out", allowed, "--max-size", f"{above:.9f}"], capture_output=True, text=True)
    if r.returncode != 0:
        problems.append(f"{args}: --max-size just above the real size ({size} bytes): exit {r.returncode}: {r.stderr}")
    elif not filecmp.cmp(reference, allowed, shallow=False):
        problems.append(f"{args}: with --max-size the capture differs from the one without")
    print(f"{' '.join(args)}: {size} bytes; refused below, written above")

r = subprocess.run([synth, "--scenario", "write-flows", "--out", os.path.join(work, "x.pcapng"), "--max-size", "0"],
                   capture_output=True, text=True)
if r.returncode == 0 or "--max-size" not in r.stderr:
    problems.append(f"--max-size 0 accepted or not named: exit {r.returncode}, {r.stderr.strip()!r}")

fail_if(problems, "problems")
print("synth_max_size: ok")
