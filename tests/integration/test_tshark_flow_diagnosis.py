#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""`tshark -2 -z rdmatel,diagnosis,flows` lists the message-flow findings as `rdmatel analyze` lists
them in "Diagnosis: RDMA message flows": the same flows, in the same order, with the same verdict
and evidence, and numbers in its other columns that are the ones the evidence gives. Each finding
is counted on its frame to look at (a packet of the flow, or the PFC frame that paused it), and
those come in any order: the table must still list them by rank. Each finding is also in that
frame's tree (rdmatel.diagnosis.flow, with its rank and kind) and expert info, on no other frame.

Captures: GPU write flows generated with losses (random, and dropped between two points), ECN
marks, PFC pauses (untagged flows: several findings on one pause frame) and all of them at once;
a clean one (nothing stands out: an empty table, as analyze says "Nothing stands out"); and the
shipped real captures when given (perftest_d_write_loss must list findings). On the generated ones the flows the table
names are checked against the generator's truth: every flow the truth has resend or lose 1 % of
its packets is listed for its loss, every flow listed for a loss lost or resent something, and
every flow CE-marked 1 % is listed.

Usage: test_tshark_flow_diagnosis.py RDMATEL_SYNTH RDMATEL PLUGIN_SO [REAL_CAPTURE.pcapng.gz ...]"""
import gzip
import os
import re
import shutil
import sys
from collections import defaultdict

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
from rdmatel_stats import parse_simple_tables  # noqa: E402
from rdmatel_testlib import Tshark, fail, fail_if, generate_capture, load_truth, run_cli, scratch_dir  # noqa: E402

if len(sys.argv) < 4:
    fail(__doc__)
synth, cli, plugin = sys.argv[1:4]
reals = sys.argv[4:]
tmp = scratch_dir("rdmatel_flow_diag_")
TABLE = "RDMA Telemetry · Diagnosis: RDMA message flows"
NVME_TABLE = "RDMA Telemetry · Diagnosis: who is to blame"
FINDING = re.compile(r"^  (\d+)\. (\S+) > (\S+) (0x[0-9a-f]+): (.*)\.\n     (.*)\.$", re.M)
COLUMNS = ["Rank", "Source", "Destination", "Dest QPN", "Stands out by", "Verdict", "Point", "Retransmitted (%)",
           "NAKs", "FNR", "Lossiest hop", "Hop lost", "Hop packets", "Hop loss (%)", "CE-marked (%)", "CNPs",
           "Pause frames", "Frame", "Evidence"]
C = {name: i for i, name in enumerate(COLUMNS)}

FLOWS = ["--scenario", "write-flows", "--flows", "4", "--messages", "10"]
# Short flows (one message each), some of which resend nothing: they stand out by their marks or
# pauses only.
SHORT = ["--scenario", "write-flows", "--flows", "6", "--messages", "1", "--points", "3", "--loss", "0"]
SCENARIOS = [  # name, rdmatel-synth arguments, seed, what the table must show the flows stand out by
    ("random_loss", FLOWS + ["--loss", "0.02"], 7, {"loss"}),
    ("drop_spine", FLOWS + ["--points", "3", "--loss", "0", "--drop-between", "leafA-gpu:spine1=0.05"], 5, {"loss"}),
    # Untagged flows: the pauses at spine1 hold back every flow there, several findings on one
    # pause frame.
    ("marks_pauses", SHORT + ["--ecn-mark", "spine1:leafB-gpu=0.3", "--vlan", "0", "--pfc-pause", "spine1:5=20@0.001"],
     5, {"loss", "congestion", "PFC pauses"}),
    # Pauses of the flows' own priority; drops on their way and on their queue pairs' way back.
    ("drops_own_pauses", SHORT + ["--vlan", "1", "--pcp", "3", "--pfc-pause", "spine1:3=20@0.001", "--drop-between",
                                  "spine1:leafB-gpu=0.1"], 3, {"loss", "PFC pauses"}),
    # One flow of one message, nothing resent (other seeds resend after a late ACK).
    ("clean", ["--scenario", "write-flows", "--flows", "1", "--messages", "1", "--points", "2", "--loss", "0"], 3, set()),
]
ORDER_CHECKS = "marks_pauses"  # the filter, the NVMe table beside it, one pass
problems = []


def cli_findings(capture):
    """rdmatel analyze's message-flow findings in the order it prints them:
    [(rank, src, dst, qpn, verdict, evidence)], and whether it says nothing stands out."""
    out = run_cli(cli, "analyze", capture, "--no-progress", "--top", "1000").stdout
    if "Diagnosis: RDMA message flows\n" not in out:
        fail(f"{capture}: no 'Diagnosis: RDMA message flows' in rdmatel analyze")
    section = out.split("Diagnosis: RDMA message flows\n", 1)[1].split("\n\n", 1)[0] + "\n"
    found = [(m[1], m[2], m[3], m[4], m[5], m[6]) for m in FINDING.finditer(section)]
    return found, "Nothing stands out" in section


def table(ts, capture, *z):
    """The rows of the table (and the tables tshark printed) for `-2 -z rdmatel,diagnosis,flows[,FILTER]`."""
    args = ["-2", "-q", "-r", capture]
    for spec in z or ("rdmatel,diagnosis,flows",):
        args += ["-z", spec]
    tables = parse_simple_tables(ts.run(*args).stdout)
    if TABLE not in tables:
        fail(f"{capture}: tshark printed no '{TABLE}' table (tables: {list(tables)})")
    header, rows = tables[TABLE]
    if header != COLUMNS:
        fail(f"columns {header}, want {COLUMNS}")
    return [r for r in rows if r and r[0].isdigit()], tables


def kind_of(verdict):
    """What a finding stands out by, from analyze's verdict (flow_finding_verdict's sentences)."""
    if verdict.startswith(("the network loses", "it is resent", "it retransmits")):
        return "loss"
    if verdict.startswith(("the network is congested", "its receiver tells")):
        return "congestion"
    if verdict.startswith("PFC pauses"):
        return "PFC pauses"
    return "?"


def check_numbers(name, row):
    """The columns between the verdict and the evidence give the evidence's numbers."""
    ev, kind = row[C["Evidence"]], row[C["Stands out by"]]
    where = f"{name}: rank {row[0]}"

    def want(column, value):
        if row[C[column]] != value:
            problems.append(f"{where}: {column} {row[C[column]]!r}, the evidence says {value!r}: {ev}")

    m = re.search(r"(\d+\.\d) % of its data packets retransmitted at (\S+), (?:(\d+) NAKs? \(FNR ([\d.]+)\)|(\d+) NAKs?"
                  r"|no NAK)", ev)
    if m:
        want("Retransmitted (%)", m[1])
        want("NAKs", m[3] or m[5] or "0")
        if m[4]:
            want("FNR", m[4])
        if kind == "loss":
            want("Point", m[2])
    elif row[C["NAKs"]] != "0" or row[C["Retransmitted (%)"]] not in ("0.0", "nan"):
        problems.append(f"{where}: no retransmission in the evidence, the row says {row[C['Retransmitted (%)']]} % and "
                        f"{row[C['NAKs']]} NAKs: {ev}")
    m = re.search(r"(?:^|; )lost on (\S+) -> (\S+): (\d+) of (\d+) \((\d+\.\d) %\)", ev)
    if m:
        want("Lossiest hop", f"{m[1]} -> {m[2]}")
        want("Hop lost", m[3])
        want("Hop packets", m[4])
        want("Hop loss (%)", m[5])
    else:
        want("Lossiest hop", "")
        want("Hop loss (%)", "nan")
    m = re.search(r"CE-marked (\d+\.\d) % at (\S+) \(", ev)
    if m:
        want("CE-marked (%)", m[1])
        if kind == "congestion":
            want("Point", m[2])
    m = re.search(r"told to slow down (once|(\d+) times)", ev)
    want("CNPs", "0" if not m else "1" if m[1] == "once" else m[2])
    pauses = re.findall(r"PFC pauses at (\S+) \(priority \d+, [^:]+: (\d+) pause frames", ev)
    want("Pause frames", str(sum(int(n) for _, n in pauses)))
    if kind == "PFC pauses":
        want("Point", ", ".join(dict.fromkeys(p for p, _ in pauses)))
    if kind != kind_of(row[C["Verdict"]]):
        problems.append(f"{where}: stands out by {kind!r}, the verdict says {kind_of(row[C['Verdict']])!r}")


def check_frames(ts, name, capture, rows):
    """Each finding's frame to look at is a packet of its flow (a loss, congestion), or a PFC frame
    (pauses)."""
    frames = sorted({int(r[C["Frame"]]) for r in rows})
    if not frames:
        return
    got = {int(f["frame.number"]): f for f in ts.fields(
        capture, ["frame.number", "ip.src", "ip.dst", "infiniband.bth.destqp", "rdmatel.pfc.priority"],
        display_filter="frame.number in {" + ", ".join(map(str, frames)) + "}")}
    for r in rows:
        f = got.get(int(r[C["Frame"]]))
        if not f:
            problems.append(f"{name}: rank {r[0]}: frame {r[C['Frame']]} not in the capture")
        elif r[C["Stands out by"]] == "PFC pauses":
            if not f["rdmatel.pfc.priority"]:
                problems.append(f"{name}: rank {r[0]} (pauses): frame {r[C['Frame']]} is no PFC frame")
        elif (r[C["Source"]] not in f["ip.src"].split("|") or r[C["Destination"]] not in f["ip.dst"].split("|")
              or int(r[C["Dest QPN"]], 16) not in [int(q, 0) for q in f["infiniband.bth.destqp"].split("|") if q]):
            problems.append(f"{name}: rank {r[0]}: frame {r[C['Frame']]} is {f}, not a packet of the flow "
                            f"{r[C['Source']]} > {r[C['Destination']]} {r[C['Dest QPN']]}")


def check_truth(name, capture, rows):
    """The flows named for their losses and marks are the generator's lossy and marked flows."""
    truth = load_truth(capture)
    packets, retrans, naks = defaultdict(int), defaultdict(int), defaultdict(int)  # (flow, point) ->
    for f in truth["flows"]:
        k = (f["src"], f["dst"], f["dst_qpn"], f["point"])
        packets[k] += f["packets"]
        retrans[k] += f["retrans_packets"]
        naks[k] += f["naks"]
    hop_packets, hop_lost = defaultdict(int), defaultdict(int)
    for h in truth["hops"]:
        hop_packets[(h["src"], h["dst"], h["dst_qpn"])] += h["packets"]
        hop_lost[(h["src"], h["dst"], h["dst_qpn"])] += h["lost"]
    flows = {k[:3] for k in packets}
    resent = {k[:3] for k in packets if packets[k] and retrans[k] / packets[k] >= 0.01}
    lost = {k for k in hop_packets if k in flows and hop_lost[k] / hop_packets[k] >= 0.01}
    touched = {k[:3] for k in packets if retrans[k] or naks[k]} | {k for k in hop_lost if hop_lost[k]}
    marked = {(c["src"], c["dst"], c["dst_qpn"]) for c in truth["congestion"]
              if c["kind"] == "ecn" and c["packets"] and c["ce_packets"] / c["packets"] >= 0.01}
    listed = {(r[C["Source"]], r[C["Destination"]], int(r[C["Dest QPN"]], 16)): r[C["Stands out by"]] for r in rows}
    for k in sorted(resent | lost):
        if listed.get(k) != "loss":
            why = "resent 1 % of its packets at a point" if k in resent else "lost 1 % of its packets on its hops"
            problems.append(f"{name}: the truth's flow {k} {why}; the table: {listed.get(k, 'not listed')}")
    for k, kind in sorted(listed.items()):
        if kind == "loss" and k not in touched:
            problems.append(f"{name}: {k} listed for a loss, the truth has it resend, NAK and lose nothing")
    for k in sorted(marked & flows):
        if k not in listed:
            problems.append(f"{name}: the truth's flow {k} is CE-marked 1 % or more, not listed")
    return len(resent | lost)


def check_tree(ts, name, capture, rows):
    """Each finding is in the tree and the expert info of its frame to look at, with its rank and
    what it stands out by, and nowhere else: rdmatel.diagnosis.flow, rdmatel.diagnosis.flow.expert."""
    want = sorted((int(r[C["Frame"]]), int(r[C["Rank"]]), r[C["Stands out by"]],
                   f"{r[C['Source']]} > {r[C['Destination']]} {r[C['Dest QPN']]}: {r[C['Verdict']]}") for r in rows)
    got = []
    for f in ts.fields(capture, ["frame.number", "rdmatel.diagnosis.flow.rank", "rdmatel.diagnosis.flow.kind",
                                 "rdmatel.diagnosis.flow", "_ws.expert.message"], display_filter="rdmatel.diagnosis.flow"):
        ranks, kinds = f["rdmatel.diagnosis.flow.rank"].split("|"), f["rdmatel.diagnosis.flow.kind"].split("|")
        heads = f["rdmatel.diagnosis.flow"].split("|")
        experts = [m for m in f["_ws.expert.message"].split("|") if m.startswith("Diagnosis (RDMA message flows) #")]
        for rank, kind, head in zip(ranks, kinds, heads):
            got.append((int(f["frame.number"]), int(rank), kind, head))
            if f"Diagnosis (RDMA message flows) #{rank}: {head}"[:200] not in [m[:200] for m in experts]:
                problems.append(f"{name}: frame {f['frame.number']}: no expert info for finding #{rank} ({experts})")
    if sorted(got) != want:
        problems.append(f"{name}: rdmatel.diagnosis.flow in the tree\n    " + "\n    ".join(map(str, sorted(got))) +
                        "\n  the table\n    " + "\n    ".join(map(str, want)))


def compare(ts, name, capture, kinds=None):
    want, nothing = cli_findings(capture)
    staged = ts.stage(capture)
    rows, _ = table(ts, staged)
    got = [(r[C["Rank"]], r[C["Source"]], r[C["Destination"]], r[C["Dest QPN"]], r[C["Verdict"]], r[C["Evidence"]])
           for r in rows]
    if got != want:
        problems.append(f"{name}: -z rdmatel,diagnosis,flows lists\n    " + "\n    ".join(map(str, got)) +
                        "\n  rdmatel analyze\n    " + "\n    ".join(map(str, want)))
    if nothing != (not want):
        problems.append(f"{name}: analyze lists {len(want)} findings and says 'Nothing stands out': {nothing}")
    for r in rows:
        check_numbers(name, r)
    if kinds is not None and {r[C["Stands out by"]] for r in rows} < kinds:
        problems.append(f"{name}: the table stands out by {sorted({r[C['Stands out by']] for r in rows})}, the capture "
                        f"was made to show {sorted(kinds)}: the test proves less than it says")
    check_frames(ts, name, staged, rows)
    check_tree(ts, name, staged, rows)
    return rows, staged


ts = Tshark(plugin)
stats = {"captures": 0, "rows": 0, "out_of_frame_order": 0, "shared_frames": 0, "truth_lossy": 0}
try:
    for name, args, seed, kinds in SCENARIOS:
        cap = generate_capture(synth, tmp, name, args, seed, 0)
        rows, staged = compare(ts, name, cap, kinds)
        stats["truth_lossy"] += check_truth(name, cap, rows)
        stats["captures"] += 1
        stats["rows"] += len(rows)
        frames = [int(r[C["Frame"]]) for r in rows]
        stats["out_of_frame_order"] += frames != sorted(frames)
        stats["shared_frames"] += len(frames) != len(set(frames))
        if name == "clean" and rows:
            problems.append(f"clean: nothing was lost, marked or paused, yet the table lists {rows}")
        if name == ORDER_CHECKS and rows:
            # A filter leaving out the frame of the finding ranked first: the others, still by rank.
            first = int(rows[0][C["Frame"]])
            left, _ = table(ts, staged, f"rdmatel,diagnosis,flows,frame.number != {first}")
            want = [r[0] for r in rows if int(r[C["Frame"]]) != first]
            if [r[0] for r in left] != want:
                problems.append(f"{name}: -z rdmatel,diagnosis,flows,frame.number != {first} lists ranks "
                                f"{[r[0] for r in left]}, want {want}")
            # The NVMe diagnosis's table beside it is still its own (rdmatel,diagnosis is a prefix of
            # rdmatel,diagnosis,flows).
            both, tables = table(ts, staged, "rdmatel,diagnosis", "rdmatel,diagnosis,flows")
            if NVME_TABLE not in tables or both != rows:
                problems.append(f"{name}: with -z rdmatel,diagnosis too, tshark printed {list(tables)}, "
                                f"{len(both)} message-flow rows (alone: {len(rows)})")
            # One pass: the findings are made at the end of the capture; the table says so, empty.
            out = ts.run("-q", "-r", staged, "-z", "rdmatel,diagnosis,flows").stdout
            one = parse_simple_tables(out)[TABLE][1]
            if "Diagnosis: RDMA message flows - ONE PASS: empty" not in out or any(r and r[0].isdigit() for r in one):
                problems.append(f"{name}: in one pass the table is not empty and titled ONE PASS:\n{out}")
    for real in reals:
        cap = os.path.join(tmp, os.path.basename(real)[:-3] if real.endswith(".gz") else os.path.basename(real))
        with (gzip.open(real, "rb") if real.endswith(".gz") else open(real, "rb")) as src, open(cap, "wb") as dst:
            shutil.copyfileobj(src, dst)
        rows, _ = compare(ts, os.path.basename(real), cap)
        if not rows and os.path.basename(real).startswith("perftest_d_write_loss"):
            problems.append(f"{real}: a capture that loses packets, no finding listed")
        stats["captures"] += 1
        stats["rows"] += len(rows)
finally:
    ts.close()
if not stats["out_of_frame_order"]:
    problems.append("no capture has its findings' frames out of rank order: the order is not tested")
if not stats["shared_frames"]:
    problems.append("no capture has two findings on one frame: the table is not tested with them")
if not stats["truth_lossy"]:
    problems.append("no generated capture has a flow the truth says is lossy: the truth check proves nothing")
fail_if(problems, "differences between -z rdmatel,diagnosis,flows and rdmatel analyze or the truth")
print(f"OK: -z rdmatel,diagnosis,flows lists rdmatel analyze's message-flow findings in its order ({stats})")
