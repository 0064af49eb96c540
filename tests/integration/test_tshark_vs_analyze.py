# SPDX-License-Identifier: GPL-2.0-or-later
"""The plugin's -z tables (two-pass) print the numbers `rdmatel analyze` prints, on the samples
and on real captures: per host, storage and pair the read + write I/O count and the average
and maximum of every latency, and its p50 and p99; per flow and point the messages, bytes, NAKs, FNR, FET and the
average and maximum FCT. One pass: no table counts more than two passes do."""
import math
import re
import sys

from rdmatel_testlib import Tshark, fail, fail_if, run_cli
from rdmatel_stats import num, parse_simple_tables

cli, plugin, captures = sys.argv[1], sys.argv[2], sys.argv[3:]
METRICS = ["DAL", "DPL", "RTT", "IOL1", "IOL2", "IOL"]
GROUP_FIRST = re.compile(r"^  (\S+(?: > \S+)?)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(DAL|DPL|RTT|IOL1|IOL2|IOL)"
                         r"\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\d+)$")
GROUP_NEXT = re.compile(r"^\s+(DAL|DPL|RTT|IOL1|IOL2|IOL)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\d+)$")
FLOW = re.compile(r"^  (\S+) > (\S+) (0x[0-9a-f]{6})\s+(\S+)\s+\S+\s+(\d+)\s+(\d+)\s+[\d.]+%\s+(\d+)\s+(\S+)\s+(-|[\d.]+ [kMG]b/s)"
                  r"\s+(?:-|[\d.]+ [kMG]b/s)\s+(\S+)\s+(\S+)$")
SECTIONS = {"NVMe I/O latency per host IP": "host", "NVMe I/O latency per storage IP": "storage",
            "NVMe I/O latency per host > storage pair": "pair", "RDMA flows: top by bytes": "flows"}
TABLES = {"host": "RDMA Telemetry · NVMe latency per host", "storage": "RDMA Telemetry · NVMe latency per storage",
          "pair": "RDMA Telemetry · NVMe latency per host-storage pair",
          "flows": "RDMA Telemetry · RDMA messages per flow"}
problems = []
checked = 0
checked_percentiles = 0


def parse_analyze(text):
    """{'host'|'storage'|'pair': {key: {'rw': n, metric: (avg, p50, p99, max, n)}}, 'flows': {key: row}}"""
    out = {k: {} for k in ("host", "storage", "pair", "flows")}
    section, group = None, None
    for line in text.splitlines():
        title = next((v for k, v in SECTIONS.items() if line.startswith(k)), None)
        if title or not line.strip():
            section, group = title, None
            continue
        if section == "flows":
            m = FLOW.match(line)
            if m:
                out["flows"][(m.group(1), m.group(2), m.group(3), m.group(4))] = m.groups()[4:]
        elif section:
            m = GROUP_FIRST.match(line)
            if m:
                group = out[section].setdefault(tuple(m.group(1).split(" > ")), {"rw": int(m.group(3)) + int(m.group(4))})
                group[m.group(7)] = (m.group(8), m.group(9), m.group(10), m.group(11), int(m.group(12)))
                continue
            m = GROUP_NEXT.match(line)
            if m and group is not None:
                group[m.group(1)] = (m.group(2), m.group(3), m.group(4), m.group(5), int(m.group(6)))
    return out


def close(got, want, tol):
    if want == "-":
        return math.isnan(got)
    return not math.isnan(got) and abs(got - float(want)) <= tol


def gbps(text):
    value, unit = text.split()
    return float(value) * {"Gb/s": 1, "Mb/s": 1e-3, "kb/s": 1e-6}[unit]


ts = Tshark(plugin)
try:
    for cap in captures:
        want = parse_analyze(run_cli(cli, "analyze", cap, "--top", "1000000", "--no-progress", "-q").stdout)
        staged = ts.stage(cap)
        args = ["-q", "-z", "rdmatel,io,host", "-z", "rdmatel,io,storage", "-z", "rdmatel,io,pair",
                "-z", "rdmatel,msg,flow", "-r", staged]
        two = parse_simple_tables(ts.run("-2", *args).stdout)
        one = parse_simple_tables(ts.run(*args).stdout)
        for kind in ("host", "storage", "pair"):
            keys = 2 if kind == "pair" else 1
            _, rows = two[TABLES[kind]]
            got = {tuple(r[:keys]): r for r in rows}
            for key, g in want[kind].items():
                if g["rw"] == 0:
                    continue  # only other commands: not in the latency tables
                r = got.pop(key, None)
                if r is None:
                    problems.append(f"{cap}: {kind} {key}: in rdmatel analyze, not in tshark's table")
                    continue
                checked += 1
                if int(r[keys]) != g["rw"]:
                    problems.append(f"{cap}: {kind} {key}: {r[keys]} I/Os, rdmatel analyze {g['rw']} reads + writes")
                for mi, metric in enumerate(METRICS):
                    if metric not in g:
                        continue  # the CLI shows IOL only where it differs from IOL1
                    avg, p50, p99, mx, n = g[metric]
                    col = keys + 1 + 3 * mi
                    # The CLI rounds the average to the ns first, then prints µs: 0.001 apart at most.
                    if not close(num(r[col + 1]), avg, 0.0011) or not close(num(r[col + 2]), mx, 0.0005):
                        problems.append(f"{cap}: {kind} {key} {metric}: avg/max {r[col + 1]}/{r[col + 2]}, "
                                        f"rdmatel analyze {avg}/{mx}")
                    # p50 and p99 after every min/avg/max: the same nearest-rank samples, to the ns.
                    pcol = keys + 1 + 3 * len(METRICS) + 2 * mi
                    if not close(num(r[pcol]), p50, 0.0005) or not close(num(r[pcol + 1]), p99, 0.0005):
                        problems.append(f"{cap}: {kind} {key} {metric}: p50/p99 {r[pcol]}/{r[pcol + 1]}, "
                                        f"rdmatel analyze {p50}/{p99}")
                        continue
                    checked_percentiles += 1
            for key in got:
                problems.append(f"{cap}: {kind} {key}: in tshark's table, not in rdmatel analyze")
            # One pass counts a subset: completed I/Os as they go by.
            one_rows = {tuple(r[:keys]): r for r in one[TABLES[kind]][1]}
            for key, r in one_rows.items():
                full = {tuple(x[:keys]): x for x in rows}.get(key)
                if full is None or int(r[keys]) > int(full[keys]):
                    problems.append(f"{cap}: {kind} {key}: one pass counts {r[keys]} I/Os, two passes "
                                    f"{full and full[keys]}")
        _, rows = two[TABLES["flows"]]
        got = {tuple(r[:4]): r for r in rows}
        for key, (msgs, nbytes, naks, fnr, fet, fct_avg, fct_max) in want["flows"].items():
            r = got.pop(key, None)
            if r is None:
                problems.append(f"{cap}: flow {key}: in rdmatel analyze, not in tshark's table")
                continue
            checked += 1
            # The CLI prints FET with 2 decimals in Gb/s, Mb/s or kb/s, tshark with 3 in Mb/s.
            fet_ok = (math.isnan(num(r[9])) if fet == "-" else
                      abs(num(r[9]) / 1e3 - gbps(fet)) <= 0.005 * gbps("1 " + fet.split()[1]) + 0.0000005)
            ok = (int(r[4]) == int(msgs) and num(r[5]) == int(nbytes) and int(r[10]) == int(naks)
                  and close(num(r[7]), fct_avg, 0.0011) and close(num(r[8]), fct_max, 0.0005)
                  and close(num(r[11]), fnr, 0.00005 + 1e-12) and fet_ok)
            if not ok:
                problems.append(f"{cap}: flow {key}: tshark {r[4:]}, rdmatel analyze {msgs} {nbytes} {naks} {fnr} "
                                f"{fet} {fct_avg} {fct_max}")
        for key in got:
            problems.append(f"{cap}: flow {key}: in tshark's table, not in rdmatel analyze")
        one_flows = {tuple(r[:4]): r for r in one[TABLES["flows"]][1]}
        full = {tuple(r[:4]): r for r in rows}
        for key, r in one_flows.items():
            if key not in full or int(r[4]) > int(full[key][4]):
                problems.append(f"{cap}: flow {key}: one pass counts {r[4]} messages, two passes "
                                f"{full.get(key, [None] * 5)[4]}")
finally:
    ts.close()

fail_if(problems, "differences between tshark's tables and rdmatel analyze", shown=60)
if not checked or not checked_percentiles:
    fail("nothing compared")
print(f"OK: {checked} groups and flows equal in tshark's tables and rdmatel analyze ({len(captures)} captures)")
