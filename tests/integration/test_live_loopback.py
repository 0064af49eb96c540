#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""rdmatel live -i lo: the test itself writes RoCEv2 frames onto the loopback interface (a raw
AF_PACKET socket bound to lo: nothing can leave the machine) — the generator's capture with
every IPv4 address moved into 127.0.0.0/8, replayed with its gaps stretched K times — while
rdmatel captures live. Checked against the generator's ground truth (the I/Os by key, their
completion, IOL stretched K times within the scheduling jitter) and against rdmatel export of
the same frames captured by dumpcap at the same time (identical records, stamps included).
The expected latencies come from the test's own clock: each frame is stamped by the kernel while
the test's send() runs, so with the wall clock read before and after each send, an I/O's IOL
lies between (completion sent after - command sent before) and the reverse: bounds that hold
however late a loaded machine schedules the sends.

Needs CAP_NET_RAW (root): exits 77 (skipped) without it.
Usage: test_live_loopback.py RDMATEL CAPTURE.pcapng (a one-point IPv4 capture)"""

import json
import os
import random
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(__file__))
import pcapng_stream as ps  # noqa: E402
from rdmatel_testlib import fail, fail_if, load_truth  # noqa: E402

STRETCH = 50  # the capture's 21 ms become about 1 s: latencies of ms
# The destination MAC is not lo's (00:00:00:00:00:00): the kernel hands the frames to packet
# sockets (the capture) and then drops them, so no ICMP answers add traffic.
DST_MAC, SRC_MAC = bytes.fromhex("020000000001"), bytes.fromhex("020000000002")


def ip_checksum(header):
    s = sum(struct.unpack(f">{len(header) // 2}H", header))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return (~s) & 0xFFFF


def to_loopback(addr, base):
    """10.a.b.c -> 127.(base+a).b.c"""
    if addr[0] != 10:
        fail(f"unexpected address {socket.inet_ntoa(addr)} in the capture")
    return bytes([127, base + addr[1], addr[2], addr[3]])


def loopback_frames(cap, base):
    """(stamp, frame) of every packet, IPv4 addresses moved into 127/8, padded to the length on
    the wire (the capture was snapped)."""
    out = []
    for _iface, ts, wire, frame in cap.packets:
        lay = ps.roce_layout(frame)
        b = bytearray(frame)
        if lay:
            ip, version, _bth = lay
            if version != 4:
                fail("the loopback test needs an IPv4 capture")
            b[ip + 12 : ip + 16] = to_loopback(bytes(b[ip + 12 : ip + 16]), base)
            b[ip + 16 : ip + 20] = to_loopback(bytes(b[ip + 16 : ip + 20]), base)
            b[ip + 10 : ip + 12] = b"\0\0"
            ihl = (b[ip] & 0x0F) * 4
            b[ip + 10 : ip + 12] = struct.pack(">H", ip_checksum(bytes(b[ip : ip + ihl])))
            for a in (b[ip + 12 : ip + 16], b[ip + 16 : ip + 20]):
                if a[0] != 127:  # the network rule of the tests: loopback only
                    fail("refusing to send a frame with a non-loopback address")
        b[0:6], b[6:12] = DST_MAC, SRC_MAC
        b += bytes(max(0, wire - len(b)))
        out.append((ts, bytes(b)))
    return out


def reader(stream, sink):
    for line in stream:
        sink.append(line.decode(errors="replace"))


def wait_for(lines, text, seconds):
    deadline = time.time() + seconds
    while time.time() < deadline:
        if any(text in l for l in lines):
            return True
        time.sleep(0.05)
    return False


def main():
    if len(sys.argv) != 3:
        fail(__doc__)
    cli, capture = sys.argv[1], sys.argv[2]
    try:
        sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
        sock.bind(("lo", 0))
    except PermissionError:
        print("skipped: no permission to write raw frames (needs CAP_NET_RAW)")
        sys.exit(77)
    truth = load_truth(capture)
    cap = ps.Capture(capture)
    base = random.randint(10, 200)  # 127.X.*.*: a range of its own, should another test use lo
    frames = loopback_frames(cap, base)
    octets = sorted({int(a.split(".")[1]) for io in truth["ios"] for a in (io["host"], io["storage"])})
    nets = " or ".join(f"net 127.{base + o}.0.0/16" for o in octets)
    bpf = f"udp dst port 4791 and ({nets})"

    problems = []
    with tempfile.TemporaryDirectory(prefix="rdmatel_lo_") as tmp:
        pcap_file = os.path.join(tmp, "lo.pcapng")
        live = subprocess.Popen([cli, "live", "-i", "lo", "--filter", bpf, "--records", "io", "--period", "0.5"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        dump = subprocess.Popen(["dumpcap", "-q", "-i", "lo", "-f", bpf, "-w", pcap_file], stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE)
        out, err, derr = [], [], []
        threads = [threading.Thread(target=reader, args=a) for a in ((live.stdout, out), (live.stderr, err),
                                                                     (dump.stderr, derr))]
        for t in threads:
            t.start()
        try:
            if not wait_for(err, "capturing on lo", 10):
                fail(f"rdmatel did not start capturing: {''.join(err)}")
            if not wait_for(derr, "Capturing on", 10):
                fail(f"dumpcap did not start capturing: {''.join(derr)}")
            time.sleep(0.3)
            t0, c0 = time.perf_counter(), cap.first_ns
            sent = []  # (wall clock before, after) the send of each frame, ns
            for ts, frame in frames:
                due = t0 + (ts - c0) * STRETCH / 1e9
                while True:
                    now = time.perf_counter()
                    if now >= due:
                        break
                    if due - now > 0.002:
                        time.sleep(due - now - 0.001)
                before = time.time_ns()
                sock.send(frame)
                sent.append((before, time.time_ns()))
            # Time-driven output: the lo stays silent now, and rdmatel's heartbeats must carry
            # every completed I/O out within the reorder window (and a margin), before any stop.
            complete = sum(1 for io in truth["ios"] if io["complete"])
            deadline = time.time() + 5
            while time.time() < deadline and sum(1 for l in out if l.strip()) < complete:
                time.sleep(0.05)
            before_stop = sum(1 for l in out if l.strip())
            if before_stop < complete:
                problems.append(f"only {before_stop} of {complete} completed I/Os came out while lo was silent")
            for p in (live, dump):
                p.send_signal(signal.SIGINT)
            live_rc, dump_rc = live.wait(timeout=30), dump.wait(timeout=30)
        finally:
            for p in (live, dump):
                if p.poll() is None:
                    p.kill()
                    p.wait()
            for t in threads:
                t.join(timeout=10)
        if live_rc != 0:
            fail(f"rdmatel live exited {live_rc}: {''.join(err)}")
        if dump_rc != 0:
            fail(f"dumpcap exited {dump_rc}: {''.join(derr)}")
        got = [json.loads(l) for l in out if l.strip()]
        exp = subprocess.run([cli, "export", "io", pcap_file, "-q"], capture_output=True, text=True, timeout=60)
        if exp.returncode != 0:
            fail(f"export io of dumpcap's capture exited {exp.returncode}: {exp.stderr}")
        dumped = [json.loads(l) for l in exp.stdout.splitlines() if l.strip()]

    # Ground truth: every I/O once, by its key, with its completion and stretched latency.
    def key(r):
        return (r["op"], r["host"], r["storage"], int(r["qpn"]), int(r["cid"]), int(r["cmd_psn"]))

    def moved(addr):
        a = [int(x) for x in addr.split(".")]
        return f"127.{base + a[1]}.{a[2]}.{a[3]}"

    checked = 0
    by_key = {}
    for r in got:
        by_key.setdefault(key(r), []).append(r)
    for t in truth["ios"]:
        k = (t["op"], moved(t["host"]), moved(t["storage"]), t["qpn"], t["cid"], t["cmd_psn"])
        c = by_key.get(k, [])
        if len(c) != 1:
            problems.append(f"truth I/O {k} found {len(c)} times live")
            continue
        r = c[0]
        if r["complete"] != t["complete"]:
            problems.append(f"I/O {k}: complete {r['complete']}, truth {t['complete']}")
        if t["complete"] and not t.get("retransmitted") and t.get("cmd_frame") and t.get("rsp_frame"):
            cmd, rsp = sent[t["cmd_frame"] - 1], sent[t["rsp_frame"] - 1]
            lo, hi = rsp[0] - cmd[1], rsp[1] - cmd[0]
            iol = round(r["iol_us"] * 1000) if "iol_us" in r else None
            if iol is None or not (lo - 1000 <= iol <= hi + 1000):
                problems.append(f"I/O {k}: iol {iol} ns, the sends put it in [{lo}, {hi}] ns")
            else:
                checked += 1
    if len(got) != len(truth["ios"]):
        problems.append(f"{len(got)} I/Os live, truth has {len(truth['ios'])}")

    # The same frames captured by dumpcap: the same records (frame numbers aside: rdmatel live
    # numbers the packets it captured, as dumpcap's file does, but either may have caught a
    # frame of another test).
    def strip(r):
        return json.dumps({k: v for k, v in r.items() if k not in ("cmd_frame", "rsp_frame")}, sort_keys=True)

    a, b = sorted(map(strip, got)), sorted(map(strip, dumped))
    if a != b:
        missing, extra = set(b) - set(a), set(a) - set(b)
        problems.append(f"live and export of dumpcap's capture differ: {len(missing)} only in export "
                        f"(e.g. {sorted(missing)[:1]}), {len(extra)} only live (e.g. {sorted(extra)[:1]})")
    if checked < len(truth["ios"]) // 2:
        problems.append(f"only {checked} I/Os had their latency checked")
    print(f"{len(frames)} frames written to lo; {len(got)} I/Os live, {len(dumped)} in export of dumpcap's file, "
          f"{len(truth['ios'])} in the truth; {checked} latencies within the bounds of the test's own clock; "
          f"{before_stop} records out before the stop")
    fail_if(problems, "problems", 20)
    print("live loopback: OK")


if __name__ == "__main__":
    main()
