#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Scale-out against a real clickhouse-server: each capture is split by observation point into
one file per point (what an agent at that point alone captures); one rdmatel per file writes
its point-local observations (export io_points --point-local --clickhouse URL); the shipped
views (sql/clickhouse/scaleout.sql) join them; rdmatel.io_joined must equal rdmatel export io
on the whole capture, record for record (frame numbers aside: each agent numbers its own file),
and rdmatel.messages_joined equal rdmatel export messages.

With --synth RDMATEL-SYNTH, also on generated captures: clock offsets of seconds between
points, a routed 3-point fabric with hosts and storage behind both leaves, 5 points in
dumpcap-like block order.

Usage: test_scaleout.py RDMATEL JOIN.sql [--synth RDMATEL-SYNTH] CAPTURE.pcapng..."""

GENERATED = [
    ("offsets", ["--scenario", "nvme-2point", "--seed", "5", "--clock-offset", "leafB-stor=2500000000"]),
    ("routed", ["--scenario", "nvme-3point", "--seed", "6", "--routed", "--cross", "--clock-offset", "spine1=-700000000"]),
    ("five_points", ["--scenario", "nvme-2point", "--seed", "7", "--points", "5", "--order", "blocks"]),
]

import json
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(__file__))
import pcapng_stream as ps  # noqa: E402
import servers  # noqa: E402
from rdmatel_testlib import fail, fail_if  # noqa: E402
from test_clickhouse import ClickHouse, export  # noqa: E402


def statements(path):
    with open(path) as f:
        sql = "\n".join(l for l in f.read().splitlines() if not l.lstrip().startswith("--"))
    return [s for s in sql.split(";\n") if s.strip()]


def canonical(rec, floats):
    out = {}
    for k, v in rec.items():
        if k in ("cmd_frame", "rsp_frame", "first_frame", "last_frame") or v is None:
            continue
        if isinstance(v, bool):
            v = int(v)
        elif k in floats:
            v = f"{float(v):.12g}"  # ClickHouse 18.16 parses decimals to within an ulp
        out[k] = v
    return json.dumps(out, sort_keys=True)


def main():
    if len(sys.argv) < 4:
        fail(__doc__)
    cli, join_sql, captures = sys.argv[1], sys.argv[2], sys.argv[3:]
    synth = None
    if captures[:1] == ["--synth"]:
        synth, captures = captures[1], captures[2:]
    if not shutil.which("clickhouse-server"):
        print("skipped: clickhouse-server is not installed (scripts/install-deps.sh --test installs it)")
        sys.exit(77)
    problems = []
    tmp = servers.TempDir("rdmatel_scale_")
    ch = None
    try:
        for name, args in GENERATED if synth else []:
            path = os.path.join(tmp.path, name + ".pcapng")
            g = subprocess.run([synth, *args, "--out", path], capture_output=True, text=True, timeout=300)
            if g.returncode != 0:
                fail(f"rdmatel-synth {' '.join(args)}: {g.stderr}")
            captures.append(path)
        ch = ClickHouse(tmp)
        ch.start()
        for capture in captures:
            name = os.path.basename(capture)
            cap = ps.Capture(capture)
            parts = ps.split_by_interface(cap)
            if len(parts) < 2:
                problems.append(f"{name}: one point only, nothing to join")
                continue
            for i, part in enumerate(parts):
                path = os.path.join(tmp.path, f"point{i}.pcapng")
                with open(path, "wb") as f:
                    f.write(part)
                p = subprocess.run([cli, "export", "io_points", path, "--point-local", "-q", "-o", os.devnull,
                                    "--clickhouse", ch.url], capture_output=True, text=True, timeout=120)
                if p.returncode != 0:
                    fail(f"{name} agent {i} exited {p.returncode}: {p.stderr}")
            # Point-local records only when asked for; as many as the agents wrote in all.
            off = export(cli, capture, "io_points")
            whole = subprocess.run([cli, "export", "io_points", capture, "--point-local", "-q"], capture_output=True,
                                   text=True, timeout=120).stdout.splitlines()
            stored = int(ch.query("SELECT count() FROM rdmatel.io_points FINAL"))
            if off or len(whole) != stored:
                problems.append(f"{name}: io_points without --point-local: {len(off)} (want 0); with it on the whole "
                                f"capture {len(whole)}, the agents wrote {stored}")
            for stmt in statements(join_sql):
                ch.query(stmt)
            summary = []
            for view, kind in (("io_joined", "io"), ("messages_joined", "messages")):
                floats = ch.float_columns(view)
                got = [json.loads(l) for l in ch.query(f"SELECT * FROM rdmatel.{view} FORMAT JSONEachRow").splitlines()
                       if l.strip()]
                exp = export(cli, capture, kind)
                e = sorted(canonical(r, floats) for r in exp)
                g = sorted(canonical(r, floats) for r in got)
                if e != g:
                    only_e, only_g = sorted(set(e) - set(g)), sorted(set(g) - set(e))
                    problems.append(f"{name}: {view} has {len(got)} records, export {kind} {len(exp)}; "
                                    f"{len(only_e)} only in export (e.g. {only_e[:1]}), {len(only_g)} only joined "
                                    f"(e.g. {only_g[:1]})")
                summary.append(f"{view} {len(got)} (export {kind} {len(exp)}{'' if e == g else ', DIFFERENT'})")
            print(f"{name}: {len(parts)} agents; " + ", ".join(summary))
            # The next capture starts from nothing (same addresses: roles must not mix).
            for table in ("io_points", "io", "messages", "flows", "congestion", "offsets"):
                ch.query(f"TRUNCATE TABLE rdmatel.{table}")
    finally:
        if ch:
            if problems:
                print(ch.server.log_text()[-1500:])
            ch.server.stop()
        tmp.cleanup()
    fail_if(problems, "problems")
    print("scale-out: OK")


if __name__ == "__main__":
    main()
