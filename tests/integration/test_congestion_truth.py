# SPDX-License-Identifier: GPL-2.0-or-later
"""export congestion (kinds ecn, cnp, pfc) and the congestion timeline of export flows against
the generator's ground truth (SPEC §6): CE marking from a congested hop on (rdmatel-synth
--ecn-mark), the CNPs the receivers answer with, PFC pause bursts with a resume and a storm
(--pfc-pause, --pfc-storm) at given points, on NVMe-oF and on GPU write flows, with unsynchronised
clocks and dumpcap block order. The plugin's CE, CNP and PFC frames are counted against the
same truth. Expected values come from the truth file (what the generator emitted and saw at
each point, the PFC figures worked out by hand there), never from rdmatel."""
import collections
import json
import os
import subprocess
import sys

from rdmatel_testlib import Tshark, fail_if, load_truth, run_cli, scratch_dir

cli, synth = sys.argv[1], sys.argv[2]
plugin = sys.argv[3] if len(sys.argv) > 3 else None
tmp = scratch_dir("rdmatel_congtruth_")
problems = []


def generate(name, *args):
    out = os.path.join(tmp, name + ".pcapng")
    subprocess.run([synth, "--out", out, *args], check=True, capture_output=True, timeout=300)
    return out


def export(kind, cap, *extra):
    p = run_cli(cli, "export", kind, cap, "--format", "jsonl", "--no-progress", *extra)
    if p.returncode != 0:
        problems.append(f"export {kind} {os.path.basename(cap)}: exit {p.returncode}: {p.stderr[:300]}")
    return [json.loads(line) for line in p.stdout.splitlines() if line.strip()]


def compare(label, want, have, fields):
    for k in sorted(set(want) - set(have)):
        problems.append(f"{label}: {k} missing (truth {want[k]})")
    for k in sorted(set(have) - set(want)):
        problems.append(f"{label}: {k} not in the truth: {have[k]}")
    for k in sorted(set(want) & set(have)):
        for f, tf in fields:
            if have[k].get(f) != want[k][tf]:
                problems.append(f"{label}: {k} {f} = {have[k].get(f)!r}, truth {want[k][tf]!r}")


def check(name, cap):
    truth = load_truth(cap)
    cong = truth["congestion"]
    got = export("congestion", cap)
    # ECN per flow and point: every RoCE packet of the flow, the CE-marked ones, its CNPs.
    want = {(t["src"], t["dst"], t["dst_qpn"], t["point"]): t for t in cong if t["kind"] == "ecn"}
    have = {(r["src"], r["dst"], r["dst_qpn"], r["point"]): r for r in got if r["kind"] == "ecn"}
    compare(f"{name} ecn", want, have,
            [("packets", "packets"), ("ce_packets", "ce_packets"), ("cnp_packets", "cnp_packets")])
    # The flow's class: the VLAN tag's priority (absent where untagged) and the DSCP.
    for k in sorted(set(want) & set(have)):
        for f in ("priority", "dscp"):
            if have[k].get(f) != want[k].get(f):
                problems.append(f"{name} ecn {k}: {f} = {have[k].get(f)!r}, truth {want[k].get(f)!r}")
    for k, r in have.items():
        if r["packets"] and abs(r["ce_ratio"] - r["ce_packets"] / r["packets"]) > 1e-9:
            problems.append(f"{name} ecn {k}: ce_ratio {r['ce_ratio']} is not ce_packets / packets")
    ce_total = sum(t["ce_packets"] for t in want.values())
    # CNPs per IP pair and point.
    want = {(t["src"], t["dst"], t["point"]): t for t in cong if t["kind"] == "cnp"}
    have = {(r["src"], r["dst"], r["point"]): r for r in got if r["kind"] == "cnp"}
    compare(f"{name} cnp", want, have, [("cnps", "cnps")])
    cnp_total = sum(t["cnps"] for t in want.values())
    # PFC per point and priority (pause times in µs with three decimals, from ns).
    want = {(t["point"], t["priority"]): t for t in cong if t["kind"] == "pfc"}
    for t in want.values():
        t["pause_us"] = round(t["pause_ns"] / 1000, 3)
        t["longest_pause_us"] = round(t["longest_pause_ns"] / 1000, 3)
    have = {(r["point"], r["priority"]): r for r in got if r["kind"] == "pfc"}
    compare(f"{name} pfc", want, have,
            [(f, f) for f in ("frames", "pause_frames", "resume_frames", "quanta", "pause_us", "longest_pause_us",
                              "storm")])
    # The congestion timeline: per flow, point and period.
    want = {(t["src"], t["dst"], t["dst_qpn"], t["point"], t["period_start_ns"]): t for t in truth["flows"]}
    have = {(r["src"], r["dst"], r["dst_qpn"], r["point"], r["period_start_ns"]): r for r in export("flows", cap)}
    compare(f"{name} flows", want, have,
            [("packets", "packets"), ("naks", "naks"), ("ce_packets", "ce_packets"), ("cnps", "cnps"),
             ("pfc_pauses", "pfc_pauses")])
    return ce_total, cnp_total, sum(t["frames"] for t in cong if t["kind"] == "pfc")


cases = {
    # Compute leaf -> spine congested (10 %), and the storage leaf -> spine (5 %); a burst with a
    # resume at the spine, a storm at the storage leaf (120 frames: 11.9 ms > 10 ms), a short
    # burst at the compute leaf. The spine's clock 2 ms ahead.
    "nvme3": ["--scenario", "nvme-3point", "--seed", "21", "--ios", "300", "--order", "blocks",
              "--ecn-mark", "leafA-gpu:spine1=0.1", "--ecn-mark", "leafB-stor:spine1=0.05",
              "--pfc-pause", "spine1:3=5@0.002", "--pfc-storm", "leafB-stor:3=120@0.004",
              "--pfc-pause", "leafA-gpu:0=2@0.001", "--clock-offset", "spine1=2000000"],
    # GPU write flows across two points, every packet marked on the way (CNPs rate-limited per
    # QP), periods of 1 s with the traffic around a second boundary.
    # Two VLAN tags of priority 5: every ecn record names it.
    "flows2": ["--scenario", "write-flows", "--seed", "4", "--flows", "6", "--messages", "40",
               "--vlan", "2", "--pcp", "5", "--ecn-mark", "leafA-gpu:leafB-gpu=1", "--pfc-storm", "leafA-gpu:3=30@0.001"],
}
totals = {}
for name, args in cases.items():
    cap = generate(name, *args)
    totals[name] = (cap, check(name, cap))
    ce, cnp, pfc = totals[name][1]
    if ce == 0 or cnp == 0 or pfc == 0:
        problems.append(f"{name}: the truth has {ce} CE marks, {cnp} CNPs, {pfc} PFC frames: nothing would be tested")

# A storm at the default threshold: the storm record, and a warning.
p = run_cli(cli, "export", "congestion", totals["nvme3"][0], "--no-progress")
if "PFC storm" not in p.stderr:
    problems.append(f"nvme3: no PFC storm warning: {p.stderr[:300]}")

# The analyze section says the same totals (every packet the generator sends is ECT(0)).
truth = load_truth(totals["nvme3"][0])
ecn = [t for t in truth["congestion"] if t["kind"] == "ecn"]
ce, packets = sum(t["ce_packets"] for t in ecn), sum(t["packets"] for t in ecn)
cnps = sum(t["cnps"] for t in truth["congestion"] if t["kind"] == "cnp")
rep = run_cli(cli, "analyze", totals["nvme3"][0], "--no-progress").stdout
want = f"ECN: {ce} of {packets} ECN-capable packets marked CE ({100 * ce / packets:.2f}%)"
if want not in rep or f"CNPs: {cnps}" not in rep or "STORM" not in rep:
    problems.append(f"analyze: want {want!r}, 'CNPs: {cnps}' and a STORM row in:\n{rep}")

# Wireshark: the same CE-marked, CNP and PFC frames.
if plugin:
    ts = Tshark(plugin)
    try:
        for name, (cap, (ce, cnp, pfc)) in totals.items():
            rows = ts.fields(cap, ["frame.number", "rdmatel.ecn_ce", "rdmatel.cnp", "rdmatel.pfc.priority"])
            got = (sum(1 for r in rows if r["rdmatel.ecn_ce"]), sum(1 for r in rows if r["rdmatel.cnp"]),
                   sum(1 for r in rows if r["rdmatel.pfc.priority"]))
            if got != (ce, cnp, pfc):
                problems.append(f"{name}: tshark sees {got} CE-marked, CNP and PFC frames, truth {(ce, cnp, pfc)}")
    finally:
        ts.close()

fail_if(problems, "congestion truth problems")
print("OK: congestion records and the flows' congestion timeline equal the generator's truth")
