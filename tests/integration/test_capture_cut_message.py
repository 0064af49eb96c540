# SPDX-License-Identifier: GPL-2.0-or-later
"""A capture that ends in the middle of RDMA messages (a ring file, -c N, a stopped sniffer): each
message the end cut is reported incomplete, at its last captured packet, by the CLI and, on that
frame, by the plugin. Before, the plugin showed nothing for such a message (its last packet, a
MIDDLE, carried no note of it) while the CLI listed it, so `rdmatel.msg.complete == 0` found
nothing. Expected values from the generator's truth: the messages whose first packet is before the
cut and whose last is after it."""
import json
import os
import subprocess
import sys

from rdmatel_testlib import Tshark, fail, fail_if, run_cli, scratch_dir, us

synth, cli, plugin = sys.argv[1], sys.argv[2], sys.argv[3]
tmp = scratch_dir("rdmatel_cut_msg_")
problems = []
cut_checked = 0
ts = Tshark(plugin)
try:
    for scenario, extra in (("write-flows", ["--flows", "4", "--messages", "30"]),
                            ("nvme-3point", ["--points", "5", "--routed", "--ios", "200"])):
        full = os.path.join(tmp, scenario + ".pcapng")
        subprocess.run([synth, "--scenario", scenario, "--seed", "9", "--loss", "0", "--out", full, *extra],
                       check=True, capture_output=True)
        with open(full.replace(".pcapng", ".truth.json")) as f:
            truth = json.load(f)
        # Cut one frame after the first packet of the longest message in the middle of the capture.
        longest = max(truth["messages"][len(truth["messages"]) // 3:], key=lambda m: m["packets"])
        if longest["packets"] < 3:
            fail(f"{scenario}: no message of 3 packets or more to cut")
        n = longest["first_frame"] + 1
        cut = os.path.join(tmp, scenario + "_cut.pcapng")
        subprocess.run(["editcap", "-r", full, cut, f"1-{n}"], check=True, capture_output=True)
        expected = {(m["point"], m["src"], m["dst_qpn"], m["first_psn"]): m for m in truth["messages"]
                    if m["first_frame"] <= n < m["last_frame"]}
        p = run_cli(cli, "export", "messages", cut, "--no-progress")
        got = {(r["point"], r["src"], r["dst_qpn"], r["first_psn"]): r for r in map(json.loads, p.stdout.splitlines())}
        rows = {int(r["frame.number"]): r for r in
                ts.fields(cut, ["frame.number", "rdmatel.msg.kind", "rdmatel.msg.complete", "rdmatel.msg.first_psn",
                                "rdmatel.fct", "rdmatel.msg.packets"], "rdmatel.msg.complete == 0")}
        for key, m in expected.items():
            r = got.get(key)
            if r is None:
                problems.append(f"{scenario}: the CLI lists no record of the cut message {key}")
                continue
            cut_checked += 1
            if r["complete"] or r["kind"] != m["kind"] or not n >= r["last_frame"] >= m["first_frame"]:
                problems.append(f"{scenario}: cut message {key}: CLI {r}")
            row = rows.get(r["last_frame"])
            if row is None:
                problems.append(f"{scenario}: the plugin shows no incomplete message on frame {r['last_frame']}, "
                                f"where the CLI's cut message {key} ends")
                continue
            if row["rdmatel.msg.kind"] != r["kind"] or int(row["rdmatel.msg.first_psn"]) != r["first_psn"] or \
                    us(row["rdmatel.fct"]) != us(r["fct_us"]) or int(row["rdmatel.msg.packets"]) != r["packets"]:
                problems.append(f"{scenario}: frame {r['last_frame']}: plugin {row} vs CLI {r}")
        # Nothing else is incomplete: every message the cut did not reach is whole.
        for key, r in got.items():
            if not r["complete"] and key not in expected:
                problems.append(f"{scenario}: message {key} incomplete, the truth has it whole before the cut")
        if len(rows) != len(expected):
            problems.append(f"{scenario}: the plugin shows {len(rows)} incomplete messages, the cut made {len(expected)}")
finally:
    ts.close()
fail_if(problems, "differences on messages cut by the capture's end")
if cut_checked < 3:
    fail(f"only {cut_checked} cut messages checked")
print(f"OK: {cut_checked} messages cut by the capture's end, incomplete in the CLI and the plugin alike")
