# SPDX-License-Identifier: GPL-2.0-or-later
"""Packet details as a user reads them in Wireshark and scripts do in tshark:
* -T json keys the rdmatel subtrees by stable field names (jq can address them), never by the
  item's free text;
* an NVMe completion's status is split into its parts (SCT, SC, More, DNR) as the NVMe base
  specification defines the bits of the generator's status value, and the expert item of a
  failed I/O names its host, storage and status;
* a retransmitted packet gets one expert item ("Retransmission"), not also "Duplicate PSN"."""
import json
import re
import sys

from rdmatel_stats import parse_simple_tables
from rdmatel_testlib import Tshark, fail_if, load_truth

plugin, captures = sys.argv[1], sys.argv[2:]
STABLE_KEY = re.compile(r"^(rdmatel(\.[a-z0-9_]+)*(_tree)?|_ws\.expert(\.[a-z_]+)*(_tree)?)$")  # expert items are Wireshark's own
problems, checked = [], {"json frames": 0, "statuses": 0, "retransmissions": 0}


def keys(node, path="rdmatel"):
    if isinstance(node, dict):
        for k, v in node.items():
            yield k, path
            yield from keys(v, k)
    elif isinstance(node, list):
        for v in node:
            yield from keys(v, path)


ts = Tshark(plugin)
try:
    registered = [l.split("\t") for l in ts.run("-G", "fields").stdout.splitlines() if l.startswith("F\t")]
    ours = {r[2]: r for r in registered if r[4] == "rdmatel"}
    experts = {a for a, r in ours.items() if r[3] == "FT_NONE" and not r[7]}  # expert items: no blurb
    for a, r in ours.items():
        if a not in experts and not r[7].strip():
            problems.append(f"field {a} has no description")
    for e in experts:
        if e.endswith(".expert") and e[:-len(".expert")] not in ours:
            problems.append(f"expert item {e} names no field")
    for flag in ("rdmatel.retrans", "rdmatel.msg.duplicate", "rdmatel.msg.oos", "rdmatel.io.copy", "rdmatel.nak"):
        if flag not in ours or flag + ".expert" not in experts:
            problems.append(f"flag {flag}: no expert item {flag}.expert ({sorted(experts)})")
    for cap in captures:
        truth = load_truth(cap)
        frames = json.loads(ts.run("-2", "-r", ts.stage(cap), "-T", "json", "-Y", "rdmatel").stdout)
        io_frames = {}
        for f in frames:
            layer = f["_source"]["layers"].get("rdmatel")
            if layer is None:
                continue
            checked["json frames"] += 1
            for k, parent in keys(layer):
                if not STABLE_KEY.match(k):
                    problems.append(f"{cap}: frame {f['_source']['layers']['frame']['frame.number']}: json key {k!r} "
                                    f"under {parent!r} is not a field name")
            io = layer.get("rdmatel.io")
            if io is not None:
                for one in io if isinstance(io, list) else [io]:
                    io_frames.setdefault(int(f["_source"]["layers"]["frame"]["frame.number"]), []).append(one)
        for io in truth["ios"]:
            if not io.get("complete"):
                continue
            got = [x for x in io_frames.get(io["cmd_frame"], []) if int(x.get("rdmatel.io.cid", -1)) == io["cid"]]
            if not got:
                problems.append(f"{cap}: frame {io['cmd_frame']}: no 'rdmatel.io' subtree with CID {io['cid']}")

        # Status parts, by the specification's bit layout applied to the truth's status value.
        failed = [io for io in truth["ios"] if io.get("complete") and io.get("status")]
        if failed:
            fields = ["frame.number", "rdmatel.io.cid", "rdmatel.io.status", "rdmatel.io.status.sct",
                      "rdmatel.io.status.sc", "rdmatel.io.status.more", "rdmatel.io.status.dnr", "_ws.expert.message"]
            rows = {int(r["frame.number"]): r for r in ts.fields(cap, fields, "rdmatel.io.status != 0")}
            for io in failed:
                s = io["status"]
                r = rows.get(io["rsp_frame"])
                if r is None:
                    problems.append(f"{cap}: completion frame {io['rsp_frame']} (status {s:#06x}) not found")
                    continue
                checked["statuses"] += 1
                want = {"rdmatel.io.status.sct": (s >> 8) & 7, "rdmatel.io.status.sc": s & 0xFF,
                        "rdmatel.io.status.more": (s >> 13) & 1, "rdmatel.io.status.dnr": (s >> 14) & 1}
                for k, v in want.items():
                    if int(r[k].split("|")[0], 0) != v:
                        problems.append(f"{cap}: frame {io['rsp_frame']}: {k} = {r[k]}, status {s:#06x} says {v}")
                text = f"host {io['host']} > storage {io['storage']} failed"
                if not any(text in m and f"status {s:#06x}" in m for m in r["_ws.expert.message"].split("|")):
                    problems.append(f"{cap}: frame {io['rsp_frame']}: no expert item with {text!r} and the status: "
                                    f"{r['_ws.expert.message']}")
                dnr = bool((s >> 14) & 1)
                if dnr != ("Do Not Retry" in r["_ws.expert.message"]):
                    problems.append(f"{cap}: frame {io['rsp_frame']}: DNR {dnr}, text {r['_ws.expert.message']}")

        # All frames of an I/O, and one line per I/O.
        rows = ts.fields(cap, ["frame.number", "rdmatel.io.id", "rdmatel.io.frame", "rdmatel.io.counted"], "rdmatel.io.id")
        frames_of, links_of = {}, {}
        for r in rows:
            ids = r["rdmatel.io.id"].split("|")
            if len(ids) != 1:
                continue  # a frame of two I/Os (a coalesced packet): its links are per subtree
            frames_of.setdefault(ids[0], set()).add(int(r["frame.number"]))
            links_of[int(r["frame.number"])] = {int(x) for x in r["rdmatel.io.frame"].split("|") if x}
        by_cmd = {}
        for io_id, frames in frames_of.items():
            # Each frame links to the first frame of every stage at every point (L), itself aside.
            linked = set().union(*(links_of[f] for f in frames))
            if not linked <= frames or any(links_of[f] | {f} != linked | {f} for f in frames):
                problems.append(f"{cap}: I/O {io_id}: its frames {sorted(frames)} do not all link to each other")
            for f in frames:
                by_cmd[f] = io_id
        for io in truth["ios"]:
            io_id = by_cmd.get(io["cmd_frame"])
            if io_id is None or (io.get("rsp_frame") and io["rsp_frame"] not in frames_of[io_id]):
                problems.append(f"{cap}: I/O CID {io['cid']} (frames {io['cmd_frame']}, {io.get('rsp_frame')}): not one "
                                f"rdmatel.io.id")
            elif len(truth.get("points", [])) > 1 and len(frames_of[io_id]) < 2 * (1 + bool(io.get("rsp_frame"))):
                problems.append(f"{cap}: I/O {io_id}: {len(frames_of[io_id])} frames, not both points' command and "
                                f"completion")
        over = ts.fields(cap, ["frame.number"], "rdmatel.rtt > 50 && rdmatel.io.counted")
        want = sorted(io["rsp_frame"] if io.get("complete") else io["cmd_frame"] for io in truth["ios"]
                      if io.get("rtt_us") is not None and io["rtt_us"] > 50)
        got = sorted(int(r["frame.number"]) for r in over)
        checked["one line per I/O"] = checked.get("one line per I/O", 0) + len(got)
        if got != want:
            problems.append(f"{cap}: rdmatel.rtt > 50 && rdmatel.io.counted: frames {got[:20]}, truth {want[:20]}")

        # Precision and units in the packet details.
        text = ts.run("-2", "-r", ts.stage(cap), "-O", "rdmatel", "-Y", "rdmatel.fct || rdmatel.rtt || rdmatel.iol").stdout
        shown = 0
        for name, value in re.findall(r"\[((?:DAL|DPL|RTT|IOL1|IOL2|IOL|FCT|FET|FNR)[^:]*): ([^\]]+)\]", text):
            shown += 1
            ok = (re.fullmatch(r"-?\d+\.\d{3}", value) if "(µs)" in name else
                  re.fullmatch(r"\d+ \(\d+\.\d{3} Gb/s\)", value) if name == "FET (bit/s)" else
                  re.fullmatch(r"\d\.\d{6}", value) if name == "FNR" else None)
            if not ok:
                problems.append(f"{cap}: packet details {name}: {value!r}")
                break
        if not shown:
            problems.append(f"{cap}: no metric in the packet details")

        # One expert item per retransmitted packet.
        rows = ts.fields(cap, ["frame.number", "_ws.expert.message"], "rdmatel.retrans")
        for r in rows:
            checked["retransmissions"] += 1
            msgs = r["_ws.expert.message"].split("|")
            if sum(m.startswith("Retransmission") for m in msgs) != 1 or any(m.startswith("Duplicate PSN") for m in msgs):
                problems.append(f"{cap}: frame {r['frame.number']}: retransmission expert items {msgs}")
    # Two instances of one table: the first one's rows, said in the title.
    first, second = "rdmatel,io,host,rdmatel.io.host == 10.1.0.1", "rdmatel,io,host,rdmatel.io.host == 10.1.0.2"
    alone = parse_simple_tables(ts.run("-2", "-q", "-z", first, "-r", staged := ts.stage(captures[0])).stdout)
    both_out = ts.run("-2", "-q", "-z", first, "-z", second, "-r", staged).stdout
    both = parse_simple_tables(both_out)
    key = "RDMA Telemetry · NVMe latency per host"
    if key not in alone or not alone[key][1] or both.get(key) != alone[key] \
            or "FOR THE FIRST -z OF THIS TABLE ONLY" not in both_out:
        problems.append(f"two -z rdmatel,io,host: rows {both.get(key)}, first alone {alone.get(key)}:\n{both_out[:1500]}")

    # One pass says it is partial where the user looks; two passes don't.
    z = ["-q", "-z", "rdmatel,io,host", "-z", "rdmatel,msg,flow", "-z", "rdmatel,diagnosis", "-z", "expert", "-r", staged]
    one, two = ts.run(*z).stdout, ts.run("-2", *z).stdout
    for title in ("NVMe latency per host (µs)", "RDMA messages per flow", "Diagnosis: who is to blame"):
        if not any(l.startswith(title + " - ONE PASS") and "tshark -2" in l for l in one.splitlines()):
            problems.append(f"one pass: the table {title!r} does not say it is partial:\n{one[:3000]}")
    if "One pass: rdmatel shows" not in one:
        problems.append("one pass: no expert item says the numbers are partial")
    if "ONE PASS" in two or "One pass: rdmatel" in two:
        problems.append("two passes: a one-pass warning is shown")
finally:
    ts.close()

if not checked["statuses"] or not checked["retransmissions"]:
    problems.append(f"nothing to check: {checked}")
fail_if(problems, "packet detail problems")
print(f"OK: packet details {checked}")
