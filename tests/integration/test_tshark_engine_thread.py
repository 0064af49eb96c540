#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The plugin's engine thread (preference rdmatel.engine_thread) changes where frames are
measured, never what is shown: tshark prints byte for byte the same with it on and off.

* `tshark -2 -V` (the first pass reads no rdmatel result, so its frames are measured on the
  engine thread; the second pass shows every frame in full) and `tshark -2 -T fields` with the
  rdmatel fields, on the shipped samples, the real captures when given, and generated captures
  of the conditions real captures have (clock offsets, loss, 3-5 points, interfaces that appear
  mid-file, IPv6 with VLAN tags, header-only snaps, file order in blocks, ECN, PFC, PSN wrap).
* tshark -2 with the rdmatel statistics (its first pass runs no taps: the thread measures), one
  pass with them (every frame is read at once: the thread idles), and one pass where only other
  protocols are read (frame 1 at once, the rest on the thread).
* The thread is real and used where it should be: on a larger capture, tshark's thread named
  rdmatel-engine measures (spends cpu) for tshark -2 -z io,stat and for tshark -2 with rdmatel
  statistics (tshark's first pass runs no taps), idles for one-pass rdmatel statistics (every
  frame is read at once) and for a one-pass -z io,stat (nothing reads rdmatel's results, so
  nothing is measured: the output is the same as without the plugin), and does not exist with
  the preference off.

Usage: test_tshark_engine_thread.py RDMATEL_SYNTH PLUGIN_SO SAMPLES_DIR [REAL_CAPTURE...]"""
import glob
import os
import subprocess
import sys
import time

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
from rdmatel_testlib import Tshark, fail, fail_if, first_difference, generate_capture, scratch_dir  # noqa: E402

if len(sys.argv) < 4:
    fail(__doc__)
synth, plugin, samples = sys.argv[1], sys.argv[2], sys.argv[3]
real = sys.argv[4:]
tmp = scratch_dir("rdmatel_engine_thread_")
ts = Tshark(plugin)
problems = []

GENERATED = {
    "offset_3pt_loss": ["--scenario", "nvme-3point", "--clock-offset", "spine1=2000000000", "--loss", "0.02"],
    "cross_5pt_blocks": ["--scenario", "nvme-2point", "--points", "5", "--cross", "--jitter-ns", "400",
                         "--order", "blocks", "--clock-offset", "leafA-up=-5000000"],
    "ipv6_vlan_snap": ["--scenario", "nvme-midstream", "--points", "3", "--ipv6", "--vlan", "2",
                       "--snaplen", "128", "--loss", "0.02"],
    "mixed_ecn_pfc": ["--scenario", "mixed", "--points", "3", "--ecn-mark", "leafA-gpu:spine1=0.3",
                      "--pfc-pause", "spine1:3=20@0.001", "--vlan", "1"],
    "flows_wrap": ["--scenario", "write-flows", "--points", "3", "--psn-wrap", "--pmtu", "1024",
                   "--drop-between", "spine1:leafB-gpu=0.05", "--flows", "6", "--messages", "25"],
}
FIELDS = ["frame.number", "rdmatel.point", "rdmatel.point_role", "rdmatel.io.id", "rdmatel.io.stage", "rdmatel.rtt",
          "rdmatel.dal", "rdmatel.iol1", "rdmatel.iol2", "rdmatel.msg.first_psn", "rdmatel.fct", "rdmatel.msg.packets",
          "rdmatel.hop.delay", "rdmatel.hop.lost", "rdmatel.ecn_ce", "rdmatel.pfc.pause_time", "rdmatel.diagnosis",
          "rdmatel.slow"]


def generate(name, args):
    return generate_capture(synth, tmp, name, args, seed=11, ios=150)


def tshark(capture, on, *args):
    p = ts.run("-o", f"rdmatel.engine_thread:{'TRUE' if on else 'FALSE'}", "-r", ts.stage(capture), *args,
               check=False)
    return p.returncode, p.stdout


def compare(label, capture, *args, expect=None):
    on, off = tshark(capture, True, *args), tshark(capture, False, *args)
    if on != off:
        what = f"exit {on[0]} vs {off[0]}" if on[0] != off[0] else first_difference(on[1], off[1])
        problems.append(f"{label} tshark {' '.join(args)}: differs with the engine thread: {what}")
    elif on[0] != 0 or not on[1].strip():
        problems.append(f"{label} tshark {' '.join(args)}: exit {on[0]}, {len(on[1])} bytes printed")
    elif expect and expect not in on[1]:
        problems.append(f"{label} tshark {' '.join(args)}: {expect!r} not in the output")


field_args = ["-T", "fields", "-E", "occurrence=a", "-E", "aggregator=|"] + [a for f in FIELDS for a in ("-e", f)]
stats = ["-z", "rdmatel,io,host", "-z", "rdmatel,msg,flow", "-z", "rdmatel,hops", "-z", "rdmatel,congestion"]
captures = [(os.path.basename(s), s, True) for s in sorted(glob.glob(os.path.join(samples, "*.pcapng")))]
if not captures:
    fail(f"no samples in {samples}")
captures += [(os.path.basename(r), r, False) for r in real]
captures += [(name, generate(name, args), True) for name, args in GENERATED.items()]
for label, cap, small in captures:
    # Every frame in full on the second pass: what the first pass measured on the thread.
    if small:
        compare(label, cap, "-2", "-V", expect="RDMA Telemetry")
    compare(label, cap, "-2", *field_args)
    compare(label, cap, "-q", *stats)
    compare(label, cap, "-2", "-q", *stats)
    compare(label, cap, "-T", "fields", "-e", "frame.number", "-e", "ip.src", "-e", "infiniband.bth.psn")

# The thread is real.
big = os.path.join(tmp, "big.pcapng")
subprocess.run([synth, "--scenario", "nvme-large", "--ios", "20000", "--seed", "3", "--out", big], check=True,
               capture_output=True, timeout=300)


def engine_thread_ticks(on, *args):
    """The cpu time (clock ticks) of tshark's thread named rdmatel-engine while it read the big
    capture, or None when it had none (tshark starts short-lived threads of its own, so counting
    threads would not tell)."""
    cmd, env = ts.command("-o", f"rdmatel.engine_thread:{'TRUE' if on else 'FALSE'}", "-q", *args,
                          "-r", ts.stage(big))
    p = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    ticks = None
    while p.poll() is None:
        for task in glob.glob(f"/proc/{p.pid}/task/*"):
            try:
                with open(os.path.join(task, "comm")) as f:
                    if f.read().strip() != "rdmatel-engine":
                        continue
                with open(os.path.join(task, "stat")) as f:
                    fields = f.read().rsplit(")", 1)[1].split()
                ticks = max(ticks or 0, int(fields[11]) + int(fields[12]))  # utime + stime
            except (OSError, IndexError, ValueError):
                pass
        time.sleep(0.005)
    if p.returncode:
        problems.append(f"tshark {' '.join(args)} on the big capture exited {p.returncode}")
    return ticks


# On: the thread measures the first pass of tshark -2 (-z io,stat reads nothing of rdmatel, and
# tshark -2 runs no taps in its first pass, so the rdmatel statistics read nothing then either).
# One-pass rdmatel statistics read every frame at once: the thread idles. A one-pass -z io,stat
# reads nothing of rdmatel, ever: nothing is measured. Off: no thread.
runs = {
    "-2 io,stat": engine_thread_ticks(True, "-2", "-z", "io,stat,0"),
    "-2 io,stat off": engine_thread_ticks(False, "-2", "-z", "io,stat,0"),
    "-2 statistics": engine_thread_ticks(True, "-2", *stats),
    "one-pass statistics": engine_thread_ticks(True, *stats),
    "one-pass io,stat": engine_thread_ticks(True, "-z", "io,stat,0"),
}
print("rdmatel-engine thread cpu ticks:", runs)
for label in ("-2 io,stat", "-2 statistics"):
    if not runs[label] or runs[label] < 5:
        problems.append(f"{label}: the engine thread measured little or nothing ({runs[label]} ticks)")
if runs["-2 io,stat off"] is not None:
    problems.append("rdmatel.engine_thread:FALSE: tshark still had an rdmatel-engine thread")
for label, why in (("one-pass statistics", "though every frame's results are read as it is dissected"),
                   ("one-pass io,stat", "though nothing reads rdmatel's results")):
    if runs[label] is None or runs[label] > 2:
        problems.append(f"{label}: the engine thread measured ({runs[label]} ticks), {why}")
compare("nvme-large", big, "-2", "-T", "fields", "-e", "frame.number", "-e", "rdmatel.rtt", "-e", "rdmatel.fct")

ts.close()
fail_if(problems, "differences with the engine thread")
print(f"tshark engine thread: {len(captures)} captures, every output byte-identical with it on and off")
