# SPDX-License-Identifier: GPL-2.0-or-later
"""analyze's diagnosis of RDMA message flows against the generator's truth (GPU write flows seen
at three points, no NVMe I/O): packets dropped between two points must be blamed on that link
(on the flow's own hop, or its queue pair's other direction); CE marks must be named with their
share; with nothing lost between the points no flow may be said to lose packets there, and flows
that neither resend nor are marked must not be listed.

usage: test_flow_diagnosis.py RDMATEL_CLI RDMATEL_SYNTH
"""

import os
import re
import subprocess
import sys
from collections import defaultdict

from rdmatel_testlib import fail, fail_if, load_truth, run_cli, scratch_dir

BASE = ["--scenario", "write-flows", "--flows", "4", "--messages", "10", "--points", "3", "--loss", "0"]
LINE = re.compile(r"^  \d+\. (\S+) > (\S+) (0x[0-9a-f]+): (.*)\.\n     (.*)\.$", re.M)


def findings(cli, capture):
    report = run_cli(cli, "analyze", capture, "--no-progress", "--top", "100").stdout
    if "Diagnosis: RDMA message flows\n" not in report:
        fail(f"{capture}: no message-flow diagnosis in analyze")
    section = report.split("Diagnosis: RDMA message flows\n")[1].split("\n\n")[0] + "\n"
    return {(m[1], m[2], int(m[3], 16)): (m[4], m[5]) for m in LINE.finditer(section)}, section


def truth_facts(truth):
    hops = defaultdict(list)  # flow -> its hops (from, to, packets, lost)
    for h in truth["hops"]:
        hops[(h["src"], h["dst"], h["dst_qpn"])].append((h["from_point"], h["to_point"], h["packets"], h["lost"]))
    retrans = defaultdict(int)
    for f in truth["flows"]:
        retrans[(f["src"], f["dst"], f["dst_qpn"])] += f["retrans_packets"]
    ce = defaultdict(float)  # flow -> the largest CE share at one point
    for c in truth["congestion"]:
        if c["kind"] == "ecn" and c["packets"]:
            k = (c["src"], c["dst"], c["dst_qpn"])
            ce[k] = max(ce[k], c["ce_packets"] / c["packets"])
    return hops, retrans, ce


def lossy_links_between(hops, a, b):
    """The links that lost packets of any flow between IPs a and b, either way."""
    return {(f, t) for (s, d, _), hs in hops.items() if {s, d} == {a, b} for (f, t, _, lost) in hs if lost}


def check(cli, capture, problems):
    truth = load_truth(capture)
    got, section = findings(cli, capture)
    hops, retrans, ce = truth_facts(truth)
    for flow, hs in hops.items():
        packets, lost = sum(h[2] for h in hs), sum(h[3] for h in hs)
        if flow not in retrans or not packets or lost / packets < 0.01:
            continue  # not a message flow (requests, ACKs), or below the threshold
        worst = max(hs, key=lambda h: h[3] / h[2] if h[2] else 0)
        if flow not in got:
            problems.append(f"{capture}: {flow} lost {lost} of {packets} on its hops, not listed:\n{section}")
        elif f"between {worst[0]} and {worst[1]}" not in got[flow][0]:
            problems.append(f"{capture}: {flow} lost most on {worst[0]} -> {worst[1]}, verdict: {got[flow][0]}")
    for flow, (verdict, evidence) in got.items():
        m = re.search(r"between (\S+) and (\S+?)(?:,|$)", verdict)
        if m and (m[1], m[2]) not in lossy_links_between(hops, flow[0], flow[1]):
            problems.append(f"{capture}: {flow} blamed on {m[1]} -> {m[2]}, where the truth lost nothing of its pair")
        if (not retrans[flow] and ce[flow] < 0.01 and "loses" not in verdict and "CNP" not in evidence
                and "PFC pauses" not in evidence):  # check_pauses checks those
            problems.append(f"{capture}: {flow} listed though it neither resends nor is marked: {verdict}")
        if ce[flow] >= 0.01 and f"CE-marked {100 * ce[flow]:.1f} %" not in evidence:
            problems.append(f"{capture}: {flow} CE share {100 * ce[flow]:.1f} % not in: {evidence}")
    for flow, share in ce.items():
        if share >= 0.01 and flow in retrans and flow not in got:
            problems.append(f"{capture}: {flow} CE-marked {100 * share:.1f} %, not listed")
    if not any(h[3] for hs in hops.values() for h in hs):
        for flow, (verdict, _) in got.items():
            if "loses its packets" in verdict:
                problems.append(f"{capture}: nothing was lost between the points, yet {flow}: {verdict}")
    return len(got)


def check_pauses(cli, capture, prio):
    """The pauses at the spine are named for exactly the message flows seen there whose frames
    carry the pauses' priority, or no VLAN tag; a flow that neither resends nor is marked is
    listed for them, with the verdict saying whether the priority was matched."""
    truth = load_truth(capture)
    got, section = findings(cli, capture)
    _, retrans, ce = truth_facts(truth)
    want = {}  # flow -> its priority was matched to the pauses'
    for c in truth["congestion"]:
        if c["kind"] != "ecn":
            continue
        k = (c["src"], c["dst"], c["dst_qpn"])
        if c["point"] == "spine1" and k in retrans and c.get("priority") in (None, prio):
            want[k] = c.get("priority") is not None
    problems = []
    for k, (verdict, evidence) in sorted(got.items()):
        if k not in want and "PFC pauses" in evidence:
            problems.append(f"{capture}: {k} blamed on pauses not of its priority: {evidence}")
    for k, matched in sorted(want.items()):
        own = f"PFC pauses at spine1 (priority {prio}, " + ("its own" if matched else "its frames untagged there")
        if k not in got:
            problems.append(f"{capture}: {k} crosses pauses of priority {prio} at spine1, not listed:\n{section}")
        elif own not in got[k][1]:
            problems.append(f"{capture}: {k}: '{own}' not in: {got[k][1]}")
        elif not retrans[k] and ce[k] < 0.01:
            said = "PFC pauses of its priority" if matched else "could not be matched"
            if said not in got[k][0]:
                problems.append(f"{capture}: {k} only paused, verdict: {got[k][0]}")
    return problems


def main():
    if len(sys.argv) != 3:
        fail(__doc__)
    cli, synth = sys.argv[1:]
    tmp = scratch_dir("rdmatel-flow-diagnosis")
    cases = [
        ("drop-a", ["--drop-between", "leafA-gpu:spine1=0.05"], 5),
        ("drop-b", ["--drop-between", "spine1:leafB-gpu=0.05"], 7),
        ("drop-c", ["--drop-between", "leafB-gpu:spine1=0.04"], 8),
        ("ecn", ["--ecn-mark", "spine1:leafB-gpu=0.3"], 6),
        ("clean", [], 9),
    ]
    problems, listed = [], {}
    for name, args, seed in cases:
        capture = os.path.join(tmp, f"{name}.pcapng")
        subprocess.run([synth, *BASE, *args, "--seed", str(seed), "--out", capture], check=True, capture_output=True,
                       timeout=300)
        listed[name] = check(cli, capture, problems)
    # PFC pauses at the spine: they hold back only the flows of their priority (the VLAN tags'
    # 802.1p priority, 3 here), and untagged flows whatever the pauses' priority (unknown then).
    for name, args, seed, pause_prio in [
        ("pause-own", ["--vlan", "1", "--pcp", "3"], 11, 3),
        ("pause-other", ["--vlan", "1", "--pcp", "3"], 12, 5),
        ("pause-untagged", ["--vlan", "0"], 13, 5),
    ]:
        capture = os.path.join(tmp, f"{name}.pcapng")
        subprocess.run([synth, *BASE, *args, "--pfc-pause", f"spine1:{pause_prio}=20@0.001", "--seed", str(seed),
                        "--out", capture], check=True, capture_output=True, timeout=300)
        listed[name] = check(cli, capture, problems)
        problems += check_pauses(cli, capture, pause_prio)
    # The faults must show: each drop case and the ECN case lists flows.
    for name in ("drop-a", "drop-b", "drop-c", "ecn", "pause-own", "pause-untagged"):
        if not listed[name]:
            problems.append(f"{name}: no flow listed")
    fail_if(problems, "message-flow diagnosis")
    print(f"OK: message-flow diagnosis matches the truth on {len(cases)} captures ({listed})")


if __name__ == "__main__":
    main()
