# SPDX-License-Identifier: GPL-2.0-or-later
"""A capture of 4 or 5 observation points that starts while I/Os are in flight (the generator's
lossless capture with its first frames cut off, as a ring whose oldest file was deleted leaves
it): the points do not all start at once, so some I/Os were seen only at points farther from the
host or the storage server than the compute or storage point. Their sides must still be the
ground truth's compute and storage points (a side that lost the I/O to the cut has no stamps, so
its metrics are absent), and every metric given must equal the truth's. Before, such I/Os were
finished before the compute point was compared with the others, and a leaf uplink or a spine
was taken for their compute or storage side (IOL1 257.99 us for the truth's 259.04). The
plugin's -z tables must equal analyze's on these captures."""
import json
import os
import subprocess
import sys

from rdmatel_testlib import fail, fail_if, run_cli, scratch_dir

synth, cli, plugin = sys.argv[1], sys.argv[2], sys.argv[3]
here = os.path.dirname(os.path.abspath(__file__))
tmp = scratch_dir("rdmatel_midio_")
problems = []
METRICS = ("dal_us", "dpl_us", "iol1_us", "iol2_us", "rtt_us")
checked = with_metrics = 0
cuts = []
for points in (4, 5):
    full = os.path.join(tmp, f"p{points}.pcapng")
    subprocess.run([synth, "--scenario", "nvme-2point", "--points", str(points), "--seed", "2", "--ios", "150",
                    "--loss", "0", "--out", full], check=True, capture_output=True)
    with open(full.replace(".pcapng", ".truth.json")) as f:
        truth = {(i["qpn"], i["cid"], i["cmd_psn"]): i for i in json.load(f)["ios"]}
    for first in (1501, 2001, 2501, 3001):
        cut = os.path.join(tmp, f"p{points}_from{first}.pcapng")
        subprocess.run(["editcap", "-r", full, cut, f"{first}-999999"], check=True, capture_output=True)
        cuts.append(cut)
        for r in map(json.loads, run_cli(cli, "export", "io", cut, "--no-progress").stdout.splitlines()):
            t = truth.get((r["qpn"], r["cid"], r.get("cmd_psn")))
            if t is None:
                continue
            checked += 1
            where = f"{os.path.basename(cut)}: {r['op']} cid {r['cid']} psn {r.get('cmd_psn')}"
            for side in ("compute_point", "storage_point"):
                if r.get(side) is not None and r[side] != t.get(side):
                    problems.append(f"{where}: {side} {r[side]}, truth {t.get(side)}")
            for m in METRICS:
                if r.get(m) is not None:
                    with_metrics += 1
                    if r[m] != t.get(m):
                        problems.append(f"{where}: {m} {r[m]} truth {t.get(m)}")
if checked < 1000 or with_metrics < 2000:
    fail(f"too little checked: {checked} I/Os, {with_metrics} metrics")
p = subprocess.run([sys.executable, os.path.join(here, "test_tshark_vs_analyze.py"), cli, plugin, cuts[1], cuts[6]],
                   capture_output=True, text=True, timeout=900)
if p.returncode != 0:
    problems.append(f"plugin tables against analyze:\n{p.stdout[-2000:]}{p.stderr[-1000:]}")
fail_if(problems, "differences in captures that start mid-I/O")
print(f"OK: {checked} I/Os in {len(cuts)} cut captures, {with_metrics} metrics as the truth has them; "
      "plugin tables equal analyze's")
