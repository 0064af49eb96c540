#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Soak: rdmatel live -r - on a long synthetic stream (the capture repeated with shifted stamps
and PSNs, so every repetition's I/Os and messages are new ones) keeps its memory flat: the
resident set sampled over the run must not grow after the warm-up. And nothing is lost: the
I/O records equal the repetitions times the I/Os of one (counted by rdmatel export on the
capture). Ends with SIGTERM, as a service manager stops it.

Usage: test_live_soak.py RDMATEL CAPTURE.pcapng [SECONDS]"""

import os
import signal
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(__file__))
import pcapng_stream as ps  # noqa: E402
from rdmatel_testlib import fail, fail_if, sanitized  # noqa: E402


def rss_kb(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def main():
    if len(sys.argv) not in (3, 4):
        fail(__doc__)
    cli, capture = sys.argv[1], sys.argv[2]
    seconds = float(sys.argv[3]) if len(sys.argv) == 4 else 20.0
    one = subprocess.run([cli, "export", "io", capture, "-q"], capture_output=True, text=True, timeout=120)
    if one.returncode != 0:
        fail(f"export io exited {one.returncode}: {one.stderr}")
    ios_per_rep = len(one.stdout.splitlines())

    cap = ps.Capture(capture)
    # Longer than the I/O timeout (10 s): each repetition's open I/Os time out before the next.
    shift = (cap.last_ns - cap.first_ns) + 12 * 10**9
    with tempfile.TemporaryDirectory(prefix="rdmatel_soak_") as tmp:
        out = os.path.join(tmp, "io.jsonl")
        proc = subprocess.Popen([cli, "live", "-r", "-", "--records", "io", "-o", out, "-q"], stdin=subprocess.PIPE,
                                stderr=subprocess.PIPE)
        err = []
        errt = threading.Thread(target=lambda: err.append(proc.stderr.read().decode()))
        errt.start()
        samples = []  # (seconds since start, RSS kB)
        reps = 0
        start = time.time()
        try:
            proc.stdin.write(cap.header)
            next_sample = start
            while time.time() - start < seconds:
                proc.stdin.write(ps.repetition_bytes(cap, reps, shift, psn_step=7919))
                reps += 1
                if time.time() >= next_sample:
                    next_sample += 0.25
                    r = rss_kb(proc.pid)
                    if r:
                        samples.append((time.time() - start, r))
            proc.stdin.flush()
            # The stream stays open: SIGTERM ends it, every open record is written.
            time.sleep(1.0)
            samples.append((time.time() - start, rss_kb(proc.pid) or 0))
            proc.send_signal(signal.SIGTERM)
            rc = proc.wait(timeout=60)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            try:
                proc.stdin.close()
            except BrokenPipeError:
                pass
            errt.join(timeout=10)
        with open(out) as f:
            ios = sum(1 for line in f if line.strip())

    problems = []
    if rc != 0:
        problems.append(f"live exited {rc} after SIGTERM: {''.join(err)[:500]}")
    if ios != reps * ios_per_rep:
        problems.append(f"{ios} I/O records for {reps} repetitions of {ios_per_rep} I/Os ({reps * ios_per_rep})")
    # Warm-up: the first quarter (tables and buffers reach their working size).
    quarter = seconds / 4
    early = [r for t, r in samples if quarter <= t < 2 * quarter]
    late = [r for t, r in samples if t >= 3 * quarter]
    if not early or not late:
        problems.append(f"too few RSS samples: {samples}")
    else:
        bound = max(early) * 1.10 + 4096
        print(f"{reps} repetitions, {reps * len(cap.packets)} packets, {ios} I/O records; RSS kB: "
              f"max {max(early)} in [{quarter:.0f}s, {2 * quarter:.0f}s), max {max(late)} after {3 * quarter:.0f}s "
              f"(bound {bound:.0f}); all samples: {[r for _, r in samples][::4]}")
        if sanitized(cli):
            print("built with AddressSanitizer: the resident set is not checked")
        elif max(late) > bound:
            problems.append(f"memory grew: RSS {max(late)} kB late in the run, {max(early)} kB early")
    fail_if(problems, "problems")
    print("live soak: OK")


if __name__ == "__main__":
    main()
