# SPDX-License-Identifier: GPL-2.0-or-later
"""Captures nobody has looked at: the generator makes lossy variants of every scenario with
fresh seeds (loss on every link, PSN wrap, other path MTUs, jitter, three points, IPv6), and
the CLI (and, for two of them, tshark with the plugin) must match their ground truth exactly."""
import os
import subprocess
import sys

from rdmatel_testlib import fail, fail_if, scratch_dir

synth, cli, plugin = sys.argv[1], sys.argv[2], sys.argv[3]
seed_base = int(os.environ.get("RDMATEL_STRESS_SEED", "101"))
here = os.path.dirname(os.path.abspath(__file__))
VARIANTS = [
    ["--scenario", "nvme-2point", "--loss", "0.03", "--ios", "120"],
    ["--scenario", "nvme-3point", "--loss", "0.02", "--psn-wrap", "--jitter-ns", "400", "--ios", "80"],
    ["--scenario", "nvme-midstream", "--loss", "0.03", "--pmtu", "2048", "--ios", "100"],
    ["--scenario", "nvme-1point", "--loss", "0.02", "--ios", "100"],
    ["--scenario", "write-flows", "--loss", "0.04", "--pmtu", "1024"],
    ["--scenario", "mixed", "--loss", "0.03", "--order", "blocks"],
]

tmp = scratch_dir("rdmatel_stress_")
caps = []
for i, v in enumerate(VARIANTS):
    out = os.path.join(tmp, f"stress{i}.pcapng")
    p = subprocess.run([synth, *v, "--seed", str(seed_base + i), "--out", out], capture_output=True, text=True,
                       timeout=300)
    if p.returncode != 0:
        fail(f"generator failed for {v}: {p.stderr}")
    caps.append(out)

problems = []
nvme = [c for c, v in zip(caps, VARIANTS) if "write-flows" not in v]
for script, args in (("test_cli_truth.py", [cli, *nvme]), ("test_messages_truth.py", [cli, *caps]),
                     ("test_tshark_truth.py", [plugin, caps[0], caps[5]]),
                     ("test_tshark_messages.py", [plugin, caps[4], caps[5]])):
    p = subprocess.run([sys.executable, os.path.join(here, script), *args], capture_output=True, text=True,
                       timeout=1200)
    print(f"{script}: {p.stdout.strip().splitlines()[-1] if p.stdout.strip() else ''}")
    if p.returncode != 0:
        problems.append(f"{script} (seeds from {seed_base}):\n{p.stdout[-3000:]}{p.stderr[-2000:]}")
fail_if(problems, f"checks failed on generated captures (kept in {tmp})")
print(f"OK: {len(caps)} fresh lossy captures match their ground truth")
