# SPDX-License-Identifier: GPL-2.0-or-later
"""tshark with the plugin on hostile captures (tests/robustness/hostile_captures.py scenarios at
a small size, and crafted records): tshark must finish with status 0 (2 when the file itself is
cut or corrupt), without sanitizer reports (scripts/ci-sanitize.sh) and without rdmatel's
internal-error expert info or a dissector bug attributed to it.

    test_tshark_hostile.py PLUGIN.so [--packets N]
"""
import os
import struct
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "robustness"))
import hostile_captures as hc  # noqa: E402
from rdmatel_testlib import SKIP, Tshark, fail_if  # noqa: E402

args = [a for a in sys.argv[1:] if not a.startswith("--")]
packets = 2000
if "--packets" in sys.argv:
    packets = int(sys.argv[sys.argv.index("--packets") + 1])
    args = [a for a in args if a != str(packets)]
plugin = args[0]
if not os.path.exists("/usr/bin/tshark"):
    print("tshark not installed: skipped")
    sys.exit(SKIP)

ts = Tshark(plugin)
problems = []
TROUBLE = ("rdmatel internal error", "Dissector bug, protocol RDMATEL", "Malformed Packet: RDMATEL")
SANITIZER = ("runtime error:", "ERROR: AddressSanitizer", "ERROR: LeakSanitizer")


def run_tshark(*targs):
    """Like Tshark.run, with bytes: tshark prints interface names as the file has them, UTF-8 or
    not."""
    cmd, env = ts.command(*targs)
    return subprocess.run(cmd, capture_output=True, env=env, timeout=600)


def check(label, path, codes=(0,)):
    os.chmod(path, 0o644)
    p = run_tshark("-2", "-V", "-r", path)
    err = p.stderr.decode("utf-8", "replace")
    out = p.stdout.decode("utf-8", "replace")
    if p.returncode not in codes:
        problems.append(f"{label}: tshark exit {p.returncode}: {err.strip()[-400:]}")
    for m in SANITIZER:
        if m in err:
            problems.append(f"{label}: sanitizer report: {err.strip()[:600]}")
            break
    for m in TROUBLE:
        if m in out:
            problems.append(f"{label}: output shows {m!r}")


def block(btype, body):
    body += b"\0" * (-len(body) % 4)
    n = 12 + len(body)
    return struct.pack("<II", btype, n) + body + struct.pack("<I", n)


def capture_with_stamp(name, tsresol, stamp, ifname=b"eth0"):
    """One NVMe command at an interface with the given if_tsresol and 64-bit stamp."""
    out = block(0x0A0D0D0A, struct.pack("<IHHq", 0x1A2B3C4D, 1, 0, -1))
    opts = struct.pack("<HH", 2, len(ifname)) + ifname + b"\0" * (-len(ifname) % 4)
    opts += struct.pack("<HH", 9, 1) + bytes([tsresol]) + b"\0\0\0" + b"\0\0\0\0"
    out += block(1, struct.pack("<HHI", 1, 0, 65535) + opts)
    q = hc.Queue("10.0.0.1", "10.0.0.2", 0x100, 0x200)
    frame = q.up(hc.roce(0x04, 0x100, 1, payload=hc.sqe(0x02, 1, 4096, 5)))
    stamp &= (1 << 64) - 1
    out += block(6, struct.pack("<IIIII", 0, stamp >> 32, stamp & 0xFFFFFFFF, len(frame), len(frame)) + frame)
    path = os.path.join(ts.home, name)
    with open(path, "wb") as f:
        f.write(out)
    return path


for name, (fn, _warnings, status) in hc.SCENARIOS.items():
    path = os.path.join(ts.home, f"hostile_{name}.pcapng")
    hc.write_capture(path, name, packets, 50, 7, max_flows=1000)
    check(name, path, (0, 2) if status == 3 else (0,))
# Stamps at the ends of the range and an interface name that is not UTF-8: plain values the
# plugin must take as they come.
check("stamp 0", capture_with_stamp("zero.pcapng", 9, 0))
check("stamp 2^63-1 ns", capture_with_stamp("max_ns.pcapng", 9, (1 << 63) - 1))
check("interface name not UTF-8", capture_with_stamp("latin1.pcapng", 9, 1 << 60, b"eth\xb9\xff"))
# Regression (fixed): plugin/rdmatel_proto.cpp dissect_rdmatel: `TimeNs(pinfo->abs_ts.secs) * kNsPerSec` overflows
# when a record's time in seconds exceeds 2^63 / 10^9 (if_tsresol 0 = seconds, or a corrupt
# stamp): UBSan "signed integer overflow: 1795960800988561690 * 1000000000" (found by the
# corruption campaign, a raw-corrupted nvme_3point). Saturate like the fast reader does.
check("stamp in seconds beyond 2^63 ns", capture_with_stamp("huge_secs.pcapng", 0, 1795960800988561690))
check("stamp 2^64-1 ns (18446744073 s)", capture_with_stamp("max_ns.pcapng", 9, (1 << 64) - 1))
check("stamp in seconds, negative after the cast", capture_with_stamp("neg_secs.pcapng", 0, (1 << 64) - 5))

ts.close()
fail_if(problems, "tshark problems on hostile captures")
print("OK: tshark on hostile captures")
