# SPDX-License-Identifier: GPL-2.0-or-later
"""The CLI and the Wireshark plugin must give identical numbers on the same capture (SPEC §2):
every I/O the CLI exports appears in tshark -2 with the same metrics on its command and
completion frames, every message with the same metrics on the frame that completes it, and
tshark shows no I/O or message the CLI does not have."""
import json
import sys

from rdmatel_testlib import Tshark, cli_io_records, fail, fail_if, run_cli, us

cli, plugin, captures = sys.argv[1], sys.argv[2], sys.argv[3:]
FIELDS = ["frame.number", "rdmatel.io.op", "rdmatel.io.cid", "rdmatel.dal", "rdmatel.dpl", "rdmatel.iol1",
          "rdmatel.iol2", "rdmatel.rtt", "rdmatel.iol", "rdmatel.io.cmd_frame", "rdmatel.io.rsp_frame"]
MSG_FIELDS = ["frame.number", "rdmatel.msg.kind", "rdmatel.fct", "rdmatel.fet", "rdmatel.fnr", "rdmatel.msg.bytes",
              "rdmatel.msg.retrans_bytes", "rdmatel.msg.naks"]
PAIRS = [("dal_us", "rdmatel.dal"), ("dpl_us", "rdmatel.dpl"), ("iol1_us", "rdmatel.iol1"),
         ("iol2_us", "rdmatel.iol2"), ("rtt_us", "rdmatel.rtt"), ("iol_us", "rdmatel.iol")]

ts = Tshark(plugin)
problems = []
compared = 0
try:
    for cap in captures:
        recs = cli_io_records(cli, cap)
        rows = {int(r["frame.number"]): r for r in ts.fields(cap, FIELDS, "rdmatel.io.stage")}
        metric_frames = set()
        for rec in recs:
            for fk in ("cmd_frame", "rsp_frame"):
                if rec.get(fk) is None:
                    continue
                metric_frames.add(rec[fk])
                row = rows.get(rec[fk])
                if row is None:
                    problems.append(f"{cap}: CLI {fk} {rec[fk]} not annotated by the plugin")
                    continue
                compared += 1
                if row["rdmatel.io.op"] != rec["op"]:
                    problems.append(f"{cap}: frame {rec[fk]} op {row['rdmatel.io.op']} vs CLI {rec['op']}")
                for k, f in PAIRS:
                    if us(rec.get(k)) != us(row[f]):
                        problems.append(f"{cap}: frame {rec[fk]} {f}={row[f]!r} vs CLI {k}={rec.get(k)}")
        for n, row in rows.items():
            if row["rdmatel.iol"] and n not in metric_frames:
                problems.append(f"{cap}: plugin shows metrics on frame {n}, which no CLI record names")
        # Messages: the same numbers on the completing frame.
        out = run_cli(cli, "export", "messages", cap, "--no-progress").stdout
        msgs = {m["last_frame"]: m for m in (json.loads(l) for l in out.splitlines() if l.strip())}
        mrows = {int(r["frame.number"]): r for r in ts.fields(cap, MSG_FIELDS, "rdmatel.msg.kind")}
        if set(msgs) != set(mrows):
            problems.append(f"{cap}: CLI messages end on {len(msgs)} frames, the plugin shows {len(mrows)}; "
                            f"differing frames {sorted(set(msgs) ^ set(mrows))[:10]}")
        for frame, m in msgs.items():
            row = mrows.get(frame)
            if not row:
                continue
            compared += 1
            if us(row["rdmatel.fct"]) != us(m["fct_us"]) or int(row["rdmatel.msg.bytes"]) != m["bytes"] or \
                    int(row["rdmatel.msg.retrans_bytes"]) != m["retrans_bytes"] or \
                    int(row["rdmatel.msg.naks"]) != m["naks"] or \
                    (row["rdmatel.fet"] != "") != ("fet_bps" in m) or (row["rdmatel.fnr"] != "") != ("fnr" in m):
                problems.append(f"{cap}: message ending at frame {frame}: plugin {row} vs CLI {m}")
finally:
    ts.close()
fail_if(problems, "differences between CLI and plugin", shown=50)
if compared == 0:
    fail("nothing compared")
print(f"OK: {compared} frames identical between the CLI and tshark in {len(captures)} captures")
