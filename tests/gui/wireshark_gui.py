# SPDX-License-Identifier: GPL-2.0-or-later
"""The real Wireshark GUI for a test: an X server of its own (Xvfb), a private HOME with the
freshly built plugin and a Lua tap that records what Wireshark dissects, run as an unprivileged
user when the test runs as root (Wireshark ignores personal plugins for root).

The Lua tap writes one line per frame it sees, "NUMBER VALUE" (VALUE: the field's value, or nil),
in the order Wireshark dissects with taps: the first pass, then every pass that runs taps again
(a retap, the rescan that applies a display filter). passes() splits them where the numbers go
back."""

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

LUA_TAP = r"""
-- For the test: each frame a tapped pass gives FIELD (Wireshark calls taps after the dissection).
local field = Field.new(os.getenv("RDMATEL_TAP_FIELD"))
local out = assert(io.open(os.getenv("RDMATEL_TAP_OUT"), "w"))
local tap = Listener.new("frame", os.getenv("RDMATEL_TAP_FIELD"))
function tap.packet(pinfo)
  local v = field()
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


def one_point_args(doc):
    """(plugin, capture, truth) from the command line PLUGIN.so CAPTURE.pcapng, the capture one
    point's (its truth's frames are that point's), its generator truth beside it."""
    if len(sys.argv) != 3:
        fail(doc)
    plugin, capture = sys.argv[1], sys.argv[2]
    with open(capture.rsplit(".", 1)[0] + ".truth.json") as f:
        truth = json.load(f)
    if len(truth["points"]) != 1:
        fail("the test needs a one-point capture")
    return plugin, capture, truth


def passes(lines):
    """The tapped passes: lists of frame numbers, a new one wherever the numbers go back."""
    out = []
    for number, _value in lines:
        n = int(number)
        if not out or n <= out[-1][-1]:
            out.append([])
        out[-1].append(n)
    return out


class WiresharkGui:
    """Xvfb and Wireshark with the plugin and the Lua tap on FIELD. Use as a context manager."""

    def __init__(self, plugin, field):
        for tool in ("Xvfb", "xwininfo", "wireshark", "dumpcap"):
            if not shutil.which(tool):
                skip(f"{tool} is not installed (scripts/install-deps.sh --test installs it)")
        self.work = tempfile.mkdtemp(prefix="rdmatel_gui_")
        os.chmod(self.work, 0o777)
        self.home = os.path.join(self.work, "home")
        plugins = os.path.join(self.home, ".local/lib/wireshark/plugins")
        os.makedirs(os.path.join(plugins, "4.0/epan"))
        os.makedirs(os.path.join(self.home, "run"), mode=0o700)
        shutil.copy(plugin, os.path.join(plugins, "4.0/epan"))
        with open(os.path.join(plugins, "rdmatel_test_tap.lua"), "w") as f:
            f.write(LUA_TAP)
        self.tap_out = os.path.join(self.work, "tap.txt")
        self.field = field
        self.procs = []

    def path(self, name):
        """A path in the work folder, readable and writable by Wireshark's user."""
        return os.path.join(self.work, name)

    def stage(self, capture):
        dst = self.path(os.path.basename(capture))
        shutil.copy(capture, dst)
        return dst

    def start(self, *args):
        """Starts Wireshark with ARGS (after the X server)."""
        as_user = []
        if os.geteuid() == 0:
            for root, dirs, files in os.walk(self.work):
                for p in dirs + files:
                    os.chown(os.path.join(root, p), 65534, 65534)
            os.chown(self.work, 65534, 65534)
            as_user = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--"]
        # A sanitizer-built plugin needs its runtime loaded first (scripts/ci-sanitize.sh sets
        # RDMATEL_TSHARK_PRELOAD); extcap helpers are not needed and must not inherit it.
        preload = []
        if os.environ.get("RDMATEL_TSHARK_PRELOAD"):
            no_extcap = self.path("no-extcap")
            os.makedirs(no_extcap, exist_ok=True)
            preload = [f"LD_PRELOAD={os.environ['RDMATEL_TSHARK_PRELOAD']}",
                       f"ASAN_OPTIONS={os.environ.get('RDMATEL_TSHARK_ASAN_OPTIONS', 'detect_leaks=0')}",
                       f"WIRESHARK_EXTCAP_DIR={no_extcap}"]
        display = self._start_xvfb()
        self.log = self.path("wireshark.log")
        with open(self.log, "w") as log:
            self.procs.append(subprocess.Popen(
                as_user + ["env", f"HOME={self.home}", f"DISPLAY={display}", f"XDG_RUNTIME_DIR={self.home}/run",
                           f"RDMATEL_TAP_OUT={self.tap_out}", f"RDMATEL_TAP_FIELD={self.field}", "LC_ALL=C.UTF-8",
                           *preload, "wireshark", "--disable-protocol", "rpcordma", *args],
                stdout=log, stderr=log, start_new_session=True))

    def _start_xvfb(self):
        log = open(self.path("xvfb.log"), "w")
        for n in range(150, 200):
            if os.path.exists(f"/tmp/.X11-unix/X{n}") or os.path.exists(f"/tmp/.X{n}-lock"):
                continue
            x = subprocess.Popen(["Xvfb", f":{n}", "-screen", "0", "1600x1000x24", "-nolisten", "tcp", "-ac",
                                  "-noreset"], stdout=log, stderr=log, start_new_session=True)
            for _ in range(50):
                if subprocess.run(["xwininfo", "-root"], env={**os.environ, "DISPLAY": f":{n}"},
                                  capture_output=True).returncode == 0:
                    self.procs.append(x)
                    return f":{n}"
                if x.poll() is not None:
                    break
                time.sleep(0.1)
            x.kill()
            x.wait()
        skip("no X server could be started (Xvfb)")

    def tapped(self):
        """The Lua tap's lines so far: [number, value] each."""
        if not os.path.exists(self.tap_out):
            return []
        with open(self.tap_out) as f:
            return [l.split() for l in f if l.strip()]

    def wait_until(self, done, seconds, what):
        """Waits until done(tapped lines) holds; fails with the log after SECONDS."""
        deadline = time.time() + seconds
        while time.time() < deadline:
            if done(self.tapped()):
                return
            if self.procs and self.procs[-1].poll() is not None:
                break
            time.sleep(0.5)
        with open(self.log) as f:
            fail(f"{what}: {f.read()[-2000:]}")

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        # Wireshark with dumpcap (its own process group), then the X server; whatever of a group
        # outlives its first process (a dumpcap that ignored the signal) is killed too.
        for p in reversed(self.procs):
            try:
                os.killpg(p.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            p.wait()
        shutil.rmtree(self.work, ignore_errors=True)
        return False
