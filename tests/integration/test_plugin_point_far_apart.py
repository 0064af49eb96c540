#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The Wireshark plugin on one file whose points' packets lie far apart in file order: the CLI
reads such a file right (each interface is a point, reordered on its own), and the plugin must
give the CLI's numbers, which are the generator's ground truth.

 - offset: a 2-point capture merged by stamp whose storage sniffer's clock runs 1.5 s ahead
   (mixed scenario: NVMe-oF and a GPU write flow): the file begins with 1.5 s of the compute
   point's packets alone, the storage point's first packet comes after them.
 - offset_hops: the same with write flows only, the storage leaf's GPU point ahead: the hop view.
 - concat: per-point files joined as mergecap -a joins them (every interface described at the
   start, then each point's packets in stamp order, one point after the other), no clock offset.

The plugin used to declare a point at its interface's first frame, where the CLI declares every
interface of the file when it opens it: until then the engine did not know the late point would
come, so the first point's I/Os and hops were final before its copies arrived (the storage
point's commands found no I/O, "NVMe completion whose command is not in the capture"; IOL2 and
RTT on a few I/Os; hops lost). Checked: the CLI against the truth (I/Os to the ns, hops' packets
and losses), the plugin against the CLI (test_cli_vs_tshark.py: every I/O and message, and here
every hop: delivered packets, delays, losses) and against the truth (IOL2 on both frames of every
I/O that has one, delivered and lost hop packets).

Usage: test_plugin_point_far_apart.py RDMATEL_SYNTH RDMATEL PLUGIN_SO"""
import collections
import json
import os
import subprocess
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
import pcapng_stream as ps  # noqa: E402
from rdmatel_testlib import (Tshark, cli_io_records, compare_ios, fail, fail_if, generate_capture,  # noqa: E402
                             load_truth, measurable_ios, run_cli, scratch_dir)

if len(sys.argv) != 4:
    fail(__doc__)
synth, cli, plugin = sys.argv[1:]
tmp = scratch_dir("rdmatel_far_apart_")
problems = []


def concatenated(tidy, name):
    """The tidy capture's points one after the other (mergecap -a of per-point files), and the
    frame numbers of the tidy capture's frames in it."""
    out = os.path.join(tmp, name + ".pcapng")
    return out, ps.concatenate_points(tidy, out)


def truth_of(cap, new_frame=None):
    """The capture's truth, its frame numbers moved to the file's order."""
    truth = load_truth(cap)
    if new_frame:
        for io in truth["ios"]:
            for k in ("cmd_frame", "rsp_frame"):
                if io.get(k):
                    io[k] = new_frame[io[k]]
    return truth


def export_paths(cap):
    out = run_cli(cli, "export", "paths", cap, "--format", "jsonl", "--no-progress").stdout
    return [json.loads(line) for line in out.splitlines() if line.strip()]


def hop_key(r):
    return (r["src"], r["dst"], int(r["dst_qpn"]), r["from_point"], r["to_point"])


def plugin_hops(ts, cap):
    """Per hop (flow, from point, to point): the packets the plugin shows delivered across it and
    the sum of their delays (µs); and the frames it marks lost after their point."""
    rows = ts.fields(cap, ["frame.number", "rdmatel.point", "rdmatel.hop.prev_frame", "rdmatel.hop.delay", "ip.src",
                           "ip.dst", "infiniband.bth.destqp", "rdmatel.hop.lost"], "rdmatel.point")
    point_of = {r["frame.number"]: r["rdmatel.point"] for r in rows}
    hops = collections.defaultdict(lambda: [0, 0.0])
    lost = 0
    for r in rows:
        lost += r["rdmatel.hop.lost"].split("|")[0] in ("1", "True")
        if not r["rdmatel.hop.prev_frame"]:
            continue
        flow = (r["ip.src"].split("|")[-1], r["ip.dst"].split("|")[-1], int(r["infiniband.bth.destqp"].split("|")[-1], 16))
        for prev, delay in zip(r["rdmatel.hop.prev_frame"].split("|"), r["rdmatel.hop.delay"].split("|")):
            h = hops[(*flow, point_of.get(prev, "?"), r["rdmatel.point"])]
            h[0] += 1
            h[1] += float(delay)
    return hops, lost


def check(label, cap, truth, hops=False):
    # The CLI: the truth (the reference the plugin is held to through it).
    ios = measurable_ios(truth["ios"])
    problems.extend(compare_ios(ios, cli_io_records(cli, cap), f"{label} CLI"))
    # The plugin: every I/O and message as the CLI has it.
    p = subprocess.run([sys.executable, os.path.join(here, "test_cli_vs_tshark.py"), cli, plugin, cap],
                       capture_output=True, text=True, timeout=600)
    if p.returncode != 0:
        lines = p.stdout.strip().splitlines()
        problems.append(f"{label}: the plugin differs from the CLI: {lines[-1] if lines else p.stderr[-500:]}; "
                        f"first: {lines[0] if lines else ''}")
    ts = Tshark(plugin)
    try:
        # The plugin against the truth: IOL2 on the command and completion frames of each I/O.
        iol2 = ts.fields(cap, ["frame.number"], "rdmatel.iol2")
        want = 2 * sum("iol2_us" in io for io in ios)
        if len(iol2) != want:
            problems.append(f"{label}: the plugin shows IOL2 on {len(iol2)} frames, the truth's I/Os on {want}")
        commands = collections.Counter(r["frame.interface_name"] for r in ts.fields(
            cap, ["frame.interface_name"], 'rdmatel.io.stage == "command"'))
        unknown = ts.fields(cap, ["frame.number"], '_ws.expert.message contains "command is not in the capture"')
        if unknown:
            problems.append(f"{label}: the plugin finds {len(unknown)} completions without their command "
                            f"(commands per point: {dict(commands)})")
        if not hops:
            return
        cli_paths = {hop_key(r): r for r in export_paths(cap)}
        truth_hops = {hop_key(h): h for h in truth["hops"]}
        got, lost = plugin_hops(ts, cap)
    finally:
        ts.close()
    for k in sorted(set(truth_hops) | set(cli_paths) | set(got)):
        t, c = truth_hops.get(k), cli_paths.get(k)
        delivered = int(c["packets"]) - int(c["lost"]) if c else 0
        if t is None or c is None or int(c["packets"]) != t["packets"] or delivered != t["delivered"]:
            problems.append(f"{label} CLI: hop {k}: {c and (c['packets'], c['lost'])}, truth "
                            f"{t and (t['packets'], t['lost'])}")
        n, total = got.get(k, (0, 0.0))
        if t is not None and n != t["delivered"]:
            problems.append(f"{label}: the plugin shows {n} packets across hop {k}, the truth {t['delivered']}")
        if c is not None and delivered and abs(total - float(c["avg_us"]) * delivered) > 0.002 * delivered + 0.01:
            problems.append(f"{label}: hop {k}: the plugin's delays sum to {total:.3f} us, the CLI's "
                            f"{float(c['avg_us']) * delivered:.3f} us")
    want_lost = sum(h["lost"] for h in truth["hops"])
    if lost != want_lost:
        problems.append(f"{label}: the plugin marks {lost} frames lost after their point, the truth has {want_lost} lost")


# 1.5 s of clock offset, 2 s of traffic: from about 0.6 s of offset on the plugin went wrong.
cap = generate_capture(synth, tmp, "offset", ["--scenario", "mixed", "--points", "2", "--flows", "1", "--messages",
                                              "3", "--duration-s", "2", "--clock-offset", "leafB-stor=1500000000"],
                       seed=8, ios=0)
check("offset", cap, truth_of(cap))
cap = generate_capture(synth, tmp, "offset_hops", ["--scenario", "write-flows", "--flows", "3", "--messages", "30",
                                                   "--duration-s", "2", "--clock-offset", "leafB-gpu=1500000000"],
                       seed=8, ios=0)
check("offset_hops", cap, truth_of(cap), hops=True)
# 1 s of traffic: the plugin went wrong from about 0.5 s on.
tidy = generate_capture(synth, tmp, "tidy", ["--scenario", "nvme-2point", "--duration-s", "1"], seed=8, ios=250)
cap, new_frame = concatenated(tidy, "concat")
check("concat", cap, truth_of(tidy, new_frame), hops=True)
fail_if(problems, "differences on captures whose points lie far apart in file order", shown=30)
print("OK: the plugin gives the CLI's and the truth's numbers on captures whose points lie far apart in file order")
