#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Corruption campaign, after Wireshark's tools/fuzz-test.sh: corrupts captures and runs every
one through the CLI (`rdmatel analyze`, `rdmatel export io`) and through tshark with the plugin
(`tshark -2 -V -r FILE`), each with a time limit, and reports crashes, hangs, sanitizer reports
and unclear errors.

    scripts/corruption-campaign.py [--count 1000] [--raw 200] [--jobs N] [--timeout 60]
                                   [--cli PATH] [--plugin PATH] [--keep DIR] [CAPTURE ...]

Sources: CAPTURE arguments, else samples/*.pcapng and the real captures (shared/captures/
*.pcapng.gz, decompressed into the work folder; cut to --max-packets packets so one tshark run
stays short). Corruption:
  - `editcap -E RATE --seed SEED` for RATE in --rates (packet bytes; the file stays well formed);
    --count files, cycling over sources, rates and seeds;
  - "raw": --raw more files whose bytes are flipped anywhere (block headers, lengths, options)
    and which are cut at a random offset, so readers meet broken files too.
What counts as a failure:
  - CLI: an exit status other than 0 or 3, a signal, a timeout, a sanitizer report, exit 3 without
    an "rdmatel: error:" sentence, an export that is not valid UTF-8 JSON lines;
  - tshark: a signal or an exit status other than 0 (2 is accepted when tshark itself says the
    file is damaged or cut short), a timeout, a sanitizer report, or rdmatel's own trouble in the
    output ("rdmatel internal error", "Dissector bug, protocol RDMATEL", "Malformed Packet: RDMATEL").
    A tshark failure is re-run without the plugin: failures that happen there too are Wireshark's
    and are listed apart.
Sanitizer builds: a plugin linked against libasan gets LD_PRELOAD=$(gcc -print-file-name=libasan.so)
and ASAN_OPTIONS=detect_leaks=0 inside tshark (tshark leaks by design).
As root, tshark runs as nobody (setpriv) in a private HOME holding the plugin (root's tshark
ignores personal plugins). Failing inputs are copied to --keep (default build/corruption-failures).
Exit status 0 when nothing failed, 1 otherwise, 2 on bad usage, 77 (CTest's skip) when editcap
or tshark is not installed.
"""
import argparse
import concurrent.futures
import glob
import gzip
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SANITIZER_MARKS = (b"ERROR: AddressSanitizer", b"runtime error:", b"ERROR: LeakSanitizer",
                   b"ERROR: UndefinedBehaviorSanitizer", b"SUMMARY: AddressSanitizer")
TSHARK_FILE_ERRORS = (b"appears to be damaged or corrupt", b"appears to have been cut short",
                      b"isn't a capture file in a format", b"has a packet larger than",
                      b"has a packet with a", b"has a block", b"Less data was read than was expected",
                      b"isn't a capture file", b"has an unsupported", b"The file")
RDMATEL_TROUBLE = (b"rdmatel internal error", b"Dissector bug, protocol RDMATEL", b"Malformed Packet: RDMATEL",
                   b"Dissector bug, protocol RDMA")


def find_default(paths):
    for p in paths:
        full = os.path.join(REPO, p)
        if os.path.exists(full):
            return full
    return None


def run_limited(cmd, timeout, env=None, stdout=subprocess.PIPE):
    """Runs cmd in its own process group; returns (status, stdout, stderr, seconds). status is the
    exit code, -signal, or "timeout"."""
    start = time.monotonic()
    p = subprocess.Popen(cmd, stdout=stdout, stderr=subprocess.PIPE, env=env, start_new_session=True)
    try:
        out, err = p.communicate(timeout=timeout)
        status = p.returncode
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, err = p.communicate()
        status = "timeout"
    return status, out or b"", err or b"", time.monotonic() - start


def sanitizer_report(err):
    return any(m in err for m in SANITIZER_MARKS)


class Tshark:
    def __init__(self, plugin, work, sanitized):
        self.home = os.path.join(work, "home")
        self.bare = os.path.join(work, "home-bare")  # no plugin: the baseline
        plugdir = os.path.join(self.home, ".local/lib/wireshark/plugins/4.0/epan")
        os.makedirs(plugdir, exist_ok=True)
        os.makedirs(self.bare, exist_ok=True)
        shutil.copy(plugin, plugdir)
        for d, _dirs, files in os.walk(work):
            os.chmod(d, 0o755)
            for f in files:
                os.chmod(os.path.join(d, f), 0o644)
        self.root = os.geteuid() == 0
        # No extcap helpers: they list capture interfaces, useless for reading files, cost time at
        # every start and never exit when the ASan runtime is preloaded into them.
        noextcap = os.path.join(work, "no-extcap")
        os.makedirs(noextcap, exist_ok=True)
        self.env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LC_ALL": "C.UTF-8",
                    "WIRESHARK_EXTCAP_DIR": noextcap}
        if sanitized:
            lib = subprocess.run(["gcc", "-print-file-name=libasan.so"], capture_output=True, text=True).stdout.strip()
            self.env["LD_PRELOAD"] = lib
            self.env["ASAN_OPTIONS"] = "detect_leaks=0:abort_on_error=0"
            self.env["UBSAN_OPTIONS"] = "print_stacktrace=1"

    def command(self, args, with_plugin=True):
        env = dict(self.env, HOME=self.home if with_plugin else self.bare)
        cmd = ["tshark", *args]
        if self.root:
            cmd = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--", "env",
                   *[f"{k}={v}" for k, v in env.items()], *cmd]
        return cmd, env

    def check_plugin_loads(self):
        cmd, env = self.command(["-G", "plugins"])
        st, out, err, _ = run_limited(cmd, 120, env)
        return b"rdmatel.so" in out, err.decode("utf-8", "replace")


def corrupt_raw(src, dst, rng):
    with open(src, "rb") as f:
        data = bytearray(f.read())
    flips = max(1, int(len(data) * rng.choice((1e-5, 1e-4, 1e-3))))
    for _ in range(flips):
        i = rng.randrange(len(data))
        data[i] = rng.randrange(256) if rng.random() < 0.5 else data[i] ^ (1 << rng.randrange(8))
    # Block headers are what readers trust most: hit a few length fields near the start too.
    for _ in range(rng.randrange(4)):
        i = rng.randrange(min(len(data), 4096)) & ~3
        data[i:i + 4] = rng.choice((b"\xff\xff\xff\xff", b"\x00\x00\x00\x00", b"\x0c\x00\x00\x00",
                                     os.urandom(4)))
    if rng.random() < 0.5:
        del data[rng.randrange(len(data)):]
    with open(dst, "wb") as f:
        f.write(data)


def run_cli(cli, args, path, timeout, env, problems):
    """Runs `rdmatel ARGS PATH`; adds what is wrong with the way it ended to `problems`."""
    name = " ".join(args)
    st, out, err, secs = run_limited([cli, *args, path, "--no-progress"], timeout, env)
    if st == "timeout":
        problems.append(f"{name}: no result within {timeout} s")
    elif st not in (0, 3):
        problems.append(f"{name}: exit status {st}")
    if sanitizer_report(err):
        problems.append(f"{name}: sanitizer report")
    if st == 3 and b"rdmatel: " not in err:
        problems.append(f"{name}: exit 3 without an error sentence")
    return st, out, err, secs


def check_cli(cli, path, timeout, env):
    problems = []
    st, out, err, secs = run_cli(cli, ["analyze"], path, timeout, env, problems)
    if st == 0 and b"capture:" not in out:
        problems.append("analyze: no report printed")
    st2, out2, err2, secs2 = run_cli(cli, ["export", "io"], path, timeout, env, problems)
    if st2 in (0, 3):
        try:
            for line in out2.decode("utf-8").splitlines():
                if line.strip():
                    json.loads(line)
        except (UnicodeDecodeError, ValueError) as e:
            problems.append(f"export io: output is not valid JSON lines ({type(e).__name__}: {str(e)[:80]})")
    detail = {"analyze": st, "export": st2, "cli_s": round(secs + secs2, 2)}
    return problems, detail, (err + err2)


def check_tshark(tshark, path, timeout, out_path):
    cmd, env = tshark.command(["-2", "-V", "-r", path])
    with open(out_path, "wb") as out:
        st, _, err, secs = run_limited(cmd, timeout, env, stdout=out)
    problems = []
    trouble = b""
    with open(out_path, "rb") as f:
        while True:
            chunk = f.read(1 << 22)
            if not chunk:
                break
            for m in RDMATEL_TROUBLE:
                if m in chunk:
                    trouble = m
    os.unlink(out_path)
    if st == "timeout":
        problems.append(f"tshark: no result within {timeout} s")
    elif st != 0 and not (st == 2 and any(m in err for m in TSHARK_FILE_ERRORS)):
        problems.append(f"tshark: exit status {st}: {err.decode('utf-8', 'replace').strip()[-200:]}")
    if sanitizer_report(err):
        problems.append("tshark: sanitizer report")
    if trouble:
        problems.append(f"tshark: output shows {trouble.decode()!r}")
    baseline = None
    if problems and not trouble and not sanitizer_report(err):
        bcmd, benv = tshark.command(["-2", "-V", "-r", path], with_plugin=False)
        bst, _, berr, _ = run_limited(bcmd, timeout, benv, stdout=subprocess.DEVNULL)
        baseline = bst
        if bst == st:
            problems = [f"(wireshark, also without the plugin) {p}" for p in problems]
    return problems, {"tshark": st, "tshark_s": round(secs, 2), "baseline": baseline}, err


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("captures", nargs="*")
    ap.add_argument("--count", type=int, default=1000, help="editcap-corrupted files")
    ap.add_argument("--raw", type=int, default=200, help="files corrupted anywhere and cut")
    ap.add_argument("--rates", default="0.001,0.01,0.05,0.2")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--timeout", type=int, default=60, help="seconds per command")
    ap.add_argument("--max-packets", type=int, default=10000, help="cut sources to this many packets")
    ap.add_argument("--cli", default=find_default(["build/sanitize/cli/rdmatel", "build/test/cli/rdmatel",
                                                  "build/cli/rdmatel"]))
    ap.add_argument("--plugin", default=find_default(["build/sanitize/plugin/4.0/epan/rdmatel.so",
                                                     "build/test/plugin/4.0/epan/rdmatel.so",
                                                     "build/plugin/4.0/epan/rdmatel.so"]))
    ap.add_argument("--no-tshark", action="store_true")
    ap.add_argument("--no-cli", action="store_true")
    ap.add_argument("--keep", default=os.path.join(REPO, "build", "corruption-failures"))
    ap.add_argument("--results", help="write one JSON line per file here")
    args = ap.parse_args()

    for tool in ["editcap"] + ([] if args.no_tshark else ["tshark"]):
        if not shutil.which(tool):
            print(f"corruption-campaign: {tool} not found (apt-get install tshark): skipped", file=sys.stderr)
            return 77
    if not args.no_cli and (not args.cli or not os.access(args.cli, os.X_OK)):
        print("corruption-campaign: no rdmatel binary (build first or pass --cli)", file=sys.stderr)
        return 2
    if not args.no_tshark and (not args.plugin or not os.path.exists(args.plugin)):
        print("corruption-campaign: no rdmatel.so (build first or pass --plugin)", file=sys.stderr)
        return 2

    work = tempfile.mkdtemp(prefix="rdmatel_corrupt_")
    os.chmod(work, 0o755)
    try:
        return campaign(args, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def campaign(args, work):
    srcdir = os.path.join(work, "src")
    os.makedirs(srcdir)
    inputs = args.captures
    if not inputs:
        inputs = sorted(glob.glob(os.path.join(REPO, "samples", "*.pcapng")))
        for d in (os.path.join(REPO, "..", "shared", "captures"), "/work/shared/captures"):
            found = sorted(glob.glob(os.path.join(d, "*.pcapng.gz")))
            if found:
                inputs += found
                break
    sources = []
    for path in inputs:
        name = os.path.basename(path).replace(".gz", "")
        dst = os.path.join(srcdir, name)
        if path.endswith(".gz"):
            with gzip.open(path, "rb") as f, open(dst, "wb") as o:
                shutil.copyfileobj(f, o)
        else:
            shutil.copy(path, dst)
        if args.max_packets:
            cut = dst + ".cut"
            subprocess.run(["editcap", "-r", dst, cut, f"1-{args.max_packets}"], check=True,
                           capture_output=True)
            os.replace(cut, dst)
        sources.append(dst)
    if not sources:
        print("corruption-campaign: no captures to corrupt", file=sys.stderr)
        return 2
    rates = [float(r) for r in args.rates.split(",")]

    sanitized = False
    if args.plugin and not args.no_tshark:
        needed = subprocess.run(["readelf", "-d", args.plugin], capture_output=True, text=True).stdout
        sanitized = "libasan" in needed
    tshark = None
    if not args.no_tshark:
        tshark = Tshark(args.plugin, os.path.join(work, "tshark"), sanitized)
        ok, err = tshark.check_plugin_loads()
        if not ok:
            print(f"corruption-campaign: tshark does not load the plugin: {err[-500:]}", file=sys.stderr)
            return 2
    files_dir = os.path.join(work, "files")
    os.makedirs(files_dir)
    os.chmod(files_dir, 0o755)
    cli_env = dict(os.environ)
    cli_env.setdefault("ASAN_OPTIONS", "detect_leaks=1")

    plan = []
    for i in range(args.count):
        src = sources[i % len(sources)]
        rate = rates[(i // len(sources)) % len(rates)]
        plan.append(("editcap", src, rate, args.seed + i))
    for i in range(args.raw):
        plan.append(("raw", sources[i % len(sources)], None, args.seed + 100000 + i))

    print(f"corruption-campaign: {len(plan)} corrupted captures from {len(sources)} sources "
          f"({', '.join(os.path.basename(s) for s in sources)}), rates {args.rates} and raw, "
          f"{args.jobs} jobs, {args.timeout} s per command"
          f"{', sanitizer plugin (LD_PRELOAD libasan)' if sanitized else ''}", flush=True)
    lock = threading.Lock()
    results = []
    failures = []
    started = time.monotonic()

    def one(k, item):
        mode, src, rate, seed = item
        base = f"{k:05d}-{os.path.basename(src)[:-7]}-{mode}{'' if rate is None else '-' + str(rate)}-s{seed}.pcapng"
        path = os.path.join(files_dir, base)
        if mode == "editcap":
            subprocess.run(["editcap", "-E", str(rate), "--seed", str(seed), src, path], check=True,
                           capture_output=True)
        else:
            corrupt_raw(src, path, random.Random(seed))
        os.chmod(path, 0o644)
        rec = {"file": base, "mode": mode, "rate": rate, "seed": seed, "source": os.path.basename(src)}
        problems = []
        if not args.no_cli:
            p, d, err = check_cli(args.cli, path, args.timeout, cli_env)
            problems += p
            rec.update(d)
            if p:
                rec["cli_stderr"] = err.decode("utf-8", "replace")[-3000:]
        if tshark:
            p, d, err = check_tshark(tshark, path, args.timeout, path + ".out")
            problems += p
            rec.update(d)
            if p:
                rec["tshark_stderr"] = err.decode("utf-8", "replace")[-3000:]
        rec["problems"] = problems
        ours = [p for p in problems if not p.startswith("(wireshark")]
        if problems:
            os.makedirs(args.keep, exist_ok=True)
            shutil.copy(path, os.path.join(args.keep, base))
        os.unlink(path)
        with lock:
            results.append(rec)
            if ours:
                failures.append(rec)
            n = len(results)
            if n % 50 == 0 or ours:
                el = time.monotonic() - started
                print(f"  {n}/{len(plan)} files, {len(failures)} failing, {el:.0f} s"
                      + (f"  FAIL {base}: {'; '.join(ours)}" if ours else ""), flush=True)
        return rec

    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as ex:
        list(ex.map(lambda kv: one(*kv), enumerate(plan)))

    elapsed = time.monotonic() - started
    if args.results:
        with open(args.results, "w") as f:
            for r in sorted(results, key=lambda r: r["file"]):
                f.write(json.dumps(r) + "\n")

    def count(key, value):
        return sum(1 for r in results if r.get(key) == value)

    print(f"\n{len(results)} corrupted captures in {elapsed:.0f} s")
    if not args.no_cli:
        print(f"  rdmatel analyze:   exit 0: {count('analyze', 0)}, exit 3 (corrupt input reported): "
              f"{count('analyze', 3)}, other: {len(results) - count('analyze', 0) - count('analyze', 3)}")
        print(f"  rdmatel export io: exit 0: {count('export', 0)}, exit 3: {count('export', 3)}, "
              f"other: {len(results) - count('export', 0) - count('export', 3)}")
    if tshark:
        print(f"  tshark -2 -V:      exit 0: {count('tshark', 0)}, exit 2 (file damaged, said tshark): "
              f"{count('tshark', 2)}, other: {len(results) - count('tshark', 0) - count('tshark', 2)}; "
              f"slowest {max((r.get('tshark_s', 0) for r in results), default=0):.1f} s")
    wireshark_only = [r for r in results if r["problems"] and r not in failures]
    if wireshark_only:
        print(f"  Wireshark's own failures (the same without the plugin): {len(wireshark_only)}")
        for r in wireshark_only[:10]:
            print(f"    {r['file']}: {'; '.join(r['problems'])}")
    if failures:
        print(f"FAILED: {len(failures)} captures (kept in {args.keep}):")
        for r in failures[:40]:
            print(f"  {r['file']}: {'; '.join(p for p in r['problems'] if not p.startswith('(wireshark'))}")
        return 1
    print("OK: no crash, hang or sanitizer report")
    return 0


if __name__ == "__main__":
    sys.exit(main())
