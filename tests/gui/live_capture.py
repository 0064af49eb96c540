#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The Wireshark GUI capturing live with the plugin: a frame shown again while the capture goes on
must not end rdmatel's first pass.

The GUI paints its packet list as frames arrive, dissecting the rows it shows a second time, so
the first pass and these revisits interleave for as long as the capture runs. The test captures
from a named pipe (a live capture as Wireshark runs it: dumpcap reads the pipe, the GUI follows
the growing file; no network, no privileges) and writes a generated NVMe-oF capture into it,
paced over several seconds. A Lua tap in the same Wireshark records every frame the first pass
gives an I/O latency (rdmatel.iol). With the reorder window at 0 every completion is measured as
it arrives, so that must be each completed I/O's completion frame, as the generator's ground
truth lists them. (The end of a capture finishes the engine as the end of a file does, which
display_filter.py and the tshark -2 tests cover.)

Exit 0 on success, 1 on a failure, 77 when Xvfb or wireshark is missing or no X server starts.
Usage: live_capture.py PLUGIN.so CAPTURE.pcapng (with CAPTURE.truth.json beside it)"""

import os
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "integration"))
import pcapng_stream as ps  # noqa: E402
from wireshark_gui import WiresharkGui, fail, one_point_args, passes, skip  # noqa: E402

PACE_S = 6.0  # the capture's packets are written over this many seconds


def write_paced(fifo, cap):
    """The capture into the pipe: header blocks, then each packet at its share of PACE_S."""
    with open(fifo, "wb", buffering=0) as f:
        f.write(cap.header)
        span = max(1, cap.last_ns - cap.first_ns)
        t0 = time.monotonic()
        for iface, ts, wire, frame in cap.packets:
            due = t0 + (ts - cap.first_ns) / span * PACE_S
            delay = due - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            f.write(cap.epb(iface, ts, wire, frame))


def main():
    plugin, capture, truth = one_point_args(__doc__)
    expected = sorted(io["rsp_frame"] for io in truth["ios"] if io["complete"])
    cap = ps.Capture(capture)

    if os.environ.get("RDMATEL_TSHARK_PRELOAD"):
        # The sanitizer job: dumpcap, which the GUI runs to capture, inherits the preloaded ASan
        # runtime and then never answers Wireshark's interface query (dumpcap -L hangs). The
        # plugin's live-capture path runs under the sanitizers in first_pass_test.
        skip("dumpcap hangs with the ASan runtime preloaded")
    with WiresharkGui(plugin, "rdmatel.iol") as gui:
        fifo = gui.path("capture.fifo")
        os.mkfifo(fifo, 0o666)
        gui.start("-i", fifo, "-k", "-o", "rdmatel.reorder_window:0")
        writer = threading.Thread(target=write_paced, args=(fifo, cap), daemon=True)
        writer.start()  # opening the pipe waits for dumpcap
        writer.join(timeout=120)
        if writer.is_alive():
            fail("Wireshark did not read the pipe: " + open(gui.log).read()[-3000:])
        # The pipe closed: the capture stops. Wait until every packet was dissected.
        gui.wait_until(lambda lines: passes(lines) and passes(lines)[0][-1] >= expected[-1], 60,
                       "the first pass did not reach the last completion")
        time.sleep(1)
        first = passes(gui.tapped())[0]
    print(f"{len(cap.packets)} packets written over {PACE_S} s; the first pass gave an I/O latency to "
          f"{len(first)} frames; the truth has {len(expected)} completed I/Os")
    if first != expected:
        missing = sorted(set(expected) - set(first))
        extra = sorted(set(first) - set(expected))
        fail(f"frames with rdmatel.iol in the live first pass differ from the truth's completion frames: "
             f"{len(missing)} missing (first {missing[:10]}), {len(extra)} not expected (first {extra[:10]})")
    print("PASS")


if __name__ == "__main__":
    main()
