#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""`rdmatel export KIND` runs only the components that make KIND's records or feed the others
(engine/src/core/component_selection.h); `--all-components` runs every one. The records must not
change: for every export kind, with one thread and two, on the samples and on generated captures
of the conditions real captures have (clock offsets, 1-5 points, loss, ECN and PFC, jitter, IPv6
with VLAN tags, ring files given together, tiny limits that evict), standard output and exit
status are byte-identical, and every warning of the export is one --all-components prints too.

It also checks that components really are left out, so the comparison compares something: with
--max-messages 5, `export io` does not warn that messages were reported early (the messages
component did not run) while `export io --all-components` does, and `export messages` does.

Usage: test_component_selection.py RDMATEL_SYNTH RDMATEL SAMPLES_DIR [REAL_CAPTURE...]"""
import glob
import os
import subprocess
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "support"))
from pcapng_edit import Capture  # noqa: E402
from rdmatel_testlib import fail, fail_if, first_difference, generate_capture, scratch_dir  # noqa: E402

if len(sys.argv) < 4:
    fail(__doc__)
synth, cli, samples = sys.argv[1:4]
real = sys.argv[4:]
tmp = scratch_dir("rdmatel_selection_")
problems = []
compared = {}  # records compared per kind (each kind must have some somewhere)

KINDS = [
    ["io"],
    ["io_points", "--point-local"],
    ["messages"],
    ["flows", "--period", "0.01"],
    ["congestion"],
    ["paths", "--estimate-offsets"],
    ["offsets"],
    ["alerts", "--alert", "iol1>100", "--alert", "fnr>0.001", "--alert", "rtt>20", "--period", "0.005"],
    ["diagnosis"],
]
GENERATED = {
    "offset_3pt_loss": ["--scenario", "nvme-3point", "--clock-offset", "spine1=2000000000", "--loss", "0.02"],
    "cross_5pt_jitter": ["--scenario", "nvme-2point", "--points", "5", "--cross", "--jitter-ns", "400"],
    "mixed_ecn_pfc": ["--scenario", "mixed", "--points", "3", "--ecn-mark", "leafA-gpu:spine1=0.3",
                      "--pfc-pause", "spine1:3=20@0.001", "--vlan", "1"],
    "flows_drop_wrap": ["--scenario", "write-flows", "--points", "3", "--psn-wrap", "--flows", "6",
                        "--messages", "30", "--drop-between", "spine1:leafB-gpu=0.05"],
    "midstream_ipv6_vlan2": ["--scenario", "nvme-midstream", "--points", "3", "--routed", "--loss", "0.02"],
}


for kind in KINDS:
    compared[kind[0]] = 0


def export(captures, kind, threads, *extra):
    cmd = [cli, "export", kind[0], *captures, *kind[1:], "--no-progress", "--threads", str(threads), *extra]
    p = subprocess.run(cmd, capture_output=True, timeout=600)
    return p.returncode, p.stdout, p.stderr


def warnings(stderr):
    return set(stderr.decode(errors="replace").splitlines())


def compare(label, captures, extra=(), kinds=KINDS):
    for kind in kinds:
        for threads in (1, 2):
            chosen = export(captures, kind, threads, *extra)
            every = export(captures, kind, threads, *extra, "--all-components")
            where = f"{label}: export {' '.join(kind)} --threads {threads} {' '.join(extra)}"
            if chosen[0] != every[0]:
                problems.append(f"{where}: exit {chosen[0]} vs {every[0]} with --all-components")
            if chosen[1] != every[1]:
                problems.append(f"{where}: records differ from --all-components: {first_difference(chosen[1], every[1])}")
            compared[kind[0]] += len(chosen[1].splitlines())
            extra_lines = warnings(chosen[2]) - warnings(every[2])
            if extra_lines:
                problems.append(f"{where}: warnings --all-components does not print: {sorted(extra_lines)[:2]}")


# 1. The samples, each alone; the real captures.
sample_files = sorted(glob.glob(os.path.join(samples, "*.pcapng")))
if not sample_files:
    fail(f"no samples in {samples}")
for s in sample_files:
    compare(os.path.basename(s), [s])
for r in real:
    compare(os.path.basename(r), [r])

# 2. Generated captures of the conditions real captures have; tiny limits that evict.
for name, args in GENERATED.items():
    compare(name, [generate_capture(synth, tmp, name, args, seed=11, ios=120)])
mixed = os.path.join(samples, "mixed.pcapng")
compare("mixed, tiny limits", [mixed], ("--max-messages", "40", "--max-ios", "15", "--max-reorder-packets", "300"))

# 3. Ring files given together.
ring_source = generate_capture(synth, tmp, "ring_source", ["--scenario", "mixed", "--points", "2", "--loss", "0.01"],
                               seed=5, ios=120)
parts = Capture(ring_source).split(os.path.join(tmp, "ring"), 400)
compare("ring files", parts, kinds=KINDS[:5])

# 4. Components are really left out: the messages component's eviction warning.
evicts = ("--max-messages", "5")
marker = b"RDMA messages open at once"
io_chosen = export([mixed], ["io"], 1, *evicts)
io_every = export([mixed], ["io"], 1, *evicts, "--all-components")
msg_chosen = export([mixed], ["messages"], 1, *evicts)
print(f"eviction warning: export io {marker in io_chosen[2]}, export io --all-components {marker in io_every[2]}, "
      f"export messages {marker in msg_chosen[2]}")
if marker in io_chosen[2] or marker not in io_every[2] or marker not in msg_chosen[2]:
    problems.append("export io should run no messages component (no eviction warning) and --all-components and "
                    "export messages should")

print("lines compared per kind: " + ", ".join(f"{k} {n}" for k, n in compared.items()))
problems += [f"export {k}: no records on any capture (nothing compared)" for k, n in compared.items() if n < 2]
fail_if(problems, "differences between an export and the same export with every component")
print("component selection: every export byte-identical to the one with every component")
