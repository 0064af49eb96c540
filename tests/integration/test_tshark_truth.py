# SPDX-License-Identifier: GPL-2.0-or-later
"""The real tshark, loading the freshly built plugin, shows ground-truth metrics on the
compute-side command and completion frames of every I/O (two-pass), and the single-pass
display filter `rdmatel.rtt > X` works."""
import sys

from rdmatel_testlib import Tshark, fail, fail_if, load_truth, us

plugin, captures = sys.argv[1], sys.argv[2:]
FIELDS = ["frame.number", "rdmatel.io.stage", "rdmatel.io.op", "rdmatel.io.cid", "rdmatel.io.complete",
          "rdmatel.dal", "rdmatel.dpl", "rdmatel.iol1", "rdmatel.iol2", "rdmatel.rtt", "rdmatel.iol",
          "rdmatel.io.cmd_frame", "rdmatel.io.rsp_frame", "rdmatel.point"]
METRIC_FIELDS = {"dal_us": "rdmatel.dal", "dpl_us": "rdmatel.dpl", "iol1_us": "rdmatel.iol1",
                 "iol2_us": "rdmatel.iol2", "rtt_us": "rdmatel.rtt", "iol_us": "rdmatel.iol"}

ts = Tshark(plugin)
problems = []
checked = 0
try:
    out = ts.run("-G", "plugins").stdout
    if "rdmatel.so" not in out:
        fail("tshark did not load rdmatel.so:\n" + out)
    for cap in captures:
        truth = load_truth(cap)
        rows = {int(r["frame.number"]): r for r in ts.fields(cap, FIELDS, "rdmatel.io.stage")}
        for io in truth["ios"]:
            for frame_key in ("cmd_frame", "rsp_frame"):
                frame = io.get(frame_key)
                if frame is None:
                    continue
                row = rows.get(frame)
                if row is None:
                    problems.append(f"{cap}: frame {frame} ({frame_key} of CID {io['cid']}) has no rdmatel.io fields")
                    continue
                checked += 1
                if row["rdmatel.io.op"] != io["op"] or int(row["rdmatel.io.cid"]) != io["cid"]:
                    problems.append(f"{cap}: frame {frame}: op/cid {row['rdmatel.io.op']}/{row['rdmatel.io.cid']} "
                                    f"truth {io['op']}/{io['cid']}")
                for key, field in METRIC_FIELDS.items():
                    if us(io.get(key)) != us(row[field]):
                        problems.append(f"{cap}: frame {frame}: {field}={row[field]!r} truth {io.get(key)}")
                if (row["rdmatel.io.complete"] == "1") != io["complete"]:
                    problems.append(f"{cap}: frame {frame}: complete={row['rdmatel.io.complete']} truth {io['complete']}")
        # Single pass with a display filter on a metric: every frame shown must pass it.
        threshold = 20
        one_pass = ts.fields(cap, ["frame.number", "rdmatel.rtt"], f"rdmatel.rtt > {threshold}", two_pass=False)
        for r in one_pass:
            if not all(float(v) > threshold for v in r["rdmatel.rtt"].split("|")):
                problems.append(f"{cap}: single pass -Y rdmatel.rtt > {threshold} showed frame {r['frame.number']}")
        want = sum(1 for io in truth["ios"] if io.get("rtt_us") is not None and float(io["rtt_us"]) > threshold)
        two_pass = ts.fields(cap, ["frame.number"], f"rdmatel.rtt > {threshold}")
        if len(two_pass) != 2 * want:
            problems.append(f"{cap}: two-pass -Y rdmatel.rtt > {threshold}: {len(two_pass)} frames, "
                            f"truth has {want} I/Os (x2 frames: command and completion)")
finally:
    ts.close()
fail_if(problems, "differences between tshark and ground truth", shown=50)
if checked == 0:
    fail("nothing checked")
print(f"OK: {checked} frames match ground truth in tshark with the plugin")
