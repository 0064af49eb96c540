#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Hostile captures with bounded memory: writes pcapng files built to exhaust state or confuse
the decoders, runs `rdmatel export io` on each under `/usr/bin/time -v` with small limits, and
checks that
  - the exit status is the documented one (0, or 3 when the file itself is cut or corrupt),
  - peak memory stays within a bound derived from the limits (--max-ios, --max-flows,
    --max-messages):
        anonymous RSS <= baseline + max_ios * IO_BUDGET + max_flows * FLOW_BUDGET
                         + max_messages * MESSAGE_BUDGET + SLACK
        max RSS (time -v) <= that + the file size (the capture is memory-mapped)
    where the baseline is the same run on the capture without its hostile part,
  - the limit warnings appear on standard error ("limit max_ios", "limit max_flows"),
  - well-formed NVMe I/Os written byte by byte before and after the hostile part (reads and
    writes seen at a compute and a storage point, with known timestamps) are exported exactly:
    every T1..T7 and every metric,
  - the run finishes within a time bound (a quadratic blow-up is a hang).

    tests/robustness/hostile_captures.py --cli build/test/cli/rdmatel [--packets 2000000]
        [--max-ios 10000] [--max-flows 10000] [--max-messages 10000] [--only NAME,...] [--keep DIR]

Scenarios (each adds its hostile part between the prologue and the epilogue I/Os):
  ios_never_complete  --packets NVMe commands that never complete, on 16 queues
  many_flows          --packets packets of as many distinct flows (source IP, QPN)
  psn_jumps           --packets packets of 256 flows, random opcodes, PSNs jumping at random
  psn_spans           RDMA WRITE messages whose PSNs span 2^22 on up to min(max_flows, 4000) flows
  cid_reuse           --packets commands and completions reusing 4 CIDs on 4 queues, resends
  lengths             zero and huge lengths: UDP/IP/IPv6 lengths, IHL, pad, SGL lengths, EPBs with
                      cap_len > orig_len or 0, snaplen 0 and 65535, ending with a block whose
                      length field is absurd (exit 3 after the epilogue)
  cut_mid_packet      the epilogue, then a packet cut in the middle by the end of the file (exit 3)
  time_jumps          commands, data and completions whose stamps jump backwards and forwards
                      by up to 30 years
  backwards_stamps    every packet stamped before the one ahead of it, inside the reorder window
  many_points         --packets interfaces of one packet each, then as many WRITEs at one point
                      (bound: + POINT_BUDGET per interface)
  flows_at_points     --packets / 8 flows, each a WRITE seen at 64 points (8 x --packets packets):
                      state is kept per flow and point, so max_flows must bound flow-points; also
                      run with `analyze`, the command that keeps the most per flow-point
  command_at_points   NVMe reads, each command seen at 300 points before its completion (a counter of
                      the points holding an I/O wrapped at 256: the I/O's list looped and every
                      command hung)
  copies_at_points    --packets / 1500 RDMA WRITEs, each seen at 1500 points 100 ns apart: every
                      pair of points that saw a packet related their clocks, K^2 / 2 pairs and
                      K^3 / 6 steps, and laying it on its path took K^2 (bound: + POINT_BUDGET per
                      interface; sightings beyond 64 points are left out, with a warning)
Python standard library only. Exit status 0 when every check passes, 1 otherwise, 77 when
/usr/bin/time is missing.
"""
import argparse
import json
import os
import random
import signal
import struct
import subprocess
import sys
import tempfile
import threading
import time

# The integration tests' helpers (one AddressSanitizer check for every test that reads memory).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
from rdmatel_testlib import sanitized  # noqa: E402

# Memory budgets per tracked item (bytes), generous against the engine's real cost so the bound
# only fails when state is not bounded by the limits at all.
IO_BUDGET = 2048
MESSAGE_BUDGET = 2048
FLOW_BUDGET = 8192
SLACK = 48 << 20

BASE_NS = 1_700_000_000_000_000_000
EPOCH_PROLOGUE = BASE_NS
EPOCH_HOSTILE = BASE_NS + 1_000_000_000          # +1 s
YEAR_NS = 365 * 86400 * 1_000_000_000

C, S = 0, 1  # interface ids of the compute and storage points
FIRST_EXTRA_INTERFACE = 4  # many_points, flows_at_points: after compute, storage, snap0 and snap65535
FLOW_POINTS = 64  # flows_at_points: the points each flow is seen at
COPY_POINTS = 1500  # copies_at_points: the points each packet is seen at
COMMAND_POINTS = 300  # command_at_points: the points each NVMe command is seen at
# Per observation point (many_points): its buffers start small (a point of a handful of packets
# took ~30 KB; 40,000 of them 1.4 GB).
POINT_BUDGET = 8192

# ------------------------------------------------------------------ packet building


def mac(n):
    return bytes([0x02, 0, 0, 0, (n >> 8) & 0xFF, n & 0xFF])


def ipv4(addr):
    return bytes(int(x) for x in addr.split("."))


def roce(opcode, qpn, psn, ext=b"", payload=b"", pad=0, ack_req=False):
    bth = struct.pack(">BBHB", opcode, (pad & 3) << 4, 0xFFFF, 0) + (qpn & 0xFFFFFF).to_bytes(3, "big")
    bth += bytes([0x80 if ack_req else 0]) + (psn & 0xFFFFFF).to_bytes(3, "big")
    return bth + ext + payload + b"\0" * pad + b"\0\0\0\0"


def udp_ipv4(src, dst, sport, l4, dport=4791, udp_len=None, ip_len=None, ihl=5, ecn=0):
    udp = struct.pack(">HHHH", sport, dport, len(l4) + 8 if udp_len is None else udp_len, 0) + l4
    total = 20 + len(udp) if ip_len is None else ip_len
    ip = struct.pack(">BBHHHBBH4s4s", 0x40 | ihl, ecn, total & 0xFFFF, 0, 0x4000, 64, 17, 0, src, dst)
    return mac(1) + mac(2) + b"\x08\x00" + ip + udp


def udp_ipv6(src, dst, sport, l4, payload_len=None):
    udp = struct.pack(">HHHH", sport, 4791, len(l4) + 8, 0) + l4
    plen = len(udp) if payload_len is None else payload_len
    ip = struct.pack(">IHBB", 0x60000000, plen & 0xFFFF, 17, 64) + src + dst
    return mac(1) + mac(2) + b"\x86\xdd" + ip + udp


def sqe(opcode, cid, length, key, sgl_id=0x40, nsid=1):
    b = struct.pack("<BBHI", opcode, 0x40, cid & 0xFFFF, nsid) + b"\0" * 16 + struct.pack("<Q", 0x10000)
    if sgl_id >> 4 == 4:
        b += (length & 0xFFFFFF).to_bytes(3, "little") + struct.pack("<I", key & 0xFFFFFFFF)
    else:
        b += struct.pack("<I", length & 0xFFFFFFFF) + b"\0\0\0"
    b += bytes([sgl_id])
    return b + b"\0" * (64 - len(b))


def cqe(cid, status=0, sqid=1):
    return struct.pack("<IIHHHH", 0, 0, 0, sqid, cid & 0xFFFF, (status << 1) & 0xFFFF)


def reth(va, key, length):
    return struct.pack(">QII", va, key & 0xFFFFFFFF, length & 0xFFFFFFFF)


def aeth(syndrome, msn=0):
    return bytes([syndrome]) + (msn & 0xFFFFFF).to_bytes(3, "big")


# ------------------------------------------------------------------ pcapng writing


class Pcapng:
    """Little-endian pcapng, ns stamps; frames above `trim` bytes are stored cut (orig kept)."""

    def __init__(self, path, interfaces, trim=256):
        self.f = open(path, "wb", buffering=1 << 22)
        self.trim = trim
        self.packets = 0
        self.block(0x0A0D0D0A, struct.pack("<IHHq", 0x1A2B3C4D, 1, 0, -1))
        for name, snaplen in interfaces:
            opts = self.option(2, name.encode()) + self.option(9, b"\x09") + b"\0\0\0\0"
            self.block(1, struct.pack("<HHI", 1, 0, snaplen) + opts)

    @staticmethod
    def option(code, value):
        return struct.pack("<HH", code, len(value)) + value + b"\0" * (-len(value) % 4)

    def block(self, btype, body, length=None):
        body += b"\0" * (-len(body) % 4)
        n = 12 + len(body) if length is None else length
        self.f.write(struct.pack("<II", btype, n) + body + struct.pack("<I", n))

    def packet(self, iface, ts, frame, orig=None, cap=None):
        data = frame[: self.trim]
        orig = len(frame) if orig is None else orig
        cap = len(data) if cap is None else cap
        ts &= (1 << 64) - 1
        self.block(6, struct.pack("<IIIII", iface, ts >> 32, ts & 0xFFFFFFFF, cap, orig) + data)
        self.packets += 1

    def raw(self, data):
        self.f.write(data)

    def close(self):
        self.f.close()


# ------------------------------------------------------------------ well-formed NVMe I/Os


class Queue:
    """One NVMe/RDMA queue pair between a host and a storage server, seen at C and S."""

    def __init__(self, host, storage, storage_qpn, host_qpn, sport=0xC001):
        self.host, self.storage = ipv4(host), ipv4(storage)
        self.host_txt, self.storage_txt = host, storage
        self.sqpn, self.hqpn, self.sport = storage_qpn, host_qpn, sport
        self.h_psn, self.s_psn = 100, 5000
        self.next_cid = 1
        self.next_key = 0x1000

    def up(self, l4):
        return udp_ipv4(self.host, self.storage, self.sport, l4)

    def down(self, l4):
        return udp_ipv4(self.storage, self.host, self.sport, l4)

    def read_frames(self, cid, key, h_psn, s_psn):
        """A 4 KiB read's frames: its command (host to storage, PSN h_psn), its data (an RDMA WRITE
        into the host's buffer `key`, PSN s_psn) and its completion (a SEND invalidating the key)."""
        cmd = self.up(roce(0x04, self.sqpn, h_psn, payload=sqe(0x02, cid, 4096, key)))
        data = self.down(roce(0x0A, self.hqpn, s_psn, ext=reth(0x10000, key, 4096), payload=b"\xab" * 4096))
        cpl = self.down(roce(0x17, self.hqpn, s_psn + 1, ext=struct.pack(">I", key), payload=cqe(cid)))
        return cmd, data, cpl

    def read(self, w, t):
        """A read seen at both points; returns the expected export record fields."""
        cid, key = self.next_cid, self.next_key
        self.next_cid, self.next_key = self.next_cid + 1, self.next_key + 1
        cmd, data, cpl = self.read_frames(cid, key, self.h_psn, self.s_psn)
        self.h_psn += 1
        self.s_psn += 2
        for iface, dt, frame in ((C, 0, cmd), (S, 1000, cmd), (S, 5000, data), (C, 5500, data), (S, 9000, cpl),
                                 (C, 9500, cpl)):
            w.packet(iface, t + dt, frame)
        return {"op": "read", "host": self.host_txt, "storage": self.storage_txt, "qpn": self.sqpn, "cid": cid,
                "complete": True, "t1_ns": t, "t2_ns": t + 1000, "t3_ns": t + 5000, "t4_ns": t + 9000,
                "t5_ns": t + 9500, "dal_us": "4.000", "iol1_us": "9.500", "iol2_us": "8.000", "rtt_us": "1.500",
                "iol_us": "9.500"}

    def write(self, w, t):
        cid, key = self.next_cid, self.next_key
        self.next_cid, self.next_key = self.next_cid + 1, self.next_key + 1
        cmd = self.up(roce(0x04, self.sqpn, self.h_psn, payload=sqe(0x01, cid, 8192, key)))
        rr_psn = self.s_psn
        rreq = self.down(roce(0x0C, self.hqpn, rr_psn, ext=reth(0x20000, key, 8192)))
        rsp1 = self.up(roce(0x0D, self.sqpn, rr_psn, ext=aeth(0), payload=b"\xcd" * 4096))
        rsp2 = self.up(roce(0x0F, self.sqpn, rr_psn + 1, ext=aeth(0), payload=b"\xcd" * 4096))
        cpl = self.down(roce(0x04, self.hqpn, rr_psn + 2, payload=cqe(cid)))
        self.h_psn += 1
        self.s_psn += 3
        for iface, dt, frame in ((C, 0, cmd), (S, 1000, cmd), (S, 2000, rreq), (C, 2500, rreq), (C, 4000, rsp1),
                                 (C, 4100, rsp2), (S, 4500, rsp1), (S, 4600, rsp2), (S, 8000, cpl), (C, 8500, cpl)):
            w.packet(iface, t + dt, frame)
        return {"op": "write", "host": self.host_txt, "storage": self.storage_txt, "qpn": self.sqpn, "cid": cid,
                "complete": True, "t1_ns": t, "t2_ns": t + 1000, "t3_ns": t + 2000, "t4_ns": t + 2500,
                "t5_ns": t + 4000, "t6_ns": t + 8000, "t7_ns": t + 8500, "dal_us": "1.000", "dpl_us": "1.500",
                "iol1_us": "8.500", "iol2_us": "7.000", "rtt_us": "1.500", "iol_us": "8.500"}


def read_along(w, frames, points, t, hop, gap=1000):
    """A read (read_frames) seen at points 0 .. points - 1 as along a path: its command reaching
    point k at t + k x hop; its data sent `gap` ns after one hop past the last point, then its
    completion as long after the data, each reaching point k (points - 1 - k) x hop after leaving.
    Returns the stamps the data and the completion left at (their stamps at the last point)."""
    cmd, data, cpl = frames
    for k in range(points):
        w.packet(k, t + k * hop, cmd)
    t_data = t + points * hop + gap
    for k in reversed(range(points)):
        w.packet(k, t_data + (points - 1 - k) * hop, data)
    t_cpl = t_data + points * hop + gap
    for k in reversed(range(points)):
        w.packet(k, t_cpl + (points - 1 - k) * hop, cpl)
    return t_data, t_cpl


def well_formed_ios(w, q, t0, count):
    out = []
    for i in range(count):
        t = t0 + i * 20_000
        out.append(q.read(w, t) if i % 2 == 0 else q.write(w, t))
    return out


# ------------------------------------------------------------------ hostile parts


def hostile_ios_never_complete(w, n, rng):
    queues = [Queue(f"10.1.0.{h + 1}", "10.2.0.1", 0x1000 + h, 0x2000 + h) for h in range(16)]
    # Queue 0 is confirmed as NVMe by one completion: its evicted I/Os are exported too.
    q0 = queues[0]
    w.packet(C, EPOCH_HOSTILE, q0.up(roce(0x04, q0.sqpn, 1, payload=sqe(0x02, 0xFFFF, 512, 1))))
    w.packet(C, EPOCH_HOSTILE + 10, q0.down(roce(0x04, q0.hqpn, 1, payload=cqe(0xFFFF))))
    templates = [bytearray(q.up(roce(0x04, q.sqpn, 0, payload=sqe(0x02, 0, 4096, 0)))) for q in queues]
    psn_at = 14 + 20 + 8 + 9
    sqe_at = 14 + 20 + 8 + 12
    for i in range(n):
        t = templates[i % 16]
        t[psn_at:psn_at + 3] = (i // 16 + 2 & 0xFFFFFF).to_bytes(3, "big")
        t[sqe_at + 2:sqe_at + 4] = (i & 0xFFFF).to_bytes(2, "little")
        t[sqe_at + 35:sqe_at + 39] = (i & 0xFFFFFFFF).to_bytes(4, "little")  # SGL key
        w.packet(C, EPOCH_HOSTILE + 100 + i * 1000, bytes(t))


def hostile_many_flows(w, n, rng):
    dst = ipv4("12.0.0.1")
    for i in range(n):
        src = bytes([11, (i >> 16) & 0xFF, (i >> 8) & 0xFF, i & 0xFF])
        qpn = (i * 7 + 3) & 0xFFFFFF
        kind = i % 3
        if kind == 0:
            l4 = roce(0x0A, qpn, i, ext=reth(0, i, 64), payload=b"\0" * 64)
        elif kind == 1:
            l4 = roce(0x04, qpn, i, payload=sqe(0x02, i, 4096, i))
        else:
            l4 = roce(0x11, qpn, i, ext=aeth(0x60 if i % 2 else 0))
        w.packet(C, EPOCH_HOSTILE + i * 1000, udp_ipv4(src, dst, 0xC000 | (i & 0x3FFF), l4))


DATA_OPCODES = [0x00, 0x01, 0x02, 0x04, 0x06, 0x07, 0x08, 0x0A, 0x0C, 0x0D, 0x0E, 0x0F, 0x10, 0x11]


def hostile_psn_jumps(w, n, rng):
    hosts = [ipv4(f"10.3.{i // 16}.{i % 16 + 1}") for i in range(16)]
    flows = [(hosts[i % 16], hosts[(i * 5 + 1) % 16], 0x3000 + i) for i in range(256)]
    for i in range(n):
        src, dst, qpn = flows[rng.randrange(256)]
        op = rng.choice(DATA_OPCODES)
        ext = b""
        if op in (0x06, 0x0A, 0x0C):
            ext = reth(0, rng.getrandbits(32), rng.getrandbits(32))
        elif op in (0x0D, 0x0F, 0x10, 0x11):
            ext = aeth(rng.choice((0, 0x1F, 0x60, 0x61, 0x63, 0x20)), rng.getrandbits(24))
        psn = rng.getrandbits(24) if rng.random() < 0.7 else (i & 0xFFFFFF)
        l4 = roce(op, qpn, psn, ext=ext, payload=b"\0" * (0 if op in (0x0C, 0x11) else 64), pad=rng.randrange(4))
        w.packet(C if i % 3 else S, EPOCH_HOSTILE + i * 100 + rng.randrange(1000), udp_ipv4(src, dst, 0xC100, l4),
                 orig=None)


def hostile_psn_spans(w, n, rng, max_flows):
    """Messages whose PSNs span almost 2^22 (the messages plugin's bitmap limit): one WRITE FIRST
    and one WRITE MIDDLE 4194300 PSNs later per flow, on as many flows as the limit allows (at most
    4000), all open at once. Then the remaining packets continue those messages."""
    dst = ipv4("12.1.0.1")
    flows = max(1, min(n // 2, max_flows - 16, 4000))
    for i in range(flows):
        src = bytes([13, (i >> 16) & 0xFF, (i >> 8) & 0xFF, i & 0xFF])
        t = EPOCH_HOSTILE + i * 100
        w.packet(C, t, udp_ipv4(src, dst, 0xC200, roce(0x06, 0x200, 0, ext=reth(0, i, 1 << 31), payload=b"\0" * 64)))
        w.packet(C, t + 50, udp_ipv4(src, dst, 0xC200, roce(0x07, 0x200, 4194300, payload=b"\0" * 64)))
    for k in range(n - 2 * flows):
        i = k % flows
        src = bytes([13, (i >> 16) & 0xFF, (i >> 8) & 0xFF, i & 0xFF])
        w.packet(C, EPOCH_HOSTILE + flows * 100 + k * 100,
                 udp_ipv4(src, dst, 0xC200, roce(0x07, 0x200, 1 + rng.randrange(4194299), payload=b"\0" * 64)))


def hostile_cid_reuse(w, n, rng):
    queues = [Queue(f"10.4.0.{h + 1}", "10.4.1.1", 0x4000 + h, 0x4100 + h) for h in range(4)]
    for i in range(n):
        q = queues[rng.randrange(4)]
        cid = rng.randrange(4)
        t = EPOCH_HOSTILE + i * 1000
        r = rng.random()
        if r < 0.6:
            psn = q.h_psn if rng.random() < 0.8 else rng.getrandbits(24)  # resends reuse a PSN
            q.h_psn += 1 if rng.random() < 0.9 else 0
            l4 = roce(0x04, q.sqpn, psn, payload=sqe(rng.choice((0x01, 0x02, 0x00)), cid, 4096, rng.getrandbits(8)))
            w.packet(rng.choice((C, S)), t, q.up(l4))
        elif r < 0.9:
            l4 = roce(rng.choice((0x04, 0x17)), q.hqpn, q.s_psn, ext=b"" if r < 0.8 else struct.pack(">I", cid),
                      payload=cqe(cid, rng.choice((0, 0, 0, 2))))
            if l4[0] == 0x04 and len(l4) != 12 + 16 + 4:
                l4 = roce(0x04, q.hqpn, q.s_psn, payload=cqe(cid))
            q.s_psn += 1
            w.packet(rng.choice((C, S)), t, q.down(l4))
        else:
            l4 = roce(0x0A, q.hqpn, q.s_psn, ext=reth(0, rng.getrandbits(8), 4096), payload=b"\0" * 64)
            q.s_psn += 1
            w.packet(rng.choice((C, S)), t, q.down(l4), orig=4200)


def hostile_lengths(w, n, rng):
    h, s = ipv4("10.5.0.1"), ipv4("10.5.0.2")
    cmd = roce(0x04, 0x5000, 1, payload=sqe(0x02, 1, 0xFFFFFF, 0x55))
    variants = [
        udp_ipv4(h, s, 1, cmd, udp_len=0),
        udp_ipv4(h, s, 1, cmd, udp_len=7),
        udp_ipv4(h, s, 1, cmd, udp_len=8),
        udp_ipv4(h, s, 1, cmd, udp_len=65535),
        udp_ipv4(h, s, 1, cmd, udp_len=65535, ip_len=65535),
        udp_ipv4(h, s, 1, cmd, ip_len=0),
        udp_ipv4(h, s, 1, cmd, ip_len=20),
        udp_ipv4(h, s, 1, cmd, ip_len=65535),
        udp_ipv4(h, s, 1, cmd, ihl=0),
        udp_ipv4(h, s, 1, cmd, ihl=15),
        udp_ipv6(b"\xfd" + b"\0" * 14 + b"\1", b"\xfd" + b"\0" * 14 + b"\2", 1, cmd, payload_len=0),
        udp_ipv6(b"\xfd" + b"\0" * 14 + b"\1", b"\xfd" + b"\0" * 14 + b"\2", 1, cmd, payload_len=65535),
        udp_ipv4(h, s, 1, roce(0x04, 0x5000, 2, payload=b"", pad=3)),
        udp_ipv4(h, s, 1, roce(0x04, 0x5000, 3, payload=sqe(0x01, 2, 0, 0x56))),
        udp_ipv4(h, s, 1, roce(0x04, 0x5000, 4, payload=sqe(0x01, 3, 0xFFFFFFFF, 0, sgl_id=0x01))),
        udp_ipv4(h, s, 1, roce(0x0C, 0x5001, 5, ext=reth(~0 & (2**64 - 1), 0x55, 0xFFFFFFFF))),
        udp_ipv4(h, s, 1, roce(0x0A, 0x5001, 6, ext=reth(0, 0x55, 0), payload=b"")),
        udp_ipv4(h, s, 1, b""),                           # UDP to 4791 with nothing in it
        udp_ipv4(h, s, 1, roce(0x04, 0x5000, 7)[:11]),   # BTH cut
        mac(1) + mac(2) + b"\x08\x00",                    # Ethernet header only
        b"",                                              # nothing at all
    ]
    for i in range(n):
        f = variants[i % len(variants)]
        t = EPOCH_HOSTILE + i * 1000
        k = (i // len(variants)) % 5
        iface = 2 + (i % 2)  # the snaplen 0 and snaplen 65535 interfaces
        if k == 0:
            w.packet(iface, t, f)
        elif k == 1:
            w.packet(iface, t, f, orig=0)            # cap_len > orig_len
        elif k == 2:
            w.packet(iface, t, f, orig=1)
        elif k == 3:
            w.packet(iface, t, f, orig=0xFFFFFFFF)   # huge original length
        else:
            w.packet(C, t, f[:rng.randrange(len(f) + 1)], orig=len(f))  # snap-length cuts anywhere


def hostile_time_jumps(w, n, rng):
    queues = [Queue(f"10.6.0.{h + 1}", "10.6.1.1", 0x6000 + h, 0x6100 + h) for h in range(8)]
    for i in range(n):
        q = queues[i % 8]
        jump = rng.choice((0, 0, rng.randrange(-30 * YEAR_NS, 30 * YEAR_NS), rng.randrange(-1000, 1000) * YEAR_NS // 1000))
        t = max(0, EPOCH_HOSTILE + jump + rng.randrange(10**9))
        cid = i & 0xFF
        r = i % 4
        if r == 0:
            w.packet(rng.choice((C, S)), t, q.up(roce(0x04, q.sqpn, i, payload=sqe(0x02, cid, 4096, i))))
        elif r == 1:
            w.packet(rng.choice((C, S)), t, q.down(roce(0x0A, q.hqpn, i, ext=reth(0, i - 1, 4096), payload=b"\0" * 64)))
        else:
            w.packet(rng.choice((C, S)), t, q.down(roce(0x04, q.hqpn, i, payload=cqe(cid))))


def hostile_backwards_stamps(w, n, rng):
    """Every packet stamped 10 ns before the one ahead of it, all inside the reorder window: each
    sorts to the front of its point's buffer (quadratic work in an insertion-sorted buffer)."""
    queues = [Queue(f"10.7.0.{h + 1}", "10.7.1.1", 0x7000 + h, 0x7100 + h) for h in range(8)]
    for i in range(n):
        q = queues[i % 8]
        w.packet(rng.choice((C, S)), EPOCH_HOSTILE + (n - i) * 10,
                 q.down(roce(0x0A, q.hqpn, i, ext=reth(0, i, 4096), payload=b"\0" * 64)))


def hostile_many_points(w, n, rng):
    """--packets interfaces (observation points) of one ACK each, declared up front, then as many
    RDMA WRITEs at the compute point, whose copies `paths` waits for at every one of them."""
    q = Queue("10.9.0.1", "10.9.0.2", 0x9900, 0x9901)
    for k in range(n):  # (one flow: a limit on flows leaves no point unmeasured)
        w.packet(FIRST_EXTRA_INTERFACE + k, EPOCH_HOSTILE + k * 100, q.down(roce(0x11, q.hqpn, k, ext=aeth(0x1F))))
    for i in range(n):
        w.packet(C, EPOCH_HOSTILE + n * 100 + i * 100,
                 q.up(roce(0x0A, q.sqpn, i, ext=reth(0, 7, 64), payload=b"\1" * 64)))


def hostile_flows_at_points(w, n, rng):
    """n / 8 flows, each one RDMA WRITE seen at FLOW_POINTS points 100 ns apart."""
    for i in range(max(1, n // 8)):
        src = bytes([13, (i >> 16) & 0xFF, (i >> 8) & 0xFF, i & 0xFF])
        frame = udp_ipv4(src, ipv4("13.255.0.1"), 0xC003,
                         roce(0x0A, (i * 5 + 1) & 0xFFFFFF, i, ext=reth(0, i, 64), payload=b"\2" * 64))
        t = EPOCH_HOSTILE + i * FLOW_POINTS * 100
        for k in range(FLOW_POINTS):
            w.packet(FIRST_EXTRA_INTERFACE + k, t + k * 100, frame)


def hostile_copies_at_points(w, n, rng):
    """n / COPY_POINTS RDMA WRITEs of one queue pair, each seen at COPY_POINTS points 100 ns apart."""
    q = Queue("10.8.0.1", "10.8.0.2", 0x8800, 0x8801)
    for i in range(max(1, n // COPY_POINTS)):
        frame = q.up(roce(0x0A, q.sqpn, i, ext=reth(0, 9, 64), payload=b"\3" * 64))
        t = EPOCH_HOSTILE + i * COPY_POINTS * 100
        for k in range(COPY_POINTS):
            w.packet(FIRST_EXTRA_INTERFACE + k, t + k * 100, frame)


def hostile_command_at_points(w, n, rng):
    """--packets / (2 x COMMAND_POINTS) NVMe reads, each command seen at every point, then its completion."""
    q = Queue("10.6.0.1", "10.6.0.2", 0x6600, 0x6601)
    for i in range(max(1, n // (2 * COMMAND_POINTS))):
        t = EPOCH_HOSTILE + i * 10_000_000
        cmd = q.up(roce(0x04, q.sqpn, 1000 + i, payload=sqe(0x02, i + 1, 4096, 0x6000 + i)))
        cpl = q.down(roce(0x04, q.hqpn, 2000 + i, payload=cqe(i + 1)))
        for k in range(COMMAND_POINTS):
            w.packet(FIRST_EXTRA_INTERFACE + k, t + k * 100, cmd)
        for k in range(COMMAND_POINTS):
            w.packet(FIRST_EXTRA_INTERFACE + k, t + 5_000_000 - k * 100, cpl)


SCENARIOS = {
    "ios_never_complete": (hostile_ios_never_complete, ["limit max_ios"], 0),
    "many_flows": (hostile_many_flows, ["limit max_flows"], 0),
    "psn_jumps": (hostile_psn_jumps, [], 0),
    "psn_spans": (hostile_psn_spans, [], 0),
    "cid_reuse": (hostile_cid_reuse, [], 0),
    "lengths": (hostile_lengths, [], 3),
    "cut_mid_packet": (None, [], 3),
    "time_jumps": (hostile_time_jumps, [], 0),
    "backwards_stamps": (hostile_backwards_stamps, [], 0),
    "many_points": (hostile_many_points, [], 0),
    "flows_at_points": (hostile_flows_at_points, ["limit max_flows"], 0),
    "command_at_points": (hostile_command_at_points, [], 0),
    "copies_at_points": (hostile_copies_at_points, ["packets seen at more than 64 observation points"], 0),
}
# Scenarios also run with `analyze` (against the same bound, over analyze's own baseline).
ANALYZED = {"flows_at_points"}


def write_capture(path, name, n, epilogue_ios, seed, max_flows=10000):
    """Prologue I/O, hostile part, epilogue I/Os; returns the expected records."""
    rng = random.Random(seed)
    interfaces = [("compute", 262144), ("storage", 262144), ("snap0", 0), ("snap65535", 65535)]
    if name == "many_points":
        interfaces += [(f"p{k}", 262144) for k in range(n)]
    if name == "flows_at_points":
        interfaces += [(f"p{k}", 262144) for k in range(FLOW_POINTS)]
    if name == "copies_at_points":
        interfaces += [(f"p{k}", 262144) for k in range(COPY_POINTS)]
    if name == "command_at_points":
        interfaces += [(f"p{k}", 262144) for k in range(COMMAND_POINTS)]
    w = Pcapng(path, interfaces)
    q = Queue("192.168.77.1", "192.168.77.2", 0x77AA, 0x77BB)
    expected = well_formed_ios(w, q, EPOCH_PROLOGUE, 1)
    fn = SCENARIOS[name][0]
    if fn is hostile_psn_spans and n:
        fn(w, n, rng, max_flows)
    elif fn and n:
        fn(w, n, rng)
    # The epilogue starts after the hostile part on the ordinary clock (1 ms per hostile packet
    # at most), so it is not older than what the points have legitimately seen.
    t_epi = EPOCH_HOSTILE + 1_000_000 * 1000 + n * 1000 + 10_000_000_000
    expected += well_formed_ios(w, q, t_epi, epilogue_ios)
    if name == "lengths":
        # An absurd block length ends the file's readable part: reported, exit 3.
        w.block(6, struct.pack("<IIIII", 0, 0, 0, 16, 16) + b"\0" * 16, length=0xFFFFFFF0)
    if name == "cut_mid_packet":
        frame = q.up(roce(0x04, q.sqpn, q.h_psn, payload=sqe(0x02, 999, 4096, 0x999)))
        body = struct.pack("<IIIII", C, 0, 0, len(frame), len(frame)) + frame
        block = struct.pack("<II", 6, 12 + len(body) + (-len(body) % 4)) + body
        w.raw(block[: len(block) // 2])
    w.close()
    return expected


# ------------------------------------------------------------------ running and checking


def run_measured(cmd, timeout):
    """Runs cmd under /usr/bin/time -v; returns (status, stderr, max_rss_kb, peak_anon_kb, secs)."""
    start = time.monotonic()
    # In a session of its own: on a timeout the whole group goes (killing /usr/bin/time alone left
    # the CLI running, holding the pipe, and the wait for its output never ended).
    p = subprocess.Popen(["/usr/bin/time", "-v", *cmd], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                         start_new_session=True)
    peak_anon = [0]
    done = threading.Event()

    def poll():
        child = None
        while not done.is_set():
            try:
                if child is None:
                    with open(f"/proc/{p.pid}/task/{p.pid}/children") as f:
                        kids = f.read().split()
                    child = kids[0] if kids else None
                if child:
                    with open(f"/proc/{child}/status") as f:
                        for line in f:
                            if line.startswith("RssAnon:"):
                                peak_anon[0] = max(peak_anon[0], int(line.split()[1]))
            except (OSError, ValueError, IndexError):
                pass
            time.sleep(0.01)

    th = threading.Thread(target=poll, daemon=True)
    th.start()
    try:
        _, err = p.communicate(timeout=timeout)
        status = p.returncode
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        _, err = p.communicate()
        status = "timeout"
    done.set()
    th.join()
    err = err.decode("utf-8", "replace")
    rss = 0
    for line in err.splitlines():
        if "Maximum resident set size" in line:
            rss = int(line.split(":")[1])
        if "Exit status:" in line and status != "timeout":
            status = int(line.split(":")[1])
        if "Command terminated by signal" in line:
            status = -int(line.split()[-1])
    return status, err, rss, peak_anon[0], time.monotonic() - start


def check_records(out_path, expected, label):
    got = {}
    with open(out_path, "rb") as f:
        for line in f:
            if b"192.168.77.2" not in line:
                continue
            r = json.loads(line)
            if r.get("storage") == "192.168.77.2" and r.get("host") == "192.168.77.1":
                got.setdefault((r["cid"], r.get("t1_ns")), []).append(r)
    problems = []
    for e in expected:
        k = (e["cid"], e["t1_ns"])
        recs = got.get(k, [])
        if len(recs) != 1:
            problems.append(f"{label}: I/O cid {e['cid']} at {e['t1_ns']} exported {len(recs)} times")
            continue
        r = recs[0]
        for f, v in e.items():
            if r.get(f) != v and not (isinstance(v, str) and r.get(f) is not None and float(r[f]) == float(v)):
                problems.append(f"{label}: I/O cid {e['cid']}: {f} = {r.get(f)!r}, want {v!r}")
        for f in ("t6_ns", "t7_ns", "dpl_us"):
            if f not in e and f in r:
                problems.append(f"{label}: I/O cid {e['cid']}: unexpected {f} = {r[f]!r}")
    extra = sum(len(v) for v in got.values()) - len(expected)
    if extra > 0:
        problems.append(f"{label}: {extra} unexpected records on the well-formed queue")
    return problems


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cli", required=True)
    ap.add_argument("--packets", type=int, default=2_000_000, help="hostile packets per scenario")
    ap.add_argument("--max-ios", type=int, default=10000)
    ap.add_argument("--max-flows", type=int, default=10000)
    ap.add_argument("--max-messages", type=int, default=10000)
    ap.add_argument("--epilogue", type=int, default=600,
                    help="well-formed I/Os after the hostile part (600: > 4096 packets, so housekeeping runs among them)")
    ap.add_argument("--timeout", type=int, default=600, help="seconds per run")
    ap.add_argument("--only", help="comma-separated scenarios")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--keep", help="keep the captures and exports in this folder")
    ap.add_argument("--json", help="write the measurements here")
    args = ap.parse_args()
    if not os.path.exists("/usr/bin/time"):
        print("hostile_captures: /usr/bin/time is missing (apt-get install time): skipped", file=sys.stderr)
        return 77
    names = args.only.split(",") if args.only else list(SCENARIOS)
    work = args.keep or tempfile.mkdtemp(prefix="rdmatel_hostile_")
    os.makedirs(work, exist_ok=True)
    asan = sanitized(args.cli)
    limits = ["--max-ios", str(args.max_ios), "--max-flows", str(args.max_flows),
              "--max-messages", str(args.max_messages), "--no-progress",
              "--point", "compute=compute", "--point", "storage=storage"]
    budget_kb = (args.max_ios * IO_BUDGET + args.max_flows * FLOW_BUDGET + args.max_messages * MESSAGE_BUDGET
                 + SLACK) // 1024

    # Baseline: the same prologue and epilogue without a hostile part.
    base_cap = os.path.join(work, "baseline.pcapng")
    base_out = os.path.join(work, "baseline.jsonl")
    expected = write_capture(base_cap, "psn_jumps", 0, args.epilogue, args.seed)
    st, err, base_rss, base_anon, secs = run_measured([args.cli, "export", "io", base_cap, "-o", base_out, *limits],
                                                      args.timeout)
    problems = [] if st == 0 else [f"baseline: exit status {st}: {err[-500:]}"]
    problems += check_records(base_out, expected, "baseline")
    print(f"baseline: {os.path.getsize(base_cap) >> 10} KiB, max RSS {base_rss >> 10} MiB, anon {base_anon >> 10} MiB; "
          f"bound: anon <= baseline + {budget_kb >> 10} MiB (max_ios {args.max_ios} x {IO_BUDGET} B + max_flows "
          f"{args.max_flows} x {FLOW_BUDGET} B + max_messages {args.max_messages} x {MESSAGE_BUDGET} B + {SLACK >> 20} MiB){' [ASan build: memory not asserted]' if asan else ''}")
    print(f"{'scenario':20} {'packets':>9} {'file MiB':>9} {'max RSS MiB':>12} {'anon MiB':>9} {'seconds':>8}  result")
    results = []
    analyze_base = None  # (max RSS, anonymous) of analyze on the baseline, once a scenario needs it
    for name in names:
        if name not in SCENARIOS:
            problems.append(f"unknown scenario {name}")
            continue
        cap = os.path.join(work, f"{name}.pcapng")
        out = os.path.join(work, f"{name}.jsonl")
        t0 = time.monotonic()
        expected = write_capture(cap, name, args.packets, args.epilogue, args.seed, args.max_flows)
        gen_s = time.monotonic() - t0
        size = os.path.getsize(cap)
        # A hang is a failure, and should not take the whole --timeout to show: a few thousand
        # packets at a few hundred points take well under a second.
        timeout = min(args.timeout, 120) if name == "command_at_points" else args.timeout
        st, err, rss, anon, secs = run_measured([args.cli, "export", "io", cap, "-o", out, *limits], timeout)
        if st == "timeout":
            mine_timeout = [f"no end within {timeout} s (a hang)"]
        else:
            mine_timeout = []
        mine = list(mine_timeout)
        want_status = SCENARIOS[name][2]
        if st != want_status:
            mine.append(f"exit status {st}, want {want_status}")
        stderr_lines = [l for l in err.splitlines() if l.startswith("rdmatel")]
        for w in SCENARIOS[name][1]:
            if not any(w in l for l in stderr_lines):
                mine.append(f"no '{w}' warning on stderr")
        if want_status == 3 and not any("error" in l for l in stderr_lines):
            mine.append("exit 3 without an error sentence")
        if "Sanitizer" in err or "runtime error" in err:
            mine.append("sanitizer report")
        if not asan and st != "timeout":
            extra_points = {"many_points": args.packets, "flows_at_points": FLOW_POINTS, "copies_at_points": COPY_POINTS,
                            "command_at_points": COMMAND_POINTS}
            bound_kb = budget_kb + extra_points.get(name, 0) * POINT_BUDGET // 1024
            if anon > base_anon + bound_kb:
                mine.append(f"anonymous memory {anon >> 10} MiB > bound {(base_anon + bound_kb) >> 10} MiB")
            if rss > base_rss + bound_kb + size // 1024:
                mine.append(f"max RSS {rss >> 10} MiB > bound {(base_rss + bound_kb + size // 1024) >> 10} MiB")
        if os.path.exists(out) and st != "timeout":
            mine += check_records(out, expected, name)
        elif st != "timeout":
            mine.append("no export written")
        analyze_line = None
        if name in ANALYZED:
            if analyze_base is None:
                _, _, a_rss, a_anon, _ = run_measured([args.cli, "analyze", base_cap, *limits], args.timeout)
                analyze_base = (a_rss, a_anon)
            report = os.path.join(work, f"{name}.analyze.txt")
            a_st, a_err, a_rss, a_anon, a_secs = run_measured([args.cli, "analyze", cap, "-o", report, *limits],
                                                              args.timeout)
            # The report says how many packets the limit left out: at least the hostile ones
            # beyond max_flows flow-points, at most all of them.
            hostile = max(1, args.packets // 8) * FLOW_POINTS
            said = [l for l in open(report, encoding="utf-8") if l.startswith("  not measured: ")] \
                if os.path.exists(report) else []
            left_out = int(said[0].split()[2]) if said else None
            if left_out is None or not hostile - args.max_flows <= left_out <= hostile:
                mine.append(f"analyze: {said[0].strip() if said else 'no not-measured line'}; want "
                            f"{hostile - args.max_flows}..{hostile} packets of flows beyond --max-flows")
            analyze_line = f"{'  with analyze':20} {'':>9} {'':>9} {a_rss / 1024:>12.1f} {a_anon / 1024:>9.1f} {a_secs:>8.1f}"
            if a_st != 0:
                mine.append(f"analyze: exit status {a_st}")
            for w in SCENARIOS[name][1]:
                if not any(w in l for l in a_err.splitlines() if l.startswith("rdmatel")):
                    mine.append(f"analyze: no '{w}' warning on stderr")
            if not asan and a_st != "timeout" and a_anon > analyze_base[1] + budget_kb:
                mine.append(f"analyze: anonymous memory {a_anon >> 10} MiB > bound {(analyze_base[1] + budget_kb) >> 10} MiB")
        print(f"{name:20} {args.packets if SCENARIOS[name][0] else 0:>9} {size / 2**20:>9.1f} {rss / 1024:>12.1f} "
              f"{anon / 1024:>9.1f} {secs:>8.1f}  {'ok' if not mine else 'FAIL'}", flush=True)
        if analyze_line:
            print(analyze_line, flush=True)
        for m in mine[:12]:
            print(f"    {m}")
        if len(mine) > 12:
            print(f"    ... {len(mine) - 12} more")
        results.append({"scenario": name, "packets": args.packets, "file_bytes": size, "max_rss_kb": rss,
                        "peak_anon_kb": anon, "seconds": round(secs, 2), "generate_seconds": round(gen_s, 2),
                        "status": st, "problems": mine, "stderr": stderr_lines[:10]})
        problems += [f"{name}: {m}" for m in mine]
        if not args.keep:
            for p in (cap, out, os.path.join(work, f"{name}.analyze.txt")):
                if os.path.exists(p):
                    os.unlink(p)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"baseline": {"max_rss_kb": base_rss, "peak_anon_kb": base_anon}, "budget_kb": budget_kb,
                       "results": results}, f, indent=1)
    if not args.keep:
        for p in (base_cap, base_out):
            if os.path.exists(p):
                os.unlink(p)
        os.rmdir(work)
    if problems:
        print(f"FAILED: {len(problems)} problems")
        return 1
    print("OK: hostile captures")
    return 0


if __name__ == "__main__":
    sys.exit(main())
