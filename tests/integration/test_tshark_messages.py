# SPDX-License-Identifier: GPL-2.0-or-later
"""tshark with the plugin shows ground-truth message metrics on the frame that completes each
message, flags exactly the retransmitted packets and the NAKs, and `rdmatel.fnr > 0` lists
exactly the messages that had NAKs."""
import sys

from rdmatel_testlib import Tshark, fail, fail_if, load_truth, us

plugin, captures = sys.argv[1], sys.argv[2:]
FIELDS = ["frame.number", "rdmatel.msg.kind", "rdmatel.fct", "rdmatel.fet", "rdmatel.fnr", "rdmatel.msg.bytes",
          "rdmatel.msg.retrans_bytes", "rdmatel.msg.naks", "rdmatel.msg.packets", "rdmatel.msg.retrans_packets",
          "rdmatel.msg.first_psn", "rdmatel.msg.complete", "rdmatel.msg.fct_multi"]


def close(a, b):
    if a is None or a == "":
        return b is None or b == ""
    if b is None or b == "":
        return False
    return abs(float(a) - float(b)) <= 1e-6 * max(1.0, abs(float(a)))


ts = Tshark(plugin)
problems = []
checked = 0
try:
    for cap in captures:
        truth = load_truth(cap)
        rows = {int(r["frame.number"]): r for r in ts.fields(cap, FIELDS, "rdmatel.msg.kind")}
        for m in truth["messages"]:
            row = rows.get(m["last_frame"])
            if row is None:
                problems.append(f"{cap}: frame {m['last_frame']} completes a {m['kind']} message but has no metrics")
                continue
            checked += 1
            if int(row["rdmatel.msg.first_psn"]) != m["first_psn"] or row["rdmatel.msg.kind"] != m["kind"]:
                problems.append(f"{cap}: frame {m['last_frame']}: message psn/kind {row['rdmatel.msg.first_psn']}/"
                                f"{row['rdmatel.msg.kind']} truth {m['first_psn']}/{m['kind']}")
            if us(row["rdmatel.fct"]) != us(m["fct_us"]):
                problems.append(f"{cap}: frame {m['last_frame']}: fct {row['rdmatel.fct']} truth {m['fct_us']}")
            # The profile's FCT column: blank on single-packet messages (FCT 0 by definition).
            want_multi = m["fct_us"] if m["packets"] > 1 else ""
            if not close(want_multi, row["rdmatel.msg.fct_multi"]):
                problems.append(f"{cap}: frame {m['last_frame']}: msg.fct_multi {row['rdmatel.msg.fct_multi']!r} "
                                f"for {m['packets']} packets, fct {m['fct_us']}")
            for f, k in (("rdmatel.fet", "fet_bps"), ("rdmatel.fnr", "fnr")):
                if not close(m.get(k), row[f]):
                    problems.append(f"{cap}: frame {m['last_frame']}: {f} {row[f]!r} truth {m.get(k)}")
            for f, k in (("rdmatel.msg.bytes", "bytes"), ("rdmatel.msg.retrans_bytes", "retrans_bytes"),
                         ("rdmatel.msg.naks", "naks"), ("rdmatel.msg.packets", "packets"),
                         ("rdmatel.msg.retrans_packets", "retrans_packets")):
                if int(row[f]) != m[k]:
                    problems.append(f"{cap}: frame {m['last_frame']}: {f} {row[f]} truth {m[k]}")
        if len(rows) != len(truth["messages"]):
            problems.append(f"{cap}: {len(rows)} frames carry message metrics, truth has {len(truth['messages'])} messages")
        # Per-frame flags against the truth's per-flow counts.
        retrans = ts.fields(cap, ["frame.number"], "rdmatel.retrans")
        want = sum(f["retrans_packets"] for f in truth.get("flows", []))
        if len(retrans) != want:
            problems.append(f"{cap}: {len(retrans)} frames flagged rdmatel.retrans, truth {want} retransmitted packets")
        naks = ts.fields(cap, ["frame.number", "rdmatel.nak.code"], "rdmatel.nak")
        if len(naks) != truth.get("naks", 0):
            problems.append(f"{cap}: {len(naks)} NAK frames, truth {truth.get('naks')}")
        lossy = ts.fields(cap, ["frame.number"], "rdmatel.fnr > 0")
        want_lossy = sum(1 for m in truth["messages"] if m.get("fnr") and float(m["fnr"]) > 0)
        if len(lossy) != want_lossy:
            problems.append(f"{cap}: -Y 'rdmatel.fnr > 0' lists {len(lossy)} frames, truth {want_lossy} messages with NAKs")
finally:
    ts.close()
fail_if(problems, "differences between tshark and the message ground truth", shown=50)
if checked == 0:
    fail("nothing checked")
print(f"OK: {checked} messages match ground truth in tshark")
