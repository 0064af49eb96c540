#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""tshark with a read filter: `tshark -2 -R FILTER` keeps only the frames FILTER passes, as if the
file held nothing else, and numbers them 1, 2, ... in both passes. Its first pass dissects every
record and gives the one after a dropped record the same number, so the plugin must leave the
dropped ones out (it measures each frame once the next number shows it was kept).

Checked: `tshark -2 -R 'frame.interface_id == K'` prints the same rdmatel fields, byte for byte,
as `tshark -2` on a file that holds only interface K's packets (cut from the capture by this
test, not by tshark), for every point of several captures, with the engine thread on and off;
and the same rdmatel statistics and Expert Info (whose taps do not run in tshark -2's first pass,
so they read nothing there).
Where the read filter's frames are read in the first pass (a display filter on rdmatel fields
primes them there), the first frame dropped was measured before it could be known: a warning
says so (Expert Info), and the fields differ on that frame at most.

Usage: test_tshark_read_filter.py RDMATEL_SYNTH PLUGIN_SO SAMPLES_DIR"""
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
import pcapng_stream as ps  # noqa: E402
from rdmatel_testlib import Tshark, fail, fail_if, first_difference, generate_capture, scratch_dir  # noqa: E402

if len(sys.argv) != 4:
    fail(__doc__)
synth, plugin, samples = sys.argv[1:]
tmp = scratch_dir("rdmatel_read_filter_")
ts = Tshark(plugin)
problems = []
FIELDS = ["frame.number", "rdmatel.point", "rdmatel.io.id", "rdmatel.io.stage", "rdmatel.rtt", "rdmatel.dal",
          "rdmatel.iol", "rdmatel.iol1", "rdmatel.msg.first_psn", "rdmatel.fct", "rdmatel.msg.packets",
          "rdmatel.hop.delay", "rdmatel.hop.lost", "rdmatel.retrans", "rdmatel.ecn_ce"]
field_args = [a for f in FIELDS for a in ("-e", f)]

captures = [os.path.join(samples, "nvme_2point.pcapng"), os.path.join(samples, "mixed.pcapng"),
            generate_capture(synth, tmp, "three_points_loss", ["--scenario", "nvme-3point", "--loss", "0.02",
                                                               "--order", "blocks"], seed=5, ios=120)]
checked = 0
try:
    for capture in captures:
        cap = ps.Capture(capture)
        parts = ps.split_by_interface(cap)
        for k, part in enumerate(parts):
            alone = os.path.join(tmp, f"{os.path.basename(capture)}.if{k}.pcapng")
            with open(alone, "wb") as f:
                f.write(part)
            want = ts.run("-2", "-r", ts.stage(alone), "-T", "fields", *field_args).stdout
            stats = ["-q", "-z", "expert,note", "-z", "rdmatel,io,host", "-z", "rdmatel,msg,flow"]
            want_stats = ts.run("-2", "-r", ts.stage(alone), *stats).stdout
            got_stats = ts.run("-2", "-r", ts.stage(capture), "-R", f"frame.interface_id == {k}", *stats).stdout
            if got_stats != want_stats:
                problems.append(f"{os.path.basename(capture)} -R interface {k}, statistics and Expert Info: "
                                f"{first_difference(got_stats, want_stats)}")
            if not want.strip():
                problems.append(f"{capture} interface {k}: no frames")
                continue
            for thread in ("TRUE", "FALSE"):
                got = ts.run("-2", "-o", f"rdmatel.engine_thread:{thread}", "-r", ts.stage(capture), "-R",
                             f"frame.interface_id == {k}", "-T", "fields", *field_args).stdout
                if got != want:
                    problems.append(f"{os.path.basename(capture)} -R interface {k} (engine thread {thread}): "
                                    f"{first_difference(got, want)}")
                checked += 1
        # A display filter on rdmatel fields reads them in the first pass too: the first frame the read
        # filter drops is measured before its number shows it was dropped, and a warning says so.
        if len(parts) > 1:
            k = len(parts) - 1
            expert = ts.run("-2", "-r", ts.stage(capture), "-R", f"frame.interface_id == {k}", "-Y", "rdmatel.point",
                            "-q", "-z", "expert,warn").stdout
            if "a read filter (tshark -R, the GUI's) dropped frame" not in expert:
                problems.append(f"{os.path.basename(capture)} -R interface {k} -Y rdmatel.point: no warning that a "
                                f"dropped frame was measured: {expert[-400:]}")
finally:
    ts.close()
if checked < 12:
    problems.append(f"only {checked} comparisons ran")
fail_if(problems, "tshark -2 -R")
print(f"OK: tshark -2 -R by interface equals tshark -2 on that interface's packets alone ({checked} comparisons)")
