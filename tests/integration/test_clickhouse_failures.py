#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""--clickhouse when the server misbehaves, against a stand-in HTTP server on 127.0.0.1 that
takes the CREATE statements and then (a) refuses every INSERT with HTTP 500 (at once, or the
refusal that drops a batch only after the end's timeout), or (b) goes away, or takes an INSERT and
never answers it:
rdmatel (export, and live stopped by SIGTERM) must end within its --clickhouse-timeout, report how many records were not inserted
and exit 3 — never hang, never claim success. And (c) a server that takes everything gets every
record (counted by the stand-in against rdmatel export).

Usage: test_clickhouse_failures.py RDMATEL CAPTURE.pcapng"""

import http.server
import os
import re
import signal
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(__file__))
from rdmatel_testlib import fail, fail_if  # noqa: E402


class StandIn(http.server.ThreadingHTTPServer):
    def __init__(self, mode):
        self.mode = mode
        self.rows = 0
        self.inserts = 0
        super().__init__(("127.0.0.1", 0), Handler)


class Handler(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        srv = self.server
        insert = "INSERT" in self.path
        if insert:
            srv.inserts += 1
        if insert and srv.mode == "refuse-late" and srv.inserts == 5:
            # The fifth refusal of the first batch (the one that drops it) answered after the
            # end's 3 s timeout has run out: it was counted lost twice, at the end and when
            # this answer came in.
            time.sleep(5)
        if insert and srv.mode in ("refuse", "refuse-late"):
            self.send_response(500)
            self.end_headers()
            self.wfile.write(b"Code: 27, e.displayText() = DB::Exception: Cannot parse input\n")
            return
        if insert and srv.mode == "vanish":
            self.close_connection = True
            return  # no answer at all
        if insert and srv.mode == "hang":
            time.sleep(60)  # took the request, never answers (the client's read timeout is 30 s)
            return
        if insert:
            srv.rows += body.count(b"\n")
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()


def run(cli, capture, mode):
    srv = StandIn(mode)
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    start = time.time()
    p = subprocess.run([cli, "export", "io", capture, "-o", os.devnull, "--clickhouse",
                        f"http://127.0.0.1:{srv.server_address[1]}", "--clickhouse-timeout", "3",
                        "--clickhouse-batch", "200"], capture_output=True, text=True, timeout=120)
    took = time.time() - start
    srv.shutdown()
    return p, took, srv


def main():
    if len(sys.argv) != 3:
        fail(__doc__)
    cli, capture = sys.argv[1], sys.argv[2]
    problems = []
    total = 0
    # Every kind rdmatel inserts: the tables of its schema (io_points only with --point-local).
    schema = subprocess.run([cli, "clickhouse-schema"], capture_output=True, text=True, timeout=60).stdout
    kinds = [w.split(".", 1)[1].split()[0].split("(")[0] for w in re.findall(r"CREATE TABLE IF NOT EXISTS (rdmatel\.\w+)", schema)]
    kinds = [k for k in kinds if k != "io_points"]
    if len(kinds) < 6:
        fail(f"rdmatel clickhouse-schema names {kinds}")
    for kind in kinds:
        e = subprocess.run([cli, "export", kind, capture, "-q"], capture_output=True, text=True, timeout=60)
        total += len(e.stdout.splitlines())
    for mode in ("refuse", "refuse-late", "vanish", "hang"):
        p, took, srv = run(cli, capture, mode)
        m = re.search(r"error: (\d+) records were not inserted into ClickHouse", p.stderr)
        if p.returncode != 3 or not m:
            problems.append(f"{mode}: exit {p.returncode}, stderr {p.stderr.strip()[:300]}")
        elif int(m.group(1)) != total:
            problems.append(f"{mode}: {m.group(1)} records reported lost, {total} were sent to nobody")
        # The end waits the 3 s timeout, and the refusal held 5 s past its start (refuse-late);
        # not a server's read timeout (30 s).
        if took > 20:
            problems.append(f"{mode}: took {took:.0f} s with a 3 s timeout")
        print(f"{mode}: exit {p.returncode} after {took:.1f} s, {srv.inserts} INSERT attempts: {p.stderr.strip()[-120:]}")
    # Live, the server gone, stopped by SIGTERM: ends within the timeout, reports, exit 3.
    srv = StandIn("vanish")
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    with open(capture, "rb") as f:
        data = f.read()
    live = subprocess.Popen([cli, "live", "-r", "-", "--records", "none", "--clickhouse",
                             f"http://127.0.0.1:{srv.server_address[1]}", "--clickhouse-timeout", "3"],
                            stdin=subprocess.PIPE, stderr=subprocess.PIPE)
    live.stdin.write(data)
    live.stdin.flush()
    time.sleep(2)
    start = time.time()
    live.send_signal(signal.SIGTERM)
    try:
        _, err = live.communicate(timeout=60)
        took = time.time() - start
        err = err.decode()
        if live.returncode != 3 or "were not inserted into ClickHouse" not in err or took > 20:
            problems.append(f"live, server gone, SIGTERM: exit {live.returncode} after {took:.1f} s: {err[-300:]}")
        print(f"live, server gone, SIGTERM: exit {live.returncode} after {took:.1f} s")
    except subprocess.TimeoutExpired:
        live.kill()
        live.communicate()
        problems.append("live, server gone, SIGTERM: rdmatel hung")
    srv.shutdown()
    p, took, srv = run(cli, capture, "take")
    if p.returncode != 0 or srv.rows != total:
        problems.append(f"take: exit {p.returncode}, {srv.rows} rows received, export has {total}: {p.stderr[-300:]}")
    fail_if(problems, "problems")
    print("clickhouse failures: OK")


if __name__ == "__main__":
    main()
