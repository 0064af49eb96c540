#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""--clickhouse against a real clickhouse-server (Debian's 18.16, started here as an
unprivileged user on 127.0.0.1 with its own config and data folder):
1. rdmatel export io CAPTURE --clickhouse URL: the tables are created; the rows of every table
   equal rdmatel export KIND of the same capture, record for record;
2. no loss on a server restart: rdmatel live -r - streams repetitions of the capture while the
   server is killed (SIGKILL, a crash) and started again; the rows equal rdmatel export io of the
   same bytes as a file;
3. the shipped sql/clickhouse/rdmatel.sql is what rdmatel clickhouse-schema prints;
4. a table an older rdmatel made (congestion without its `dscp` column) gains the column and
   takes the rows.

Usage: test_clickhouse.py RDMATEL CAPTURE.pcapng SCHEMA.sql"""

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
import urllib.parse

sys.path.insert(0, os.path.dirname(__file__))
import pcapng_stream as ps  # noqa: E402
import servers  # noqa: E402
from rdmatel_testlib import fail, fail_if  # noqa: E402

KINDS = ["io", "messages", "flows", "congestion", "offsets"]

CONFIG = """<yandex>
  <logger><level>warning</level><console>1</console></logger>
  <http_port>{http}</http_port>
  <tcp_port>{tcp}</tcp_port>
  <listen_host>127.0.0.1</listen_host>
  <path>{data}/</path>
  <tmp_path>{data}/tmp/</tmp_path>
  <users_config>/etc/clickhouse-server/users.xml</users_config>
  <default_profile>default</default_profile>
  <default_database>default</default_database>
  <mark_cache_size>5368709120</mark_cache_size>
</yandex>
"""


class ClickHouse:
    def __init__(self, tmp):
        self.http_port, self.tcp_port = servers.free_port(), servers.free_port()
        data = tmp.subdir("ch")
        config = os.path.join(tmp.path, "clickhouse.xml")
        with open(config, "w") as f:
            f.write(CONFIG.format(http=self.http_port, tcp=self.tcp_port, data=data))
        os.chmod(config, 0o644)
        self.url = f"http://127.0.0.1:{self.http_port}"
        self.server = servers.Server("clickhouse", servers.unprivileged(
            [shutil.which("clickhouse-server"), f"--config-file={config}"]), tmp.path)

    def start(self):
        self.server.start()
        if not servers.wait_http(self.url + "/", 60, self.server):
            fail(f"clickhouse-server did not start: {self.server.log_text()}")

    def kill(self):
        os.killpg(self.server.proc.pid, signal.SIGKILL)
        self.server.proc.wait()
        self.server.proc = None

    def query(self, sql):
        url = self.url + "/?" + urllib.parse.urlencode({"output_format_json_quote_64bit_integers": 0})
        status, body = servers.http(url, data=sql.encode(), timeout=60)
        if status != 200:
            fail(f"ClickHouse query failed ({status}): {sql}: {body[:500]}")
        return body

    def float_columns(self, table):
        body = self.query(f"DESCRIBE TABLE rdmatel.{table} FORMAT TabSeparated")
        return {l.split("\t")[0] for l in body.splitlines() if "Float64" in l}

    def rows(self, table, run_filter):
        body = self.query(f"SELECT * FROM rdmatel.{table} FINAL WHERE {run_filter} FORMAT JSONEachRow")
        return [json.loads(l) for l in body.splitlines() if l.strip()]


def export(cli, path, kind):
    p = subprocess.run([cli, "export", kind, path, "-q"], capture_output=True, text=True, timeout=120)
    if p.returncode != 0:
        fail(f"export {kind} exited {p.returncode}: {p.stderr}")
    return [json.loads(l) for l in p.stdout.splitlines() if l.strip()]


def canonical(rec, floats):
    """A record as a comparable string: NULLs are absent values, booleans 0/1 (UInt8), Float64
    columns to 12 significant digits (ClickHouse 18.16 parses decimals to within an ulp:
    27.702 is stored as 27.701999999999998; rdmatel writes at most 12 digits)."""
    out = {}
    for k, v in rec.items():
        if k in ("rdmatel_run", "rdmatel_seq") or v is None:
            continue
        if isinstance(v, bool):
            v = int(v)
        elif k in floats:
            v = f"{float(v):.12g}"
        out[k] = v
    return json.dumps(out, sort_keys=True)


def compare(label, expected, got, floats):
    e = sorted(canonical(r, floats) for r in expected)
    g = sorted(canonical(r, floats) for r in got)
    if e == g:
        return []
    missing, extra = sorted(set(e) - set(g)), sorted(set(g) - set(e))
    return [f"{label}: {len(got)} rows, export has {len(expected)}; only in export: {missing[:2]}; "
            f"only in ClickHouse: {extra[:2]}"]


def runs(ch):
    return set(ch.query("SELECT DISTINCT rdmatel_run FROM rdmatel.io").split())


def main():
    if len(sys.argv) != 4:
        fail(__doc__)
    cli, capture, shipped = sys.argv[1:]
    if not shutil.which("clickhouse-server"):
        print("skipped: clickhouse-server is not installed (scripts/install-deps.sh --test installs it)")
        sys.exit(77)
    problems = []
    printed = subprocess.run([cli, "clickhouse-schema"], capture_output=True, text=True, timeout=30).stdout
    with open(shipped) as f:
        if f.read() != printed:
            problems.append(f"{shipped} differs from rdmatel clickhouse-schema (regenerate it)")

    tmp = servers.TempDir("rdmatel_ch_")
    ch = None
    live = None
    try:
        ch = ClickHouse(tmp)
        ch.start()
        # 4. The congestion table as rdmatel made it before `dscp` existed: the shipped statement
        # without that column.
        ch.query("CREATE DATABASE IF NOT EXISTS rdmatel")
        (old,) = [st for st in printed.split(";\n\n") if "rdmatel.congestion\n" in st]
        old = "\n".join(l for l in old.splitlines() if "`dscp`" not in l)
        if old == [st for st in printed.split(";\n\n") if "rdmatel.congestion\n" in st][0]:
            fail("the schema has no dscp column to leave out")
        ch.query(old)
        # 1. export with --clickhouse: every table equals export of its kind.
        p = subprocess.run([cli, "export", "io", capture, "--clickhouse", ch.url, "-o", os.devnull],
                           capture_output=True, text=True, timeout=120)
        if p.returncode != 0:
            fail(f"export --clickhouse exited {p.returncode}: {p.stderr}")
        (run1,) = runs(ch)
        counts = {}
        for kind in KINDS:
            exp = export(cli, capture, kind)
            got = ch.rows(kind, f"rdmatel_run = '{run1}'")
            counts[kind] = (len(got), len(exp))
            problems += compare(f"table {kind}", exp, got, ch.float_columns(kind))
        if "dscp" not in ch.query("DESCRIBE TABLE rdmatel.congestion FORMAT TabSeparated"):
            problems.append("the older congestion table did not gain its dscp column")
        print("rows in ClickHouse vs export: " + ", ".join(f"{k} {g}/{e}" for k, (g, e) in counts.items()))

        # analyze --clickhouse fills the same tables.
        p = subprocess.run([cli, "analyze", capture, "--clickhouse", ch.url], capture_output=True, text=True, timeout=120)
        if p.returncode != 0:
            fail(f"analyze --clickhouse exited {p.returncode}: {p.stderr}")
        (run_a,) = runs(ch) - {run1}
        for kind in ("io", "messages"):
            problems += compare(f"analyze: table {kind}", export(cli, capture, kind),
                                ch.rows(kind, f"rdmatel_run = '{run_a}'"), ch.float_columns(kind))
        run1 = {run1, run_a}

        # 2. A server crash and restart while live inserts.
        cap = ps.Capture(capture)
        shift = (cap.last_ns - cap.first_ns) + 12 * 10**9
        reps = 12
        reps_data = [ps.repetition_bytes(cap, k, shift) for k in range(reps)]
        tail = ps.tail_bytes(cap, reps * shift)
        stream = os.path.join(tmp.path, "stream.pcapng")
        with open(stream, "wb") as f:
            f.write(cap.header + b"".join(reps_data) + tail)
        live = subprocess.Popen([cli, "live", "-r", "-", "--records", "none", "--clickhouse", ch.url,
                                 "--clickhouse-batch", "100", "--clickhouse-timeout", "60"],
                                stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        err = []
        errt = threading.Thread(target=lambda: err.append(live.stderr.read().decode()))
        errt.start()
        live.stdin.write(cap.header)
        for k, data in enumerate(reps_data):
            live.stdin.write(data)
            live.stdin.flush()
            time.sleep(0.25)
            if k == 3:
                ch.kill()  # a crash: batches in flight get no answer and are sent again
            if k == 7:
                ch.start()
        live.stdin.write(tail)
        live.stdin.flush()
        time.sleep(3)
        live.send_signal(signal.SIGINT)
        rc = live.wait(timeout=120)
        errt.join(timeout=10)
        stderr = "".join(err)
        if rc != 0:
            problems.append(f"live --clickhouse exited {rc} across the restart: {stderr[-800:]}")
        (run2,) = runs(ch) - run1
        exp = export(cli, stream, "io")
        got = ch.rows("io", f"rdmatel_run = '{run2}'")
        problems += compare("io across a server restart", exp, got, ch.float_columns("io"))
        raw = int(ch.query(f"SELECT count() FROM rdmatel.io WHERE rdmatel_run = '{run2}'"))
        print(f"across the restart: {len(got)} I/O rows (FINAL; {raw} stored), export of the same bytes: {len(exp)}; "
              f"rdmatel said: {stderr.strip().splitlines()[-1] if stderr.strip() else ''}")
        if "retries" not in stderr or " 0 retries" in stderr:
            problems.append("the restart caused no retry: the test did not test it")
    finally:
        if live and live.poll() is None:
            live.kill()
            live.wait()
        if ch:
            if problems:
                print(ch.server.log_text()[-1500:])
            ch.server.stop()
        tmp.cleanup()
    fail_if(problems, "problems")
    print("clickhouse: OK")


if __name__ == "__main__":
    main()
