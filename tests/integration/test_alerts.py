# SPDX-License-Identifier: GPL-2.0-or-later
"""Alerts (SPEC §7): threshold rules fire exactly once per I/O or message whose metric crosses
them (expected sets from the generator's truth), scoped rules only in their scope; spike alerts
name the storage server slowed for one second of a ten-second workload, in that second only, and
a healthy capture has none; bad rules are usage errors; in Wireshark the Alerts table (UAT) marks
exactly the I/Os the CLI's alerts name.

usage: test_alerts.py RDMATEL_CLI RDMATEL_SYNTH [PLUGIN_SO]
"""

import json
import os
import subprocess
import sys

from rdmatel_testlib import Tshark, fail_if, load_truth, run_cli, scratch_dir

IO_RULES = {"rtt>30": ("rtt_us", None), "storage=10.2.0.2:dal>700": ("dal_us", "10.2.0.2"), "iol1>900": ("iol1_us", None)}
MSG_RULES = ["fct>100", "fnr>0.05", "fet<2e9"]


def alerts(cli, capture, *rules, spikes=True):
    args = [] if spikes else ["--spike-factor", "0"]
    for r in rules:
        args += ["--alert", r]
    out = run_cli(cli, "export", "alerts", capture, "--format", "jsonl", "--no-progress", *args).stdout
    return [json.loads(line) for line in out.splitlines() if line.strip()]


def msg_value(m, rule):
    if rule.startswith("fct"):
        return m["fct_us"]
    if rule.startswith("fnr"):
        return m["fnr"] if m["packets"] > m["retrans_packets"] else None
    return (m["bytes"] - m["retrans_bytes"]) * 8 / (m["fct_us"] * 1e-6) if m["fct_us"] > 0 else None


def check_thresholds(cli, capture):
    truth = load_truth(capture)
    got = alerts(cli, capture, *IO_RULES, *MSG_RULES, spikes=False)
    problems = []
    for rule, (metric, storage) in IO_RULES.items():
        threshold = float(rule.split(">")[1])
        want = {(io["host"], io["storage"], io["cid"], io["cmd_frame"]) for io in truth["ios"]
                if metric in io and io[metric] > threshold and (storage is None or io["storage"] == storage)}
        have = [(a["host"], a["storage"], a["cid"], a["cmd_frame"]) for a in got if a["rule"] == rule]
        if sorted(have) != sorted(want):
            problems.append(f"{rule}: {len(have)} alerts, truth {len(want)}; extra {sorted(set(have) - want)[:3]}, "
                            f"missing {sorted(want - set(have))[:3]}")
        if not want:
            problems.append(f"{rule}: the capture has no I/O above it: the test proves nothing")
    for rule in MSG_RULES:
        above = ">" in rule
        threshold = float(rule.replace("<", ">").split(">")[1])
        want = set()
        for m in truth["messages"]:
            v = msg_value(m, rule)
            if v is not None and (v > threshold if above else v < threshold):
                want.add((m["src"], m["dst"], m["dst_qpn"], m["point"], m["first_psn"]))
        have = [(a["src"], a["dst"], a["dst_qpn"], a["point"], a["first_psn"]) for a in got if a["rule"] == rule]
        if sorted(have) != sorted(want):
            problems.append(f"{rule}: {len(have)} alerts, truth {len(want)}; extra {sorted(set(have) - want)[:3]}, "
                            f"missing {sorted(want - set(have))[:3]}")
        if not want:
            problems.append(f"{rule}: no message crosses it: the test proves nothing")
    return problems


def check_spikes(cli, synth, tmp):
    problems = []
    base = ["--scenario", "nvme-2point", "--ios", "3000", "--duration-s", "10", "--loss", "0"]
    healthy = os.path.join(tmp, "calm.pcapng")
    subprocess.run([synth, *base, "--out", healthy], check=True, capture_output=True, timeout=300)
    calm = [a for a in alerts(cli, healthy) if a["kind"] == "spike"]
    problems += [f"healthy 10 s capture: spike {a['scope']} at {a['time_ns']}" for a in calm]
    spiky = os.path.join(tmp, "spike.pcapng")
    subprocess.run([synth, *base, "--slow-storage", "1=2000@6-7", "--out", spiky], check=True, capture_output=True,
                   timeout=300)
    # The injected I/Os: storage 1's, their DAL 2 ms above the usual (at most 0.5 ms); their
    # commands' periods are where spikes may be.
    slow = [io for io in load_truth(spiky)["ios"] if io["storage"] == "10.2.0.1" and io.get("dal_us", 0) > 1500]
    periods = {io["t1_ns"] // 1_000_000_000 for io in slow} | {io["t2_ns"] // 1_000_000_000 for io in slow}
    spikes = [a for a in alerts(cli, spiky) if a["kind"] == "spike"]
    if not any(a["scope"] == "storage 10.2.0.1" for a in spikes):
        problems.append(f"slowed storage 10.2.0.1: no spike (spikes: {[a['scope'] for a in spikes]})")
    for a in spikes:
        if a["scope"] not in ("storage 10.2.0.1", "host 10.1.0.1", "host 10.1.0.2"):
            problems.append(f"spike on {a['scope']}, which the fault does not touch")
        if a["time_ns"] // 1_000_000_000 not in periods:
            problems.append(f"spike on {a['scope']} at {a['time_ns']}, outside the slowed second {sorted(periods)}")
        if not a["value"] >= 3 * a["baseline"]:
            problems.append(f"spike {a}: value not 3 x baseline")
    return problems, spiky


def check_usage(cli, capture):
    problems = []
    for bad, words in (("bogus>1", "unknown metric"), ("storage=10.2.0.1:fct>1", "scopes I/O metrics"),
                       ("rtt>fast", "not a number"), ("rtt", "METRIC>VALUE"), ("host=10.1.0.999:rtt>1", "IP address")):
        p = run_cli(cli, "analyze", capture, "--alert", bad, check=False)
        if p.returncode != 2 or words not in p.stderr:
            problems.append(f"--alert '{bad}': exit {p.returncode}, {p.stderr.strip()!r}")
    return problems


def check_wireshark(plugin, cli, capture):
    want = {a["frame"] for a in alerts(cli, capture, "rtt>30", spikes=False)}
    ts = Tshark(plugin)
    try:
        rows = ts.fields(capture, ["frame.number", "rdmatel.slow_io", "rdmatel.alert"], display_filter="rdmatel.slow_io",
                         extra=["-o", 'uat:rdmatel_alerts:"rtt>30"'])
    finally:
        ts.close()
    have = {int(r["frame.number"]) for r in rows}
    problems = []
    if have != want:
        problems.append(f"Wireshark alerts on {len(have)} frames, the CLI's on {len(want)}: "
                        f"extra {sorted(have - want)[:5]}, missing {sorted(want - have)[:5]}")
    if any("RTT" not in r["rdmatel.alert"] for r in rows):
        problems.append("rdmatel.alert does not name RTT")
    return problems


def main():
    cli, synth = sys.argv[1], sys.argv[2]
    plugin = sys.argv[3] if len(sys.argv) > 3 else None
    tmp = scratch_dir("rdmatel_alerts_")
    capture = os.path.join(tmp, "slow.pcapng")
    subprocess.run([synth, "--scenario", "nvme-2point", "--hosts", "3", "--storages", "3", "--ios", "900",
                    "--slow-storage", "2=400", "--out", capture], check=True, capture_output=True, timeout=300)
    problems = check_thresholds(cli, capture)
    spike_problems, _ = check_spikes(cli, synth, tmp)
    problems += spike_problems
    problems += check_usage(cli, capture)
    if plugin:
        problems += check_wireshark(plugin, cli, capture)
    fail_if(problems, "alert problems", shown=20)
    print("alerts: thresholds against the truth, spikes in the slowed second only, usage errors" +
          (", Wireshark" if plugin else ""))


if __name__ == "__main__":
    main()
