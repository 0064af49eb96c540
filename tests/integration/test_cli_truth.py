# SPDX-License-Identifier: GPL-2.0-or-later
"""rdmatel export io must reproduce the generator's ground truth to the nanosecond."""
import sys

from rdmatel_testlib import cli_io_records, compare_ios, fail, fail_if, load_truth

cli, captures = sys.argv[1], sys.argv[2:]
problems = []
checked = 0
for cap in captures:
    truth = load_truth(cap)
    got = cli_io_records(cli, cap)
    problems += compare_ios(truth["ios"], got, cap)
    checked += len(truth["ios"])
    # CSV must carry the same numbers as JSONL.
fail_if(problems, "differences from ground truth", shown=50)
if checked == 0:
    fail("no I/Os in the truth files: the test would prove nothing")
print(f"OK: {checked} I/Os match ground truth in {len(captures)} captures")
