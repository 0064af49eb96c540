#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""--threads 2 gives byte for byte what one thread gives: standard output, standard error and exit
status of `analyze` (plain, --estimate-offsets, --by gpu) and of every `export` kind (JSONL and
CSV), on the shipped samples, the real captures when given, and generated captures of the
conditions real captures have (clock offsets, 1-5 points, loss, ECN marks and CNPs, PFC pauses
and a storm, jitter beyond the packet spacing, IPv6 with VLAN tags, ring files given together,
a file given twice, tiny limits that evict, key flows and port polling, alerts and spikes).
It also checks that --threads 2 really runs a second thread (the process's thread count while it
reads a larger capture), so the comparison compares something.

Usage: test_threads.py RDMATEL_SYNTH RDMATEL SAMPLES_DIR [REAL_CAPTURE...]"""
import glob
import gzip
import os
import subprocess
import sys
import time

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "support"))
from pcapng_edit import Capture  # noqa: E402
from rdmatel_testlib import fail, fail_if, first_difference, generate_capture, scratch_dir  # noqa: E402

if len(sys.argv) < 4:
    fail(__doc__)
synth, cli, samples = sys.argv[1], sys.argv[2], sys.argv[3]
real = sys.argv[4:]
tmp = scratch_dir("rdmatel_threads_")
problems = []

GENERATED = {
    "offset_3pt_loss": ["--scenario", "nvme-3point", "--clock-offset", "spine1=2000000000", "--loss", "0.02"],
    "cross_5pt_jitter": ["--scenario", "nvme-2point", "--points", "5", "--cross", "--jitter-ns", "400",
                         "--clock-offset", "leafA-up=-5000000"],
    "mixed_ecn_pfc": ["--scenario", "mixed", "--points", "3", "--ecn-mark", "leafA-gpu:spine1=0.3",
                      "--pfc-pause", "spine1:3=20@0.001", "--pfc-storm", "leafA-gpu:3=120@0.002", "--vlan", "1"],
    "flows_drop_wrap": ["--scenario", "write-flows", "--points", "3", "--psn-wrap", "--pmtu", "1024",
                        "--drop-between", "spine1:leafB-gpu=0.05", "--flows", "8", "--messages", "30"],
    "midstream_ipv6_vlan2": ["--scenario", "nvme-midstream", "--points", "3", "--routed", "--loss", "0.02"],
    "one_point": ["--scenario", "nvme-1point", "--incomplete", "0.1"],
}
# Options per run; each runs with --threads 1 and 2.
VARIANTS = [
    ["analyze"],
    ["analyze", "--estimate-offsets", "--alert", "rtt>20", "--alert", "fct>50"],
    ["export", "io"],
    ["export", "io_points", "--point-local"],
    ["export", "messages"],
    ["export", "messages", "--format", "csv"],
    ["export", "flows", "--period", "0.01"],
    ["export", "congestion"],
    ["export", "paths", "--estimate-offsets"],
    ["export", "offsets"],
    ["export", "alerts", "--alert", "iol1>100", "--alert", "fnr>0.001", "--period", "0.005"],
    ["export", "diagnosis"],
    # Tiny limits: evictions and their warnings in the same place.
    ["analyze", "--max-messages", "40", "--max-ios", "15", "--max-reorder-packets", "300", "--max-flows", "24"],
    # Key flows and polling decide on the reading thread, per packet.
    ["export", "messages", "--key-flow", "10.1.0.0/16", "--poll-ports", "1", "--period", "0.002"],
]


def generate(name, args):
    return generate_capture(synth, tmp, name, args, seed=7, ios=120)


def run(captures, variant, threads):
    cmd = [cli, variant[0], *variant[1:2], *captures, *variant[2:], "--no-progress", "--threads", str(threads)]
    if variant[0] == "analyze":
        cmd = [cli, "analyze", *captures, *variant[1:], "--no-progress", "--threads", str(threads)]
    p = subprocess.run(cmd, capture_output=True, timeout=600)
    return p.returncode, p.stdout, p.stderr


def compare(label, captures, variants=VARIANTS):
    for v in variants:
        one, two = run(captures, v, 1), run(captures, v, 2)
        for what, i in (("exit status", 0), ("output", 1), ("warnings", 2)):
            if one[i] != two[i]:
                diff = first_difference(one[i], two[i]) if i else f"{one[0]} vs {two[0]}"
                problems.append(f"{label} {' '.join(v)}: {what} differs with --threads 2: {diff}")
        if one[0] == 0 and not one[1] and v[0] == "analyze":
            problems.append(f"{label} {' '.join(v)}: printed nothing")


def max_threads_while_running(cmd):
    """The most threads the process had at once (polled from /proc while it runs)."""
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    most = 0
    while p.poll() is None:
        try:
            with open(f"/proc/{p.pid}/status") as f:
                for line in f:
                    if line.startswith("Threads:"):
                        most = max(most, int(line.split()[1]))
        except OSError:
            pass
        time.sleep(0.005)
    return p.returncode, most


# 1. The samples, each alone; the real captures.
sample_files = sorted(glob.glob(os.path.join(samples, "*.pcapng")))
if not sample_files:
    fail(f"no samples in {samples}")
for s in sample_files:
    extra = [["analyze", "--by", "gpu", "--gpu-map", os.path.join(samples, "gpu_map.csv")]] if "mixed" in s else []
    compare(os.path.basename(s), [s], VARIANTS + extra)
for r in real:
    compare(os.path.basename(r), [r], VARIANTS[:6])

# 2. Generated captures of the conditions real captures have.
for name, args in GENERATED.items():
    compare(name, [generate(name, args)])

# 3. Ring files given together (the reader merges them), and a file given twice (duplicates).
ring_source = generate("ring_source", ["--scenario", "mixed", "--points", "2", "--loss", "0.01"])
ring = Capture(ring_source)
parts = ring.split(os.path.join(tmp, "ring"), len(ring.packets) // 4 + 1)
compare("ring files", parts, VARIANTS[:5])
compare("file given twice", [ring_source, ring_source], VARIANTS[:3])

# 4. The second thread is real: more threads while --threads 2 reads a capture of ~0.5 s.
big = os.path.join(tmp, "big.pcapng")
subprocess.run([synth, "--scenario", "nvme-large", "--ios", "20000", "--seed", "3", "--out", big], check=True,
               capture_output=True, timeout=300)
rc1, t1 = max_threads_while_running([cli, "analyze", big, "--no-progress", "--threads", "1"])
rc2, t2 = max_threads_while_running([cli, "analyze", big, "--no-progress", "--threads", "2"])
print(f"threads seen: --threads 1: {t1}, --threads 2: {t2}")
if rc1 or rc2 or not (t1 == 1 and t2 >= 2):
    problems.append(f"--threads 2 ran with {t2} threads at most (--threads 1: {t1}); exits {rc1}, {rc2}")
compare("nvme-large", [big], [["analyze"], ["export", "messages"]])

# 5. Compressed captures (libwiretap, read ahead on a thread of their own with --threads 2): ring
# files gzipped, each with its own interfaces, and the larger capture. `export io` needs no
# second-thread component, so a second thread seen while it reads the gzipped capture is the
# reading one.
def gzipped(path):
    with open(path, "rb") as f, gzip.open(path + ".gz", "wb", compresslevel=1) as out:
        out.write(f.read())
    return path + ".gz"


compare("gzipped ring files", [gzipped(p) for p in parts], VARIANTS[:5])
big_gz = gzipped(big)
compare("gzipped nvme-large", [big_gz], [["analyze"], ["export", "io"]])
rc1, t1 = max_threads_while_running([cli, "export", "io", big_gz, "--no-progress", "--threads", "1"])
rc2, t2 = max_threads_while_running([cli, "export", "io", big_gz, "--no-progress", "--threads", "2"])
print(f"threads seen reading a gzipped capture, export io: --threads 1: {t1}, --threads 2: {t2}")
if rc1 or rc2 or not (t1 == 1 and t2 >= 2):
    problems.append(f"export io --threads 2 of a gzipped capture ran with {t2} threads at most (--threads 1: {t1})")
# The same packets plain and gzipped: the same records (the report names the format, the records not).
plain = subprocess.run([cli, "export", "io", big, "--no-progress", "--threads", "2"], capture_output=True, timeout=600)
packed = subprocess.run([cli, "export", "io", big_gz, "--no-progress", "--threads", "2"], capture_output=True, timeout=600)
if plain.stdout != packed.stdout or plain.returncode != packed.returncode:
    problems.append("export io of the gzipped capture differs from the plain one: " +
                    first_difference(plain.stdout, packed.stdout))

fail_if(problems, "differences between one and two threads")
print("threads: every output byte-identical with --threads 2")
