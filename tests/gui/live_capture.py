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
truth lists them. When the capture has ended, the test saves nothing and asks nothing more of the
GUI: the end of a capture finishes the engine like the end of a file, which tshark -2 tests cover.

Exit 0 on success, 1 on a failure, 77 when Xvfb or wireshark is missing or no X server starts.
Usage: live_capture.py PLUGIN.so CAPTURE.pcapng (with CAPTURE.truth.json beside it)"""

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "integration"))
import pcapng_stream as ps  # noqa: E402

PACE_S = 6.0  # the capture's packets are written over this many seconds

LUA_TAP = r"""
-- Records, for the test, each frame a tapped pass gives an I/O latency, in the order Wireshark
-- dissects them (taps run in the first pass and in later retaps, not when rows are painted).
local iol = Field.new("rdmatel.iol")
local out = assert(io.open(os.getenv("RDMATEL_LIVE_OUT"), "w"))
local tap = Listener.new("frame", "rdmatel.iol")
function tap.packet(pinfo)
  local v = iol()
  out:write(string.format("%d %s\n", pinfo.number, tostring(v and v.value)))
  out:flush()
end
"""


def skip(why):
    print(f"SKIP: {why}")
    sys.exit(77)


def fail(why):
    print(f"FAIL: {why}")
    sys.exit(1)


def start_xvfb(log):
    for n in range(150, 200):
        if os.path.exists(f"/tmp/.X11-unix/X{n}") or os.path.exists(f"/tmp/.X{n}-lock"):
            continue
        x = subprocess.Popen(["Xvfb", f":{n}", "-screen", "0", "1600x1000x24", "-nolisten", "tcp", "-ac", "-noreset"],
                             stdout=log, stderr=log, start_new_session=True)
        for _ in range(50):
            if subprocess.run(["xwininfo", "-root"], env={**os.environ, "DISPLAY": f":{n}"},
                              capture_output=True).returncode == 0:
                return x, f":{n}"
            if x.poll() is not None:
                break
            time.sleep(0.1)
        x.kill()
        x.wait()
    skip("no X server could be started (Xvfb)")


def first_pass(lines):
    """The frames of the first pass: the lines up to the first frame number that does not grow (a
    retap starts again from the first frames)."""
    frames = []
    for number, value in lines:
        if frames and int(number) <= frames[-1]:
            break
        if value != "nil":
            frames.append(int(number))
    return frames


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
    if len(sys.argv) != 3:
        fail(__doc__)
    plugin, capture = sys.argv[1], sys.argv[2]
    for tool in ("Xvfb", "xwininfo", "wireshark", "dumpcap"):
        if not shutil.which(tool):
            skip(f"{tool} is not installed (scripts/install-deps.sh --test installs it)")
    with open(capture.rsplit(".", 1)[0] + ".truth.json") as f:
        truth = json.load(f)
    if len(truth["points"]) != 1:
        fail("the test needs a one-point capture (its truth lists the compute-side completion frames)")
    expected = sorted(io["rsp_frame"] for io in truth["ios"] if io["complete"])
    cap = ps.Capture(capture)

    work = tempfile.mkdtemp(prefix="rdmatel_gui_live_")
    procs = []
    try:
        os.chmod(work, 0o777)
        home = os.path.join(work, "home")
        plugins = os.path.join(home, ".local/lib/wireshark/plugins")
        os.makedirs(os.path.join(plugins, "4.0/epan"))
        os.makedirs(os.path.join(home, "run"), mode=0o700)
        shutil.copy(plugin, os.path.join(plugins, "4.0/epan"))
        with open(os.path.join(plugins, "rdmatel_live_tap.lua"), "w") as f:
            f.write(LUA_TAP)
        out = os.path.join(work, "first_pass.txt")
        fifo = os.path.join(work, "capture.fifo")
        os.mkfifo(fifo, 0o666)
        as_user = []
        if os.geteuid() == 0:  # Wireshark ignores personal plugins when run as root
            for root, dirs, files in os.walk(work):
                for p in dirs + files:
                    os.chown(os.path.join(root, p), 65534, 65534)
            os.chown(work, 65534, 65534)
            as_user = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--"]
        # A sanitizer-built plugin needs its runtime loaded first (scripts/ci-sanitize.sh sets
        # RDMATEL_TSHARK_PRELOAD); extcap helpers are not needed and must not inherit it.
        preload = []
        if os.environ.get("RDMATEL_TSHARK_PRELOAD"):
            no_extcap = os.path.join(work, "no-extcap")
            os.mkdir(no_extcap)
            preload = [f"LD_PRELOAD={os.environ['RDMATEL_TSHARK_PRELOAD']}",
                       f"ASAN_OPTIONS={os.environ.get('RDMATEL_TSHARK_ASAN_OPTIONS', 'detect_leaks=0')}",
                       f"WIRESHARK_EXTCAP_DIR={no_extcap}"]
        xlog = open(os.path.join(work, "xvfb.log"), "w")
        xvfb, display = start_xvfb(xlog)
        procs.append(xvfb)
        wlog = open(os.path.join(work, "wireshark.log"), "w")
        ws = subprocess.Popen(as_user + ["env", f"HOME={home}", f"DISPLAY={display}", f"XDG_RUNTIME_DIR={home}/run",
                                         f"RDMATEL_LIVE_OUT={out}", "LC_ALL=C.UTF-8", *preload,
                                         "wireshark", "-i", fifo, "-k", "-o", "rdmatel.reorder_window:0",
                                         "--disable-protocol", "rpcordma"],
                              stdout=wlog, stderr=wlog, start_new_session=True)
        procs.append(ws)
        writer = threading.Thread(target=write_paced, args=(fifo, cap), daemon=True)
        writer.start()  # opening the pipe waits for dumpcap
        writer.join(timeout=120)
        if writer.is_alive():
            wlog.flush()
            fail(f"Wireshark did not read the pipe: {open(os.path.join(work, 'wireshark.log')).read()[-2000:]}")
        # The pipe closed: the capture stops. Wait until every packet was dissected.
        deadline = time.time() + 60
        seen = []
        while time.time() < deadline:
            if os.path.exists(out):
                with open(out) as f:
                    seen = [l.split() for l in f if l.strip()]
                if first_pass(seen) and first_pass(seen)[-1] >= expected[-1]:
                    break
            time.sleep(0.5)
        time.sleep(1)
        if not os.path.exists(out):
            wlog.flush()
            fail(f"the Lua tap wrote nothing: {open(os.path.join(work, 'wireshark.log')).read()[-2000:]}")
        with open(out) as f:
            seen = [l.split() for l in f if l.strip()]
    finally:
        # Wireshark with dumpcap (its own process group), then the X server.
        for p in reversed(procs):
            if p.poll() is None:
                try:
                    os.killpg(p.pid, signal.SIGTERM)
                except ProcessLookupError:
                    pass
                try:
                    p.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    os.killpg(p.pid, signal.SIGKILL)
                    p.wait()
        shutil.rmtree(work, ignore_errors=True)

    got = first_pass(seen)
    print(f"{len(cap.packets)} packets written over {PACE_S} s; the first pass gave an I/O latency to "
          f"{len(got)} frames; the truth has {len(expected)} completed I/Os")
    if got != expected:
        missing = sorted(set(expected) - set(got))
        extra = sorted(set(got) - set(expected))
        fail(f"frames with rdmatel.iol in the live first pass differ from the truth's completion frames: "
             f"{len(missing)} missing (first {missing[:10]}), {len(extra)} not expected (first {extra[:10]})")
    print("PASS")


if __name__ == "__main__":
    main()
