# SPDX-License-Identifier: GPL-2.0-or-later
"""rdmatel export messages / flows must reproduce the generator's ground truth exactly:
every RDMA message at every point (FCT, bytes, retransmissions, NAKs, FET, FNR, frames) and
every flow period."""
import json
import sys

from rdmatel_testlib import fail, fail_if, load_truth, run_cli

cli, captures = sys.argv[1], sys.argv[2:]
EXACT = ["kind", "last_psn", "complete", "packets", "retrans_packets", "bytes", "retrans_bytes", "first_ns",
         "last_ns", "naks", "first_frame", "last_frame"]
FLOW_EXACT = ["packets", "bytes", "retrans_packets", "retrans_bytes", "naks", "oos_packets"]


def close(a, b, rel=1e-9):
    if a is None or b is None:
        return a is None and b is None
    return abs(float(a) - float(b)) <= rel * max(1.0, abs(float(a)), abs(float(b)))


def export(kind, cap):
    out = run_cli(cli, "export", kind, cap, "--format", "jsonl", "--no-progress").stdout
    return [json.loads(l) for l in out.splitlines() if l.strip()]


problems = []
checked = 0
for cap in captures:
    truth = load_truth(cap)
    got = {}
    for m in export("messages", cap):
        got.setdefault((m["src"], m["dst"], m["dst_qpn"], m["point"], m["kind"], m["first_psn"]), []).append(m)
    for t in truth["messages"]:
        k = (t["src"], t["dst"], t["dst_qpn"], t["point"], t["kind"], t["first_psn"])
        c = got.pop(k, [])
        if len(c) != 1:
            problems.append(f"{cap}: message {k} found {len(c)} times")
            continue
        g = c[0]
        checked += 1
        for f in EXACT:
            if t.get(f) != g.get(f):
                problems.append(f"{cap}: message {k}: {f} truth={t.get(f)} got={g.get(f)}")
        for f in ("fct_us", "fet_bps", "fnr"):
            if not close(t.get(f), g.get(f)):
                problems.append(f"{cap}: message {k}: {f} truth={t.get(f)} got={g.get(f)}")
    for k, v in got.items():
        problems.append(f"{cap}: extra message {k} x{len(v)}: {v[0]}")
    # Flow periods.
    gotf = {}
    for f in export("flows", cap):
        k = (f["src"], f["dst"], f["dst_qpn"], f["point"], f["period_start_ns"])
        if k in gotf:
            problems.append(f"{cap}: flow period {k} reported twice: {gotf[k]} and {f}")
        gotf[k] = f
    for t in truth.get("flows", []):
        k = (t["src"], t["dst"], t["dst_qpn"], t["point"], t["period_start_ns"])
        g = gotf.pop(k, None)
        if g is None:
            problems.append(f"{cap}: flow period {k} missing")
            continue
        checked += 1
        for f in FLOW_EXACT:
            if t.get(f) != g.get(f):
                problems.append(f"{cap}: flow period {k}: {f} truth={t.get(f)} got={g.get(f)}")
    for k in gotf:
        problems.append(f"{cap}: extra flow period {k}")
fail_if(problems, "differences from ground truth", shown=60)
if checked == 0:
    fail("no messages in the truth files: the test would prove nothing")
print(f"OK: {checked} messages and flow periods match ground truth in {len(captures)} captures")
