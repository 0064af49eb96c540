# SPDX-License-Identifier: GPL-2.0-or-later
"""rdmatel export io must reproduce the generator's ground truth to the nanosecond; analyze's
host table counts "I/Os" as reads + writes (Wireshark's definition) and, on a one-point capture,
says why DAL ... IOL2 are missing instead of printing rows of "-"; its flow tables show each
flow's message kinds and its rate (effective bytes * 8 / span) as the truth's messages give them."""
import re
import sys
from collections import Counter

from rdmatel_testlib import cli_io_records, compare_ios, fail, fail_if, load_truth, measurable_ios, run_cli

cli, captures = sys.argv[1], sys.argv[2:]
problems = []
checked = 0
for cap in captures:
    truth = load_truth(cap)
    ios = measurable_ios(truth["ios"])
    got = cli_io_records(cli, cap)
    problems += compare_ios(ios, got, cap)
    checked += len(ios)
    if len(ios) < len(truth["ios"]):
        # Commands on queue pairs no completion answers: left out, and said so.
        err = run_cli(cli, "export", "io", cap, "--no-progress").stderr
        if "no completion answered" not in err:
            problems.append(f"{cap}: {len(truth['ios']) - len(ios)} commands on unanswered queue pairs left out "
                            f"without a warning (stderr: {err.strip()[:300]})")
    # The host table: I/Os = reads + writes per host, by the truth's opcodes.
    report = run_cli(cli, "analyze", cap, "--no-progress").stdout
    flows = {}
    for m in truth["messages"]:
        f = flows.setdefault((m["src"], m["dst"], f"0x{m['dst_qpn']:06x}", m["point"]),
                             {"kinds": set(), "eff": 0, "first": m["first_ns"], "last": m["last_ns"]})
        f["kinds"].add({"read_response": "read_resp"}.get(m["kind"], m["kind"]))
        f["eff"] += m["bytes"] - m["retrans_bytes"]
        f["first"], f["last"] = min(f["first"], m["first_ns"]), max(f["last"], m["last_ns"])
    unit = {"Gb/s": 1e9, "Mb/s": 1e6, "kb/s": 1e3}
    rows = re.findall(r"^  (\S+) > (\S+) (0x[0-9a-f]{6})\s+(\S+)\s+(\S+)\s+\d+\s+\d+\s+[\d.]+%\s+\d+\s+\S+\s+"
                      r"(?:-|[\d.]+ [kMG]b/s)\s+(-|[\d.]+) ?([kMG]b/s)?", report.split("RDMA flows: top by bytes")[-1], re.M)
    if truth["messages"] and not rows:
        problems.append(f"{cap}: analyze shows no flow rows")
    for src, dst, qpn, point, kinds, rate, rate_unit in rows:
        f = flows.get((src, dst, qpn, point))
        if f is None:
            problems.append(f"{cap}: analyze flow {src} > {dst} {qpn} at {point}: not in the truth")
            continue
        want_kinds = {k for k in ("write", "send", "read_resp") if k in f["kinds"]}
        want = f["eff"] * 8e9 / (f["last"] - f["first"]) if f["last"] > f["first"] else None
        got = float(rate) * unit[rate_unit] if rate != "-" else None
        if set(kinds.split("+")) != want_kinds or (want is None) != (got is None) or \
                (want is not None and abs(got - want) > 0.006 * unit[rate_unit]):
            problems.append(f"{cap}: flow {src} > {dst} {qpn} at {point}: kind {kinds} rate {rate} {rate_unit}; "
                            f"truth {sorted(want_kinds)} {want}")
        checked += 1
    if not ios:
        continue
    section = report.split("NVMe I/O latency per host IP")[1].split("\n\n")[0]
    # Every host the capture carried commands of has a row; one with admin or other commands
    # only shows 0 I/Os.
    want = Counter({io["host"]: 0 for io in ios})
    want.update(io["host"] for io in ios if not io.get("admin") and io["opcode"] in (1, 2)
                and not io.get("fctype"))
    got = {m.group(1): int(m.group(2)) for m in re.finditer(r"^  (\S+)\s+(\d+)\s+\d+\s+\d+\s+\d+\s+\d+\s+[A-Z]",
                                                             section, re.M)}
    if got != dict(want):
        problems.append(f"{cap}: analyze host I/Os {got}, truth reads + writes {dict(want)}")
    one_point = len(truth.get("points", [])) == 1
    if one_point and (re.search(r"^\s+(DAL|RTT|IOL1)\s", section, re.M) or "not measured" not in section):
        problems.append(f"{cap}: one point: analyze prints rows of DAL/RTT/IOL1 or does not say why:\n{section}")
fail_if(problems, "differences from ground truth", shown=50)
if checked == 0:
    fail("no I/Os in the truth files: the test would prove nothing")
print(f"OK: {checked} I/Os match ground truth in {len(captures)} captures")
