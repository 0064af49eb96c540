# SPDX-License-Identifier: GPL-2.0-or-later
"""A point that missed one NVMe completion (a capture's or a mirror's drop, no interface
statistics to say so): the generator's lossless captures with the compute point's copy of one
completion deleted, of an I/O whose CID its queue uses again later. NVMe reuses a CID only once
its command has completed, so the next command with it tells the point missed that completion:
that I/O lacks its compute-side metrics, with a warning, and every other I/O keeps the ground
truth's (before, each later I/O of the CID took its successor's completion: IOL1 in milliseconds
for microseconds, and the diagnosis blamed the network). With the plugin too."""
import json
import os
import subprocess
import sys

from rdmatel_testlib import Tshark, fail_if, run_cli, scratch_dir

synth, cli, plugin = sys.argv[1], sys.argv[2], sys.argv[3]
tmp = scratch_dir("rdmatel_missed_")
problems = []
METRICS = ("iol1_us", "iol2_us", "rtt_us", "iol_us", "dal_us", "dpl_us")
checked = 0
for points, seed in ((2, 4), (2, 1), (4, 4), (1, 4)):
    name = f"p{points}s{seed}"
    full = os.path.join(tmp, name + ".pcapng")
    subprocess.run([synth, "--scenario", "nvme-2point", "--points", str(points), "--seed", str(seed), "--loss", "0",
                    "--out", full], check=True, capture_output=True)
    with open(full.replace(".pcapng", ".truth.json")) as f:
        truth = json.load(f)
    ios = [i for i in truth["ios"] if i.get("complete") and not i.get("admin") and i.get("rsp_frame")]
    # The compute point's copy of the completion: the truth's rsp_frame is the compute side's.
    victim = next(i for i in ios
                  if sum(1 for j in truth["ios"] if j["qpn"] == i["qpn"] and j["cid"] == i["cid"] and
                         j.get("cmd_frame", 0) > i["rsp_frame"]) >= 2)
    cut = os.path.join(tmp, name + "_missed.pcapng")
    subprocess.run(["editcap", full, cut, str(victim["rsp_frame"])], check=True, capture_output=True)
    p = run_cli(cli, "export", "io", cut, "--no-progress")
    got = {(r["qpn"], r["cid"], r["cmd_psn"]): r for r in map(json.loads, p.stdout.splitlines())}
    if "had their CID reused before a point saw their completion" not in p.stderr:
        problems.append(f"{name}: no warning of the missed completion: {p.stderr[:300]}")
    for i in truth["ios"]:
        r = got.get((i["qpn"], i["cid"], i["cmd_psn"]))
        if r is None:
            problems.append(f"{name}: I/O {i['qpn']} cid {i['cid']} psn {i['cmd_psn']} missing")
            continue
        checked += 1
        if i is victim:
            for m in ("iol1_us", "rtt_us"):
                if r.get(m) is not None and (points > 1 or m == "iol1_us"):
                    problems.append(f"{name}: the I/O whose completion was deleted has {m} {r.get(m)}")
            continue
        for m in METRICS:
            if r.get(m) != i.get(m):
                problems.append(f"{name}: {i['op']} cid {i['cid']} psn {i['cmd_psn']}: {m} {r.get(m)} truth {i.get(m)}")
    # The plugin: every frame's RTT where the truth has one (frame numbers after the deleted one
    # move back by one).
    if points > 1:
        ts = Tshark(plugin)
        try:
            rows = ts.fields(cut, ["frame.number", "rdmatel.rtt"], "rdmatel.rtt")
        finally:
            ts.close()
        shown = {int(r["frame.number"]): float(r["rdmatel.rtt"].split("|")[0]) for r in rows}
        for i in ios:
            if i is victim or i.get("rtt_us") is None:
                continue
            frame = i["rsp_frame"] - (1 if i["rsp_frame"] > victim["rsp_frame"] else 0)
            if frame not in shown or abs(shown[frame] - i["rtt_us"]) > 0.0015:
                problems.append(f"{name}: plugin frame {frame}: rtt {shown.get(frame)} truth {i['rtt_us']}")
fail_if(problems, "differences after one missed completion")
print(f"OK: {checked} I/Os as the truth has them, one completion missed at the compute point")
