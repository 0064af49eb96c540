#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""rdmatel live -r - on a pipe: the records equal rdmatel export on the same bytes as a file;
records come out while the stream is still open (not only at its end); SIGINT ends the run
cleanly with every open record written.

Usage: test_live_stream.py RDMATEL CAPTURE.pcapng"""

import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(__file__))
import pcapng_stream as ps  # noqa: E402
from rdmatel_testlib import fail, fail_if  # noqa: E402


def sorted_lines(text):
    return sorted(line for line in text.splitlines() if line.strip())


def export(cli, path, kind):
    p = subprocess.run([cli, "export", kind, path, "--no-progress", "-q"], capture_output=True, text=True, timeout=120)
    if p.returncode != 0:
        fail(f"export {kind} {path} exited {p.returncode}: {p.stderr}")
    return sorted_lines(p.stdout)


def diff(expected, got, what):
    e, g = set(expected), set(got)
    problems = [f"{what}: missing {x}" for x in sorted(e - g)[:5]] + [f"{what}: unexpected {x}" for x in sorted(g - e)[:5]]
    if len(expected) != len(got):
        problems.append(f"{what}: {len(got)} records, expected {len(expected)}")
    return problems


def whole_stream(cli, capture):
    """cat CAPTURE | rdmatel live -r - gives the records export gives on the file."""
    problems = []
    for kind in ("io", "messages", "flows"):
        with open(capture, "rb") as f:
            p = subprocess.run([cli, "live", "-r", "-", "--records", kind, "-q"], stdin=f, capture_output=True,
                               text=True, timeout=120)
        if p.returncode != 0:
            fail(f"live -r - --records {kind} exited {p.returncode}: {p.stderr}")
        problems += diff(export(cli, capture, kind), sorted_lines(p.stdout), f"pipe {kind}")
    return problems


def incremental_then_sigint(cli, capture, tmp):
    """Two repetitions of the capture 20 s apart in stream time go into the pipe, which stays
    open: the first repetition's records must come out while it is open (the engine is time
    driven). SIGINT then ends the run; the records must be those export gives on the same
    bytes as a file (the second repetition's open I/Os end as capture_end)."""
    cap = ps.Capture(capture)
    shift = (cap.last_ns - cap.first_ns) + 20 * 10**9
    data = cap.header + ps.repetition_bytes(cap, 0, shift) + ps.repetition_bytes(cap, 1, shift)
    path = os.path.join(tmp, "two.pcapng")
    with open(path, "wb") as f:
        f.write(data)
    expected = export(cli, path, "io")
    first = export(cli, capture, "io")

    proc = subprocess.Popen([cli, "live", "-r", "-", "--records", "io", "--period", "0.2"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    lines, err = [], []
    readers = [threading.Thread(target=lambda: lines.extend(proc.stdout.read().decode().splitlines())),
               threading.Thread(target=lambda: err.append(proc.stderr.read().decode()))]
    # stdout is read line by line to see records arrive before the end of the stream.
    readers[0] = threading.Thread(target=lambda: [lines.append(l.decode().rstrip("\n")) for l in proc.stdout])
    for t in readers:
        t.start()
    problems = []
    try:
        proc.stdin.write(data)
        proc.stdin.flush()
        deadline = time.time() + 20
        while len(lines) < len(first) and time.time() < deadline and proc.poll() is None:
            time.sleep(0.05)
        if len(lines) < len(first):
            problems.append(f"only {len(lines)} of the first repetition's {len(first)} records came out while the stream was open")
        if proc.poll() is not None:
            problems.append(f"rdmatel ended before the stream did (exit {proc.returncode})")
        proc.send_signal(signal.SIGINT)
        rc = proc.wait(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        try:
            proc.stdin.close()
        except BrokenPipeError:
            pass
        for t in readers:
            t.join(timeout=10)
    stderr = "".join(err)
    if rc != 0:
        problems.append(f"live exited {rc} after SIGINT: {stderr}")
    if "I/Os (" not in stderr:
        problems.append("no period summary on standard error: " + stderr[:300])
    problems += diff(expected, sorted(l for l in lines if l.strip()), "after SIGINT")
    print(f"{len(first)} records before the stream ended, {len(lines)} after SIGINT (export: {len(expected)})")
    return problems


def main():
    if len(sys.argv) != 3:
        fail(__doc__)
    cli, capture = sys.argv[1], sys.argv[2]
    problems = whole_stream(cli, capture)
    with tempfile.TemporaryDirectory(prefix="rdmatel_live_") as tmp:
        problems += incremental_then_sigint(cli, capture, tmp)
    fail_if(problems, "problems")
    print("live stream: OK")


if __name__ == "__main__":
    main()
