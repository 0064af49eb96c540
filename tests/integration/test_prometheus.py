#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""rdmatel live --prometheus scraped by a real Prometheus server (Debian's prometheus, started
here as an unprivileged user on 127.0.0.1, with the shipped rules file loaded): the values
Prometheus stores equal those computed from rdmatel export of the same bytes (I/O counts per
host, storage and op; latency histogram counts, sums and a bucket; RDMA bytes per flow and
point; a recording rule). Congestion counters move while live mode runs (not only at its stop):
on a generated capture with CE marks, CNPs and PFC pauses (rdmatel-synth), the CE, CNP and PFC
counters Prometheus scrapes before rdmatel is stopped equal export congestion of the same bytes.
The label limit: with --prometheus-max-series N, N label sets are kept and the refused
observations are counted. The shipped rules pass promtool check rules.

Usage: test_prometheus.py RDMATEL CAPTURE.pcapng RULES.yml [RDMATEL-SYNTH]"""

import json
import math
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections import Counter, defaultdict

sys.path.insert(0, os.path.dirname(__file__))
import pcapng_stream as ps  # noqa: E402
import servers  # noqa: E402
from rdmatel_testlib import fail, fail_if  # noqa: E402


def export(cli, path, kind):
    p = subprocess.run([cli, "export", kind, path, "-q"], capture_output=True, text=True, timeout=120)
    if p.returncode != 0:
        fail(f"export {kind} exited {p.returncode}: {p.stderr}")
    return [json.loads(l) for l in p.stdout.splitlines() if l.strip()]


class Live:
    """rdmatel live -r - fed `data` through a pipe that stays open until stop()."""

    def __init__(self, cli, data, *args):
        self.proc = subprocess.Popen([cli, "live", "-r", "-", "--records", "none", *args], stdin=subprocess.PIPE,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        self.err = []
        self.t = threading.Thread(target=lambda: [self.err.append(l.decode()) for l in self.proc.stderr])
        self.t.start()
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def port(self):
        deadline = time.time() + 15
        while time.time() < deadline:
            for line in self.err:
                m = re.search(r"metrics at http://[^:]+:(\d+)/metrics", line)
                if m:
                    return int(m.group(1))
            if self.proc.poll() is not None:
                break
            time.sleep(0.05)
        fail(f"rdmatel did not report its metrics port: {''.join(self.err)}")

    def stop(self):
        rc = None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                rc = self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        else:
            rc = self.proc.returncode
        try:
            self.proc.stdin.close()
        except BrokenPipeError:
            pass
        self.t.join(timeout=10)
        return rc


def expected_values(ios, messages):
    exp = {}
    exp["ios"] = Counter((("host", r["host"]), ("op", r["op"]), ("storage", r["storage"])) for r in ios)
    exp["incomplete"] = Counter((("host", r["host"]), ("op", r["op"]), ("storage", r["storage"]))
                                for r in ios if not r["complete"])
    for m in ("iol1", "rtt", "dal"):
        cnt, tot, le100 = Counter(), defaultdict(int), Counter()
        for r in ios:
            if f"{m}_us" in r:
                k = (("host", r["host"]), ("storage", r["storage"]))
                ns = round(r[f"{m}_us"] * 1000)
                cnt[k] += 1
                tot[k] += ns
                if ns <= 100_000:
                    le100[k] += 1
        exp[m] = (cnt, tot, le100)
    b = Counter()
    for r in messages:
        b[(("dst", r["dst"]), ("kind", r["kind"]), ("point", r["point"]), ("src", r["src"]))] += r["bytes"]
    exp["bytes"] = b
    return exp


def strip_job(result):
    """Prometheus adds job and instance labels: compare on ours."""
    return {tuple(kv for kv in k if kv[0] not in ("job", "instance")): v for k, v in (result or {}).items()}


def compare(name, expected, got, problems, rel=0.0):
    for k in set(expected) | set(got):
        e, g = expected.get(k), got.get(k)
        if e is None or g is None or abs(e - g) > rel * abs(e):
            problems.append(f"{name}{dict(k)}: Prometheus has {g}, export gives {e}")


def main():
    if len(sys.argv) not in (4, 5):
        fail(__doc__)
    cli, capture, rules = sys.argv[1:4]
    synth = sys.argv[4] if len(sys.argv) > 4 else None
    prom = shutil.which("prometheus")
    promtool = shutil.which("promtool")
    if not prom or not promtool:
        print("skipped: prometheus is not installed (scripts/install-deps.sh --test installs it)")
        sys.exit(77)
    chk = subprocess.run([promtool, "check", "rules", rules], capture_output=True, text=True, timeout=60)
    if chk.returncode != 0:
        fail(f"promtool check rules {rules}: {chk.stdout}{chk.stderr}")

    cap = ps.Capture(capture)
    data = cap.header + ps.repetition_bytes(cap, 0, 0) + ps.tail_bytes(cap, 30 * 10**9)
    tmp = servers.TempDir("rdmatel_prom_")
    problems = []
    live = prometheus = small = cong = None
    try:
        stream = os.path.join(tmp.path, "stream.pcapng")
        with open(stream, "wb") as f:
            f.write(data)
        exp = expected_values(export(cli, stream, "io"), export(cli, stream, "messages"))

        live = Live(cli, data, "--prometheus", "127.0.0.1:0")
        port = live.port()
        if synth:
            gen = os.path.join(tmp.path, "congestion.pcapng")
            subprocess.run([synth, "--scenario", "nvme-2point", "--seed", "3", "--ios", "200", "--out", gen,
                            "--ecn-mark", "leafA-gpu:leafB-stor=0.2", "--pfc-pause", "leafB-stor:3=4@0.002"],
                           check=True, capture_output=True, timeout=120)
            ccap = ps.Capture(gen)
            cdata = ccap.header + ps.repetition_bytes(ccap, 0, 0) + ps.tail_bytes(ccap, 30 * 10**9)
            cstream = os.path.join(tmp.path, "congestion_stream.pcapng")
            with open(cstream, "wb") as f:
                f.write(cdata)
            want_ce, want_cnp, want_pfc = Counter(), Counter(), Counter()
            for r in export(cli, cstream, "congestion"):
                if r["kind"] == "ecn":
                    k = (("dst", r["dst"]), ("point", r["point"]), ("src", r["src"]))
                    want_ce[k] += r["ce_packets"]
                    want_cnp[k] += r["cnp_packets"]
                elif r["kind"] == "pfc":
                    want_pfc[(("point", r["point"]), ("priority", str(r["priority"])))] += r["frames"]
            if not sum(want_ce.values()) or not sum(want_cnp.values()) or not sum(want_pfc.values()):
                fail(f"the generated capture has no CE marks, CNPs or PFC frames: {want_ce} {want_pfc}")
            cong = Live(cli, cdata, "--prometheus", "127.0.0.1:0")
            cport = cong.port()
        ppath = servers.free_port()
        shutil.copy(rules, os.path.join(tmp.path, "rules.yml"))
        config = os.path.join(tmp.path, "prometheus.yml")
        with open(config, "w") as f:
            f.write("global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
                    "rule_files: [rules.yml]\n"
                    f"scrape_configs:\n  - job_name: rdmatel\n    static_configs:\n      - targets: ['127.0.0.1:{port}']\n")
        os.chmod(config, 0o644)
        os.chmod(os.path.join(tmp.path, "rules.yml"), 0o644)
        prometheus = servers.Server("prometheus", servers.unprivileged(
            [prom, f"--config.file={config}", f"--storage.tsdb.path={tmp.subdir('data')}",
             f"--web.listen-address=127.0.0.1:{ppath}"]), tmp.path)
        prometheus.start()
        base = f"http://127.0.0.1:{ppath}"
        if not servers.wait_http(base + "/-/ready", 60, prometheus):
            fail(f"Prometheus did not start: {prometheus.log_text()}")

        total = sum(exp["ios"].values())
        # The recording rule (interval 15 s in the shipped file) gives the total once evaluated.
        deadline = time.time() + 90
        recorded = None
        while time.time() < deadline:
            r = servers.prom_query(base, "rdmatel:nvme_ios:total")
            if r:
                recorded = list(r.values())[0]
                if recorded == total:
                    break
            time.sleep(0.5)
        if recorded != total:
            problems.append(f"recording rule rdmatel:nvme_ios:total is {recorded}, export has {total} I/Os")

        compare("rdmatel_nvme_ios_total", exp["ios"], strip_job(servers.prom_query(base, "rdmatel_nvme_ios_total")), problems)
        compare("rdmatel_nvme_ios_incomplete_total", exp["incomplete"],
                strip_job(servers.prom_query(base, "rdmatel_nvme_ios_incomplete_total")), problems)
        for m in ("iol1", "rtt", "dal"):
            cnt, tot, le100 = exp[m]
            compare(f"rdmatel_nvme_{m}_seconds_count", cnt,
                    strip_job(servers.prom_query(base, f"rdmatel_nvme_{m}_seconds_count")), problems)
            compare(f"rdmatel_nvme_{m}_seconds_sum", {k: v / 1e9 for k, v in tot.items()},
                    strip_job(servers.prom_query(base, f"rdmatel_nvme_{m}_seconds_sum")), problems, rel=1e-9)
            got = strip_job(servers.prom_query(base, f"rdmatel_nvme_{m}_seconds_bucket"))
            got = {tuple(kv for kv in k if kv[0] != "le"): v for k, v in got.items()
                   if float(dict(k)["le"]) == 1e-4}
            compare(f"rdmatel_nvme_{m}_seconds_bucket(le=100us)", {k: le100.get(k, 0) for k in cnt}, got, problems)
        compare("rdmatel_rdma_bytes_total", exp["bytes"], strip_job(servers.prom_query(base, "rdmatel_rdma_bytes_total")),
                problems)
        if cong:
            # Still running (its input stays open): the counters come from the periodic snapshots.
            # Scraped directly (the server above scrapes the first instance only: its recording rule
            # sums every target).
            def scrape_counters():
                _, text = servers.http(f"http://127.0.0.1:{cport}/metrics")
                out = {n: {} for n in ("ecn_ce_packets", "cnp_packets", "pfc_frames")}
                for m in re.finditer(r"^rdmatel_(ecn_ce_packets|cnp_packets|pfc_frames)_total\{([^}]*)\} (\S+)$",
                                     text or "", re.M):
                    labels = tuple(sorted(tuple(kv.split("=", 1)) for kv in re.findall(r'\w+="[^"]*"', m.group(2))))
                    labels = tuple((k, v.strip('"')) for k, v in labels)
                    out[m.group(1)][labels] = float(m.group(3))
                return out
            deadline = time.time() + 60
            while time.time() < deadline:
                got = scrape_counters()
                if (sum(got["ecn_ce_packets"].values()) == sum(want_ce.values())
                        and sum(got["pfc_frames"].values()) == sum(want_pfc.values())):
                    break
                time.sleep(0.5)
            if cong.proc.poll() is not None:
                problems.append("rdmatel live on the congestion capture stopped before it was scraped")
            compare("rdmatel_ecn_ce_packets_total (live, before stop)", {k: v for k, v in want_ce.items() if v},
                    {k: v for k, v in got["ecn_ce_packets"].items() if v}, problems)
            compare("rdmatel_cnp_packets_total (live, before stop)", {k: v for k, v in want_cnp.items() if v},
                    {k: v for k, v in got["cnp_packets"].items() if v}, problems)
            compare("rdmatel_pfc_frames_total (live, before stop)", want_pfc, got["pfc_frames"], problems)
        dropped = servers.prom_query(base, "rdmatel_prometheus_dropped_total")
        if not dropped or list(dropped.values())[0] != 0:
            problems.append(f"rdmatel_prometheus_dropped_total is {dropped}, expected 0 under the default limit")

        # The label limit, scraped directly.
        small = Live(cli, data, "--prometheus", "127.0.0.1:0", "--prometheus-max-series", "20")
        sport = small.port()
        text = ""
        deadline = time.time() + 30
        while time.time() < deadline:
            _, text = servers.http(f"http://127.0.0.1:{sport}/metrics")
            m = re.search(r"^rdmatel_prometheus_dropped_total (\S+)$", text, re.M)
            if m and float(m.group(1)) > 0:
                break
            time.sleep(0.2)
        # Labelled series (rdmatel's own counters have no labels and are not limited); a
        # histogram is one label set: counted by its _count line.
        series = sum(1 for l in text.splitlines() if "{" in l and not l.startswith("#")
                     and not l.split("{")[0].endswith(("_bucket", "_sum")))
        m = re.search(r"^rdmatel_prometheus_series (\S+)$", text, re.M)
        if not m or float(m.group(1)) != 20 or series != 20:
            problems.append(f"with --prometheus-max-series 20: rdmatel_prometheus_series {m and m.group(1)}, "
                            f"{series} label sets exposed")
        if not re.search(r"^rdmatel_prometheus_dropped_total [1-9]", text, re.M):
            problems.append("with --prometheus-max-series 20 nothing was counted as dropped")
        print(f"{total} I/Os; Prometheus agrees with export on {len(exp['ios'])} ios_total series, "
              f"{len(exp['bytes'])} bytes series; limit 20: {series} label sets")
    finally:
        for p in (live, small, cong):
            if p:
                rc = p.stop()
                if rc != 0:
                    problems.append(f"rdmatel live exited {rc}: {''.join(p.err)[-500:]}")
        if prometheus:
            if problems:
                print(prometheus.log_text()[-1500:])
            prometheus.stop()
        tmp.cleanup()
    fail_if(problems, "problems", 30)
    print("prometheus: OK")


if __name__ == "__main__":
    main()
