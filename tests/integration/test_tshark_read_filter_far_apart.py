#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""tshark -2 with a read filter (-R) on captures whose points' packets lie far apart in file order
(a sniffer whose clock runs 1.5 s ahead, per-point files joined as mergecap -a joins them): the
same rdmatel fields as tshark -2 without the filter on a file that holds only the frames it keeps.

The plugin declares the file's interfaces as points at frame 1 (as the CLI does when it opens a
file), so that the engine waits for a point whose first packet comes late; under a read filter it
used not to (an interface whose frames the filter drops was to be no point), so each point was
declared at its first frame kept, and the late point's copies came after the first point's I/Os
and hops were final: IOL2, RTT and DAL missing on most I/Os, every hop delay missing, without a
word (test_plugin_point_far_apart.py shows the same without -R). Even `-R frame`, which keeps
every frame, did it.

Checked, per capture: `-R frame` and `-R udp` (every RoCEv2 frame kept) print what no read filter
prints; `-R '!(eth.type == 0x8808)'` on a capture with PFC pause frames prints what the same file
cut of its PFC frames (by this test, not by tshark) prints; the frames with IOL2 under -R are
the truth's (2 per I/O that has one: its command and completion); the file's last frame, kept by
the filter, is measured (it was left out: nothing told whether the filter had kept it); and a
point whose every frame the filter drops is not called one whose clock may run behind.

Usage: test_tshark_read_filter_far_apart.py RDMATEL_SYNTH PLUGIN_SO"""
import os
import struct
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
import pcapng_stream as ps  # noqa: E402
from rdmatel_testlib import (Tshark, fail, fail_if, first_difference, generate_capture, load_truth,  # noqa: E402
                             measurable_ios, scratch_dir)

if len(sys.argv) != 3:
    fail(__doc__)
synth, plugin = sys.argv[1:]
tmp = scratch_dir("rdmatel_rf_far_apart_")
FIELDS = ["frame.number", "rdmatel.point", "rdmatel.point_role", "rdmatel.io.id", "rdmatel.io.stage", "rdmatel.iol1",
          "rdmatel.iol2", "rdmatel.rtt", "rdmatel.dal", "rdmatel.dpl", "rdmatel.iol", "rdmatel.msg.first_psn",
          "rdmatel.fct", "rdmatel.msg.packets", "rdmatel.hop.delay", "rdmatel.hop.lost", "rdmatel.retrans"]
field_args = [a for f in FIELDS for a in ("-e", f)]
problems = []


def ethertype(frame):
    off = 12
    while off + 2 <= len(frame):
        t = struct.unpack_from(">H", frame, off)[0]
        if t not in (0x8100, 0x88A8):
            return t
        off += 4
    return None


def without_pfc(capture, name):
    cap = ps.Capture(capture)
    out = os.path.join(tmp, name + ".pcapng")
    kept = [p for p in cap.packets if ethertype(p[3]) != 0x8808]
    if len(kept) == len(cap.packets):
        fail(f"{capture}: no PFC frame to drop")
    with open(out, "wb") as f:
        f.write(cap.header)
        for p in kept:
            f.write(cap.epb(*p))
    return out


def concatenated(tidy, name):
    """The capture's points one after the other (mergecap -a of per-point files)."""
    out = os.path.join(tmp, name + ".pcapng")
    ps.concatenate_points(tidy, out)
    return out


def fields(ts, capture, *extra):
    return ts.run("-2", "-r", ts.stage(capture), *extra, "-T", "fields", *field_args).stdout


def check(ts, label, capture, reference, read_filters, truth_ios=None):
    want = fields(ts, reference)
    if not want.strip():
        problems.append(f"{label}: no frames")
        return
    for rf in read_filters:
        for thread in ("TRUE", "FALSE"):
            got = fields(ts, capture, "-o", f"rdmatel.engine_thread:{thread}", "-R", rf)
            if got != want:
                diff = sum(a != b for a, b in zip(got.splitlines(), want.splitlines()))
                problems.append(f"{label} -R {rf!r} (engine thread {thread}): {diff} lines differ, "
                                f"{first_difference(got, want)}")
    if truth_ios is not None:
        n = sum(1 for line in fields(ts, capture, "-R", read_filters[0]).splitlines()
                if line.split("\t")[FIELDS.index("rdmatel.iol2")])
        expected = 2 * sum("iol2_us" in io for io in measurable_ios(truth_ios))
        if n != expected:
            problems.append(f"{label} -R {read_filters[0]!r}: IOL2 on {n} frames, the truth's I/Os on {expected}")


ts = Tshark(plugin)
try:
    # The storage sniffer's clock 1.5 s ahead: its first packet comes 1.5 s into the file.
    offset = generate_capture(synth, tmp, "offset", ["--scenario", "mixed", "--points", "2", "--flows", "1",
                                                     "--messages", "3", "--duration-s", "2", "--clock-offset",
                                                     "leafB-stor=1500000000"], seed=8, ios=0)
    check(ts, "offset", offset, offset, ["frame", "udp"], load_truth(offset)["ios"])
    # The same with PFC pause frames at the compute point, which the read filter drops.
    pfc = generate_capture(synth, tmp, "offset_pfc", ["--scenario", "mixed", "--points", "2", "--flows", "1",
                                                      "--messages", "3", "--duration-s", "2", "--clock-offset",
                                                      "leafB-stor=1500000000", "--pfc-pause", "leafA-gpu:3=4@0.2",
                                                      "--pfc-pause", "leafB-stor:3=4@1.2"], seed=9, ios=0)
    check(ts, "offset_pfc", pfc, without_pfc(pfc, "offset_pfc_cut"), ["!(eth.type == 0x8808)"],
          load_truth(pfc)["ios"])
    # Per-point files joined one after the other; the GPU flows' hops.
    hops = generate_capture(synth, tmp, "offset_hops", ["--scenario", "write-flows", "--flows", "3", "--messages",
                                                        "30", "--duration-s", "2", "--clock-offset",
                                                        "leafB-gpu=1500000000"], seed=8, ios=0)
    check(ts, "offset_hops", hops, hops, ["frame"])
    tidy = generate_capture(synth, tmp, "tidy", ["--scenario", "nvme-2point", "--duration-s", "1"], seed=8, ios=250)
    concat = concatenated(tidy, "concat")
    check(ts, "concat", concat, concat, ["frame", "udp"], load_truth(tidy)["ios"])
    # A read filter that keeps one point's frames: the others are points that carry nothing. Past
    # --max-path-packets the engine settles early and names the point it still waits for as one
    # whose clock may run behind; the filter dropped its frames, and the warning says so.
    tree = ts.run("-2", "-r", ts.stage(concat), "-R", "frame.interface_id == 0", "-o", "rdmatel.max_path_packets:200",
                  "-V", "-Y", "frame.number == 1").stdout
    if "the read filter kept no frame of point leafB-stor, interface 1" not in tree or "has carried no packet" in tree:
        problems.append("concat -R 'frame.interface_id == 0': the warning about packets waiting for leafB-stor does "
                        "not say that the read filter dropped its frames: " +
                        next((line.strip() for line in tree.splitlines() if "more than 200" in line), "(none)"))
finally:
    ts.close()
fail_if(problems, "differences under a read filter on captures whose points lie far apart", shown=30)
print("OK: tshark -2 -R on captures whose points lie far apart in file order prints what tshark -2 prints on the "
      "frames the filter keeps")
