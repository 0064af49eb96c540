#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""rdmatel live and the outputs fail clearly: one sentence, the documented exit status (2 bad
usage, 3 unreadable input), never a crash or a hang — an unknown interface, no permission to
capture, garbage or a cut stream on standard input, a Prometheus address in use, an unreachable
ClickHouse.

Usage: test_live_errors.py RDMATEL CAPTURE.pcapng"""

import os
import signal
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from rdmatel_testlib import fail, fail_if  # noqa: E402

problems = []


def expect(args, code, needle, stdin=None, prefix=()):
    p = subprocess.run([*prefix, *args], input=stdin, capture_output=True, timeout=60)
    err = p.stderr.decode(errors="replace")
    if p.returncode != code:
        problems.append(f"{args}: exit {p.returncode}, want {code} (stderr: {err.strip()[:300]})")
    elif needle not in err:
        problems.append(f"{args}: stderr lacks '{needle}': {err.strip()[:300]}")
    elif "Segmentation" in err or "terminate called" in err:
        problems.append(f"{args}: crashed: {err[:300]}")


def main():
    if len(sys.argv) != 3:
        fail(__doc__)
    cli, capture = sys.argv[1], sys.argv[2]
    with open(capture, "rb") as f:
        data = f.read()
    expect([cli, "live"], 2, "live needs either interfaces")
    expect([cli, "live", "-i", "lo", "-r", "-"], 2, "live needs either interfaces")
    expect([cli, "live", "-r", "-", "--records", "bogus"], 2, "unknown record kind 'bogus'")
    expect([cli, "live", "-r", "-", "extra"], 2, "live takes interfaces with -i")
    expect([cli, "live", "-i", "rdmatel-no-such0"], 3, "interface rdmatel-no-such0 not found")
    expect([cli, "live", "-i", "lo", "--filter", "not a ((( filter"], 3, "bad capture filter")
    expect([cli, "live", "-r", "-", "--prometheus", "nowhere"], 2, "--prometheus takes ADDR:PORT")
    expect([cli, "live", "-r", "-", "--clickhouse", "ftp://x"], 2, "--clickhouse takes an http:// URL")
    # Garbage and a cut stream on standard input: exit 3 after what could be read.
    expect([cli, "live", "-r", "-", "-q"], 3, "rdmatel:", stdin=b"this is not a capture\n" * 10)
    expect([cli, "live", "-r", "-", "-q"], 3, "error", stdin=data[: len(data) // 2 + 7])
    # A port in use (held here) and an unreachable ClickHouse (a port nobody listens on).
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen(1)
        port = held.getsockname()[1]
        expect([cli, "live", "-r", "-", "--prometheus", f"127.0.0.1:{port}"], 2, "cannot listen on", stdin=data)
        with socket.socket() as closed:
            closed.bind(("127.0.0.1", 0))
            free = closed.getsockname()[1]
        expect([cli, "export", "io", capture, "--clickhouse", f"http://127.0.0.1:{free}", "-o", os.devnull], 2,
               "cannot create the rdmatel tables in ClickHouse")
    # SIGINT while waiting for a stream's first bytes: a clean stop, not a read error or a hang.
    p = subprocess.Popen([cli, "live", "-r", "-"], stdin=subprocess.PIPE, stderr=subprocess.PIPE)
    time.sleep(0.5)
    p.send_signal(signal.SIGINT)
    try:
        _, err = p.communicate(timeout=10)
        if p.returncode != 0 or b"error:" in err or b"stopped" not in err:
            problems.append(f"SIGINT before the stream: exit {p.returncode}, stderr {err.decode()[:200]}")
    except subprocess.TimeoutExpired:
        p.kill()
        p.communicate()
        problems.append("SIGINT before the stream: rdmatel hung")
    # No permission to capture: as an unprivileged user (when we are root and setpriv exists).
    if os.geteuid() == 0 and os.path.exists("/usr/bin/setpriv"):
        expect([cli, "live", "-i", "lo"], 3, "no permission to capture on lo",
               prefix=("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--"))
    fail_if(problems, "problems")
    print("live errors: OK")


if __name__ == "__main__":
    main()
