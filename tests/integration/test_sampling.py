# SPDX-License-Identifier: GPL-2.0-or-later
"""Key flows and port polling (SPEC §7) against the generator's truth: with --key-flow only the
key flows' I/Os are measured, exactly as without it; with --poll-ports N each period measures the
next N points, so every message record comes from a point polled in its period and every truth
message wholly inside a polled period is measured unchanged; key flows stay measured while
polling; records say key_flow and their polling period.

usage: test_sampling.py RDMATEL_CLI SAMPLES_DIR
"""

import json
import os
import sys

from rdmatel_testlib import cli_io_records, compare_ios, fail_if, load_truth, run_cli

PERIOD_NS = 5_000_000  # 5 ms periods: a few per 20 ms sample


def messages(cli, capture, *extra):
    out = run_cli(cli, "export", "messages", capture, "--format", "jsonl", "--no-progress", *extra).stdout
    return [json.loads(line) for line in out.splitlines() if line.strip()]


def polled(point_index, first_ns, n, points):
    """The SPEC's schedule, written apart from the engine: period k polls points k*n .. k*n+n-1 mod P."""
    k = first_ns // PERIOD_NS
    return (point_index - k * n) % points < n


def main():
    cli, samples = sys.argv[1], sys.argv[2]
    problems = []
    for name in ("nvme_2point.pcapng", "nvme_3point.pcapng", "mixed.pcapng"):
        capture = os.path.join(samples, name)
        truth = load_truth(capture)
        points = [p["name"] for p in sorted(truth["points"], key=lambda p: p["id"])]
        host = "10.1.0.1"
        key_ios = [io for io in truth["ios"] if io["host"] == host]

        # Key flows without polling: only they are measured, each exactly as the truth has it.
        got = cli_io_records(cli, capture, "--key-flow", host)
        problems += compare_ios(key_ios, got, f"{name} --key-flow {host}")
        problems += [f"{name}: I/O {r['cid']} without key_flow" for r in got if r.get("key_flow") is not True]

        # Polling: 1 point per 5 ms period.
        args = ["--poll-ports", "1", "--period", str(PERIOD_NS / 1e9)]
        msgs = messages(cli, capture, *args)
        for m in msgs:
            if not polled(points.index(m["point"]), m["first_ns"], 1, len(points)):
                problems.append(f"{name}: message at {m['point']} {m['first_ns']}: that point is not polled then")
            if m.get("poll_period_ns") != m["first_ns"] // PERIOD_NS * PERIOD_NS:
                problems.append(f"{name}: message poll_period_ns {m.get('poll_period_ns')} for first_ns {m['first_ns']}")
        have = {(m["src"], m["dst"], m["dst_qpn"], m["point"], m["first_psn"]): m for m in msgs}
        inside = 0
        for t in truth["messages"]:
            if t["first_ns"] // PERIOD_NS != t["last_ns"] // PERIOD_NS:
                continue
            if not polled(points.index(t["point"]), t["first_ns"], 1, len(points)):
                continue
            inside += 1
            g = have.get((t["src"], t["dst"], t["dst_qpn"], t["point"], t["first_psn"]))
            if not g or any(g[f] != t[f] for f in ("last_psn", "packets", "bytes", "retrans_packets", "naks")):
                problems.append(f"{name}: polled truth message {t['src']}>{t['dst']} PSN {t['first_psn']} at "
                                f"{t['point']}: got {g and {f: g[f] for f in ('packets', 'bytes')}}")
        if inside == 0:
            problems.append(f"{name}: no message inside a polled period: the test proves nothing")

        # Key flows and polling together: the key flow's I/Os are still all there.
        got = cli_io_records(cli, capture, "--key-flow", host, *args)
        mine = [r for r in got if r["host"] == host]
        problems += compare_ios(key_ios, mine, f"{name} --key-flow {host} polled")
        problems += [f"{name}: polled I/O without poll_period_ns" for r in got if "poll_period_ns" not in r]

    p = run_cli(cli, "export", "io", os.path.join(samples, "nvme_2point.pcapng"), "--key-flow", "10.1.0/24", check=False)
    if p.returncode != 2 or "key-flow" not in p.stderr:
        problems.append(f"--key-flow 10.1.0/24: exit {p.returncode}, {p.stderr.strip()!r}")
    fail_if(problems, "key-flow / polling problems", shown=20)
    print("key flows and polling: records against the truth on 3 samples")


if __name__ == "__main__":
    main()
