# SPDX-License-Identifier: GPL-2.0-or-later
"""Helpers for integration tests: run the CLI, run the real tshark with the freshly built
plugin (as an unprivileged user when we are root, because root's tshark ignores personal
plugin folders), and read ground-truth files."""

import atexit
import csv
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile

SKIP = 77  # CTest SKIP_RETURN_CODE



def scratch_dir(prefix):
    """A temporary directory removed when the test exits, passed or failed (generated captures
    are large: a suite run must not leave gigabytes behind)."""
    path = tempfile.mkdtemp(prefix=prefix)
    atexit.register(shutil.rmtree, path, True)
    return path


def sanitized(cli):
    """Whether `cli` is built with AddressSanitizer, whose quarantine holds freed memory: its
    resident set then says nothing about rdmatel's."""
    return "libasan" in subprocess.run(["ldd", cli], capture_output=True, text=True).stdout


def fail(msg):
    print("FAIL: " + msg, file=sys.stderr)
    sys.exit(1)


def fail_if(problems, what, shown=None):
    """Prints the problems (the first `shown` of them) and fails with "N what" when there are any."""
    if problems:
        for p in problems[:shown]:
            print(p)
        fail(f"{len(problems)} {what}")


def generate_capture(synth, directory, name, args, seed, ios):
    """DIRECTORY/NAME.pcapng from rdmatel-synth ARGS and SEED, with IOS NVMe I/Os (the mixed and
    write-flows scenarios keep their own traffic)."""
    out = os.path.join(directory, name + ".pcapng")
    extra = [] if any(a in args for a in ("mixed", "write-flows")) else ["--ios", str(ios)]
    p = subprocess.run([synth, *args, *extra, "--seed", str(seed), "--out", out], capture_output=True, text=True,
                       timeout=300)
    if p.returncode != 0:
        fail(f"rdmatel-synth {' '.join(args)}: {p.stderr}")
    return out


def first_difference(a, b):
    """Where two outputs (text or bytes) first differ, for a failure message."""
    la = (a.decode(errors="replace") if isinstance(a, bytes) else a).splitlines()
    lb = (b.decode(errors="replace") if isinstance(b, bytes) else b).splitlines()
    for i, (x, y) in enumerate(zip(la, lb)):
        if x != y:
            return f"line {i + 1}: {x[:160]!r} vs {y[:160]!r}"
    return f"{len(la)} vs {len(lb)} lines"


def load_truth(capture):
    path = capture.replace(".pcapng", ".truth.json")
    with open(path) as f:
        return json.load(f)


def run_cli(cli, *args, check=True):
    p = subprocess.run([cli, *args], capture_output=True, text=True, timeout=600)
    if check and p.returncode != 0:
        fail(f"{cli} {' '.join(args)} exited {p.returncode}: {p.stderr}")
    return p


def cli_io_records(cli, capture, *extra):
    out = run_cli(cli, "export", "io", capture, "--format", "jsonl", "--no-progress", *extra).stdout
    return [json.loads(line) for line in out.splitlines() if line.strip()]


class Tshark:
    """tshark with only our plugin added to the normal ones, in a private HOME."""

    def __init__(self, plugin_so):
        self.home = tempfile.mkdtemp(prefix="rdmatel_tshark_")
        os.chmod(self.home, 0o755)
        plugdir = os.path.join(self.home, ".local/lib/wireshark/plugins/4.0/epan")
        os.makedirs(plugdir)
        shutil.copy(plugin_so, plugdir)
        for root, dirs, files in os.walk(self.home):
            for d in dirs:
                os.chmod(os.path.join(root, d), 0o755)
            for f in files:
                os.chmod(os.path.join(root, f), 0o644)
        self.root = os.geteuid() == 0

    def stage(self, capture):
        """Copies a capture where the unprivileged user can read it."""
        dst = os.path.join(self.home, os.path.basename(capture))
        if not os.path.exists(dst):
            shutil.copy(capture, dst)
            os.chmod(dst, 0o644)
        return dst

    def command(self, *args):
        """The command line and environment that run tshark with the plugin as the unprivileged
        user."""
        cmd = ["tshark", *args]
        env = {"HOME": self.home, "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LC_ALL": "C.UTF-8"}
        # A sanitizer-built plugin needs its runtime loaded first (scripts/ci-sanitize.sh sets
        # RDMATEL_TSHARK_PRELOAD to libasan.so); tshark's own leaks are by design.
        # The extcap helpers tshark starts to list capture interfaces would inherit the preload
        # (androiddump then never exits and tshark waits for it): none are needed to read files.
        if os.environ.get("RDMATEL_TSHARK_PRELOAD"):
            env["LD_PRELOAD"] = os.environ["RDMATEL_TSHARK_PRELOAD"]
            env["ASAN_OPTIONS"] = os.environ.get("RDMATEL_TSHARK_ASAN_OPTIONS", "detect_leaks=0")
            env["WIRESHARK_EXTCAP_DIR"] = os.path.join(self.home, "no-extcap")
            os.makedirs(env["WIRESHARK_EXTCAP_DIR"], mode=0o755, exist_ok=True)
        if self.root:
            cmd = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--", "env",
                   *[f"{k}={v}" for k, v in env.items()], *cmd]
        return cmd, env

    def run(self, *args, check=True, timeout=600):
        cmd, env = self.command(*args)
        p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout)
        if check and p.returncode != 0:
            fail(f"tshark {' '.join(args)} exited {p.returncode}: {p.stderr[-2000:]}")
        return p

    def fields(self, capture, fields, display_filter=None, two_pass=True, extra=()):
        args = ["-r", self.stage(capture), "-T", "fields", "-E", "separator=\t", "-E", "occurrence=a",
                "-E", "aggregator=|"]
        if two_pass:
            args.append("-2")
        if display_filter:
            args += ["-Y", display_filter]
        for f in fields:
            args += ["-e", f]
        args += list(extra)
        out = self.run(*args).stdout
        rows = []
        for line in out.splitlines():
            cols = line.split("\t")
            cols += [""] * (len(fields) - len(cols))
            rows.append(dict(zip(fields, cols)))
        return rows

    def close(self):
        shutil.rmtree(self.home, ignore_errors=True)


def us(value):
    """A µs value as an integer number of ns (exact for 3-decimal strings and tshark doubles)."""
    if value is None or value == "":
        return None
    return round(float(value) * 1000)


METRICS = ["dal_us", "dpl_us", "iol1_us", "iol2_us", "rtt_us", "iol_us"]
TIMES = [f"t{i}_ns" for i in range(1, 8)]


def io_key(rec):
    return (rec["host"], rec["storage"], int(rec["qpn"]), int(rec["cid"]), rec.get("cmd_frame"), rec.get("t2_ns"))


def measurable_ios(truth_ios):
    """The truth's I/Os the capture shows to be NVMe-oF: those on queue pairs where some I/O
    completed. A queue pair whose commands no completion answers in the capture cannot be told
    from another protocol over SEND; rdmatel leaves its commands out (and warns)."""
    answered = {(io["host"], io["storage"], io["qpn"]) for io in truth_ios if io.get("complete")}
    return [io for io in truth_ios if (io["host"], io["storage"], io["qpn"]) in answered]


def compare_ios(truth_ios, got_ios, label):
    """Every truth I/O must appear exactly once with identical timestamps and metrics."""
    problems = []
    got = {}
    for r in got_ios:
        got.setdefault(io_key(r), []).append(r)
    for t in truth_ios:
        k = io_key(t)
        cands = got.get(k, [])
        if len(cands) != 1:
            problems.append(f"{label}: truth I/O {k} op={t['op']} found {len(cands)} times")
            continue
        g = cands[0]
        for f in ["op", "complete"] + TIMES + ["rsp_frame"]:
            if t.get(f) != g.get(f):
                problems.append(f"{label}: I/O {k}: {f} truth={t.get(f)} got={g.get(f)}")
        for f in METRICS:
            if us(t.get(f)) != us(g.get(f)):
                problems.append(f"{label}: I/O {k}: {f} truth={t.get(f)} got={g.get(f)}")
    extra = len(got_ios) - len(truth_ios)
    if extra:
        problems.append(f"{label}: {len(got_ios)} I/Os reported, truth has {len(truth_ios)}")
    return problems
