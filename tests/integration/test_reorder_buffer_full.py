# SPDX-License-Identifier: GPL-2.0-or-later
"""A point whose reorder buffer (--max-reorder-packets) holds less than the reorder window of its
packets: the window is cut at every point, not at that point alone.

The capture: NVMe-oF and RDMA WRITE flows at three points, IPv6, 8 % loss on every link (go-back-N
resends: 847 k packets in 70 ms, header-only snaps). leafB-stor's buffer filled, and it alone was
handled ahead of the others by up to the window. A Connect's completion at leafB-stor waited for
its queue pair to be paired by the host's ACK, which leafA-gpu carries and which was handled
long after; the target resent the completion twice (the ACK lost on its way), and the resend 400
us later was taken for T4: IOL2 453 us for 53, RTT -391 us.

Checks: every I/O equals the generator's truth (test_cli_truth.py), no negative latency, and the
warning names the cut window. Args: SYNTH CLI."""
import os
import subprocess
import sys

from rdmatel_testlib import fail_if, run_cli, scratch_dir

synth, cli = sys.argv[1], sys.argv[2]
here = os.path.dirname(os.path.abspath(__file__))
tmp = scratch_dir("rdmatel_reorder_full_")
cap = os.path.join(tmp, "full.pcapng")
subprocess.run([synth, "--scenario", "mixed", "--ios", "153", "--loss", "0.08", "--points", "3", "--ipv6", "--pmtu",
                "1024", "--flows", "3", "--messages", "8", "--snaplen", "128", "--seed", "27", "--out", cap],
               check=True, capture_output=True, timeout=600)
problems = []
p = run_cli(cli, "export", "io", cap, "--no-progress")
if "waiting for reordering at point" not in p.stderr or "the reorder window is cut to" not in p.stderr:
    problems.append(f"no warning that the reorder window was cut: {p.stderr.strip()[:400]}")
if "negative latency" in p.stderr:
    problems.append(f"negative latencies: {p.stderr.strip()[:400]}")
truth = subprocess.run([sys.executable, os.path.join(here, "test_cli_truth.py"), cli, cap], capture_output=True,
                       text=True, timeout=1200)
if truth.returncode != 0:
    problems.append("I/Os differ from the truth:\n" + "\n".join(truth.stdout.strip().splitlines()[:10]))
fail_if(problems, "problems with a reorder buffer smaller than the window")
print("OK: a full reorder buffer cuts the window at every point; every I/O equals the truth")
