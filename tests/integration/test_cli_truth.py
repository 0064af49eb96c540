# SPDX-License-Identifier: GPL-2.0-or-later
"""rdmatel export io must reproduce the generator's ground truth to the nanosecond; analyze's
host table counts "I/Os" as reads + writes (Wireshark's definition) and, on a one-point capture,
says why DAL ... IOL2 are missing instead of printing rows of "-"."""
import re
import sys
from collections import Counter

from rdmatel_testlib import cli_io_records, compare_ios, fail, fail_if, load_truth, run_cli

cli, captures = sys.argv[1], sys.argv[2:]
problems = []
checked = 0
for cap in captures:
    truth = load_truth(cap)
    got = cli_io_records(cli, cap)
    problems += compare_ios(truth["ios"], got, cap)
    checked += len(truth["ios"])
    # The host table: I/Os = reads + writes per host, by the truth's opcodes.
    report = run_cli(cli, "analyze", cap, "--no-progress").stdout
    if not truth["ios"]:
        continue
    section = report.split("NVMe I/O latency per host IP")[1].split("\n\n")[0]
    want = Counter(io["host"] for io in truth["ios"] if not io.get("admin") and io["opcode"] in (1, 2)
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
