#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The Wireshark GUI opening a capture with a display filter on rdmatel fields (wireshark -r FILE
-Y 'rdmatel.io.counted', or a filter already applied when a file is opened) must end up showing
the frames whose final results match it.

The GUI decides which rows the filter shows while its first pass dissects each frame, when
rdmatel's results are still partial; with the default reorder window a 21 ms capture has none
yet, and the list would stay empty (it did: "Displayed: 0" where tshark -2 shows 162). At the end
of the first pass the plugin has the GUI apply the filter again, over the final results. The
rescan that applies a filter runs taps; a Lua tap with the same filter records the frames of
every tapped pass, and the last one must be the frame that counts each I/O of the generator's
ground truth (its completion, or its command when it never completed; a one-point capture).

Exit 0 on success, 1 on a failure, 77 when Xvfb or wireshark is missing or no X server starts.
Usage: display_filter.py PLUGIN.so CAPTURE.pcapng (one point, CAPTURE.truth.json beside it)"""

import os
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from wireshark_gui import WiresharkGui, fail, one_point_args, passes  # noqa: E402

FILTER = "rdmatel.io.counted"


def main():
    plugin, capture, truth = one_point_args(__doc__)
    expected = sorted(io["rsp_frame"] if io["complete"] else io["cmd_frame"] for io in truth["ios"])

    with WiresharkGui(plugin, FILTER) as gui:
        gui.start("-r", gui.stage(capture), "-Y", FILTER)
        gui.wait_until(lambda lines: passes(lines) and len(passes(lines)[-1]) >= len(expected) and
                       passes(lines)[-1][-1] >= expected[-1], 90,
                       f"no pass of the display filter showed the {len(expected)} frames that count an I/O")
        time.sleep(2)  # anything after it
        shown = passes(gui.tapped())
    print(f"tapped passes with '{FILTER}': {[len(p) for p in shown]} frames; the truth has {len(expected)} I/Os")
    if shown[-1] != expected:
        missing = sorted(set(expected) - set(shown[-1]))
        extra = sorted(set(shown[-1]) - set(expected))
        fail(f"the last pass of the display filter: {len(missing)} frames missing (first {missing[:10]}), "
             f"{len(extra)} not expected (first {extra[:10]})")
    print("PASS")


if __name__ == "__main__":
    main()
