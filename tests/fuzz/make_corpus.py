#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Seed corpora for the fuzz targets, cut from real and sample captures.

    tests/fuzz/make_corpus.py [--out DIR] [CAPTURE ...]

Without CAPTURE arguments it reads samples/*.pcapng and the real captures in
/work/shared/captures/*.pcapng.gz (or ../shared/captures beside the repository; .gz files are
decompressed in memory). It writes one folder per target under DIR (default build/fuzz-corpus):

  frame_decoder/   single frames, one per (link type, opcode, size, encapsulation) kind, plus the
                   same frames re-framed as raw IP, Linux SLL/SLL2 and BSD null
  nvme_capsule/    SEND payloads that carry NVMe SQEs (64 bytes) and CQEs (16 bytes)
  capture_reader/  small whole files: slices of each capture (its own bytes, block for block) and
                   re-encodings (pcap us/ns, both byte orders; big-endian pcapng; two sections;
                   simple packet blocks; if_tsresol/if_tsoffset)
  engine/          frame streams in fuzz_engine's format (tests/fuzz/fuzz_entries.h): windows of
                   consecutive packets and the NVMe capsules of a whole capture, with every
                   configuration flag

File names are content hashes, so reruns add nothing twice. Python standard library only.
"""
import argparse
import glob
import gzip
import hashlib
import os
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))

# ---------------------------------------------------------------- reading


class Capture:
    def __init__(self, name):
        self.name = name
        self.ifaces = []    # (linktype, name)
        self.packets = []   # (iface, ts_ns, data, orig_len)
        self.raw = b""
        self.header_blocks = b""   # SHB + IDBs (+ other leading blocks), pcapng only
        self.packet_blocks = []    # raw bytes of each packet block, in file order


def read_pcapng(name, raw):
    cap = Capture(name)
    cap.raw = raw
    pos, end = 0, len(raw)
    bo = "<"
    resol = []
    offsets = []
    base = 0
    header_done = False
    while pos + 12 <= end:
        btype = struct.unpack_from("<I", raw, pos)[0]
        if btype == 0x0A0D0D0A:
            bo = "<" if struct.unpack_from("<I", raw, pos + 8)[0] == 0x1A2B3C4D else ">"
            base = len(cap.ifaces)
        else:
            btype = struct.unpack_from(bo + "I", raw, pos)[0]
        blen = struct.unpack_from(bo + "I", raw, pos + 4)[0]
        if blen < 12 or pos + blen > end:
            break
        body = raw[pos + 8: pos + blen - 4]
        block = raw[pos: pos + blen]
        if btype == 1:
            linktype, _, _snap = struct.unpack_from(bo + "HHI", body, 0)
            ifname, tsresol, tsoff = "", 6, 0
            o = 8
            while o + 4 <= len(body):
                code, olen = struct.unpack_from(bo + "HH", body, o)
                if code == 0:
                    break
                val = body[o + 4: o + 4 + olen]
                if code == 2:
                    ifname = val.split(b"\0")[0].decode("utf-8", "replace")
                elif code == 9 and olen >= 1:
                    tsresol = val[0]
                elif code == 14 and olen >= 8:
                    tsoff = struct.unpack_from(bo + "q", val, 0)[0]
                o += 4 + ((olen + 3) & ~3)
            cap.ifaces.append((linktype, ifname))
            resol.append(tsresol)
            offsets.append(tsoff)
        elif btype in (6, 2, 3):
            header_done = True
            if btype == 3:
                orig = struct.unpack_from(bo + "I", body, 0)[0]
                data = body[4: 4 + orig]
                iface, ts = base, 0
            else:
                if btype == 6:
                    iface, hi, lo, caplen, orig = struct.unpack_from(bo + "IIIII", body, 0)
                else:
                    iface, _drops, hi, lo, caplen, orig = struct.unpack_from(bo + "HHIIII", body, 0)
                iface += base
                data = body[20: 20 + caplen]
                ts = hi << 32 | lo
            if iface < len(resol):
                r = resol[iface]
                if r & 0x80:
                    ts_ns = (ts * 10**9) >> (r & 0x7F)
                else:
                    ts_ns = ts * 10**9 // 10**r if r <= 9 else ts // 10**(r - 9)
                ts_ns += offsets[iface] * 10**9
                cap.packets.append((iface, ts_ns, data, orig))
                cap.packet_blocks.append(block)
        if not header_done:
            cap.header_blocks += block
        pos += blen
    return cap


def read_pcap(name, raw):
    cap = Capture(name)
    cap.raw = raw
    magic = struct.unpack_from("<I", raw, 0)[0]
    bo = "<" if magic in (0xA1B2C3D4, 0xA1B23C4D) else ">"
    magic = struct.unpack_from(bo + "I", raw, 0)[0]
    ns = magic == 0xA1B23C4D
    linktype = struct.unpack_from(bo + "I", raw, 20)[0] & 0x03FFFFFF
    cap.ifaces.append((linktype, ""))
    pos = 24
    while pos + 16 <= len(raw):
        sec, frac, incl, orig = struct.unpack_from(bo + "IIII", raw, pos)
        if pos + 16 + incl > len(raw):
            break
        cap.packets.append((0, sec * 10**9 + frac * (1 if ns else 1000), raw[pos + 16: pos + 16 + incl], orig))
        pos += 16 + incl
    return cap


def read_capture(path):
    with open(path, "rb") as f:
        raw = f.read()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    name = os.path.basename(path).replace(".gz", "")
    if raw[:4] == b"\x0a\x0d\x0d\x0a":
        return read_pcapng(name, raw)
    if len(raw) >= 24 and struct.unpack_from("<I", raw, 0)[0] in (0xA1B2C3D4, 0xA1B23C4D, 0xD4C3B2A1, 0x4D3CB2A1):
        return read_pcap(name, raw)
    raise ValueError(f"{path}: not a pcap or pcapng file")

# ---------------------------------------------------------------- minimal RoCEv2 parsing


def parse_roce(linktype, frame):
    """Returns (ip_offset, l2_vlans, ipv6, bth_offset, opcode) or None. Ethernet/raw IP only."""
    off, vlans = 0, 0
    if linktype == 1:
        if len(frame) < 14:
            return None
        etype = struct.unpack_from(">H", frame, 12)[0]
        off = 14
        while etype in (0x8100, 0x88A8, 0x9100) and len(frame) >= off + 4:
            etype = struct.unpack_from(">H", frame, off + 2)[0]
            off += 4
            vlans += 1
    elif linktype in (101, 228, 229):
        if not frame:
            return None
        etype = 0x86DD if frame[0] >> 4 == 6 else 0x0800
    else:
        return None
    ip = off
    if etype == 0x0800 and len(frame) >= off + 20:
        ihl = (frame[off] & 0x0F) * 4
        proto = frame[off + 9]
        off += ihl
        v6 = False
    elif etype == 0x86DD and len(frame) >= off + 40:
        proto = frame[off + 6]
        off += 40
        v6 = True
    else:
        return None
    if proto != 17 or len(frame) < off + 8 + 12:
        return None
    if struct.unpack_from(">H", frame, off + 2)[0] != 4791:
        return None
    return ip, vlans, v6, off + 8, frame[off + 8]


EXT_LEN = {}  # opcode -> extension header bytes (RC subset the samples use)
for op, n in {0x00: 0, 0x01: 0, 0x02: 0, 0x03: 4, 0x04: 0, 0x05: 4, 0x06: 16, 0x07: 0, 0x08: 0, 0x09: 4,
              0x0A: 16, 0x0B: 20, 0x0C: 16, 0x0D: 4, 0x0E: 0, 0x0F: 4, 0x10: 4, 0x11: 4, 0x16: 4, 0x17: 4}.items():
    EXT_LEN[op] = n

# ---------------------------------------------------------------- writing


def pcapng_block(bo, btype, body):
    body = body + b"\0" * (-len(body) % 4)
    n = 12 + len(body)
    return struct.pack(bo + "II", btype, n) + body + struct.pack(bo + "I", n)


def pcapng_option(bo, code, value):
    return struct.pack(bo + "HH", code, len(value)) + value + b"\0" * (-len(value) % 4)


def write_pcapng(ifaces, packets, bo="<", tsresol=9, tsoffset=0, sections=1, spb=False):
    out = b""
    per_section = max(1, (len(packets) + sections - 1) // sections)
    for s in range(sections):
        chunk = packets[s * per_section:(s + 1) * per_section]
        if not chunk and s:
            break
        out += pcapng_block(bo, 0x0A0D0D0A, struct.pack(bo + "IHHq", 0x1A2B3C4D, 1, 0, -1))
        for linktype, name in ifaces:
            opts = b""
            if name:
                opts += pcapng_option(bo, 2, name.encode())
            opts += pcapng_option(bo, 9, bytes([tsresol]))
            if tsoffset:
                opts += pcapng_option(bo, 14, struct.pack(bo + "q", tsoffset))
            opts += struct.pack(bo + "HH", 0, 0)
            out += pcapng_block(bo, 1, struct.pack(bo + "HHI", linktype, 0, 0) + opts)
        for iface, ts_ns, data, orig in chunk:
            if spb:
                out += pcapng_block(bo, 3, struct.pack(bo + "I", len(data)) + data)
                continue
            t = (ts_ns - tsoffset * 10**9)
            t = t * 10**tsresol // 10**9 if tsresol < 0x80 else (t << (tsresol & 0x7F)) // 10**9
            t &= (1 << 64) - 1
            out += pcapng_block(bo, 6, struct.pack(bo + "IIIII", iface, t >> 32, t & 0xFFFFFFFF, len(data), orig) + data)
    return out


def write_pcap(linktype, packets, ns=True, bo="<", snaplen=262144):
    magic = 0xA1B23C4D if ns else 0xA1B2C3D4
    out = struct.pack(bo + "IHHiIII", magic, 2, 4, 0, 0, snaplen, linktype)
    for _iface, ts_ns, data, orig in packets:
        sec, rem = divmod(ts_ns, 10**9)
        out += struct.pack(bo + "IIII", sec & 0xFFFFFFFF, rem if ns else rem // 1000, len(data), orig) + data
    return out

# ---------------------------------------------------------------- corpora


class Corpus:
    def __init__(self, root):
        self.root = root
        self.counts = {}

    def add(self, target, data):
        d = os.path.join(self.root, target)
        os.makedirs(d, exist_ok=True)
        path = os.path.join(d, hashlib.sha1(data).hexdigest())
        if not os.path.exists(path):
            with open(path, "wb") as f:
                f.write(data)
            self.counts[target] = self.counts.get(target, 0) + 1


def reframe(frame, linktype):
    """The same packet as raw IP, SLL, SLL2 and BSD null frames (Ethernet input only)."""
    r = parse_roce(linktype, frame) if linktype == 1 else None
    if not r:
        return []
    ip = frame[r[0]:]
    proto = 0x86DD if r[2] else 0x0800
    sll = struct.pack(">HHH8sH", 0, 1, 6, b"\x02\0\0\0\0\x01\0\0", proto) + ip
    sll2 = struct.pack(">HHIHBB8s", proto, 0, 2, 1, 0, 6, b"\x02\0\0\0\0\x01\0\0") + ip
    null = struct.pack("<I", 24 if r[2] else 2) + ip
    return [ip, sll, sll2, null]


def decoder_corpus(corpus, cap, per_kind=3):
    seen = {}
    for iface, _ts, data, _orig in cap.packets:
        linktype = cap.ifaces[iface][0] if iface < len(cap.ifaces) else 1
        r = parse_roce(linktype, data)
        key = (linktype, r[4] if r else None, r[1] if r else 0, r[2] if r else None, min(len(data), 2048) // 128)
        if seen.get(key, 0) >= per_kind:
            continue
        seen[key] = seen.get(key, 0) + 1
        corpus.add("frame_decoder", data[:4096])
        for v in reframe(data[:4096], linktype) if seen[key] == 1 else []:
            corpus.add("frame_decoder", v)


def nvme_corpus(corpus, cap, per_kind=4):
    seen = {}
    for iface, _ts, data, _orig in cap.packets:
        linktype = cap.ifaces[iface][0] if iface < len(cap.ifaces) else 1
        r = parse_roce(linktype, data)
        if not r or r[4] not in (0x00, 0x04, 0x05, 0x17):
            continue
        start = r[3] + 12 + EXT_LEN.get(r[4], 0)
        payload = data[start:len(data) - 4] if len(data) - 4 > start else b""
        if len(payload) >= 64:
            p = payload[:64]
            key = (64, p[0], p[1], p[39])
        elif len(payload) >= 16:
            p = payload[:16]
            key = (16, p[15] >> 1 != 0)
        else:
            continue
        if seen.get(key, 0) >= per_kind:
            continue
        seen[key] = seen.get(key, 0) + 1
        corpus.add("nvme_capsule", p)


def reader_corpus(corpus, cap, max_bytes=65536):
    n = len(cap.packets)
    starts = sorted({0, n // 3, n // 2, (2 * n) // 3, max(0, n - 8)})
    if cap.header_blocks:
        for s in starts:
            for count in (4, 16):
                blocks = cap.packet_blocks[s:s + count]
                body = cap.header_blocks + b"".join(blocks)
                if len(body) <= max_bytes:
                    corpus.add("capture_reader", body)
    elif cap.raw[:4] != b"\x0a\x0d\x0d\x0a":
        corpus.add("capture_reader", cap.raw[:max_bytes])
    # Re-encodings of a few small packets (trimmed to 256 bytes with their wire length kept).
    pk = [(i, t, d[:256], max(o, len(d[:256]))) for i, t, d, o in cap.packets[:12]]
    if not pk:
        return
    linktype = cap.ifaces[0][0] if cap.ifaces else 1
    single = [(0, t, d, o) for _i, t, d, o in pk]
    corpus.add("capture_reader", write_pcap(linktype, single, ns=True, bo="<"))
    corpus.add("capture_reader", write_pcap(linktype, single, ns=False, bo=">"))
    corpus.add("capture_reader", write_pcapng(cap.ifaces, pk, bo=">", tsresol=6, tsoffset=3600))
    corpus.add("capture_reader", write_pcapng(cap.ifaces, pk, bo="<", tsresol=0x80 | 30, sections=2))
    corpus.add("capture_reader", write_pcapng(cap.ifaces[:1], single[:4], spb=True))


def trimmed(linktype, data):
    """The frame up to the end of its RoCEv2 headers, plus a SEND's first 64 payload bytes (an
    NVMe SQE or CQE): what the engine reads. The wire length keeps the rest accounted for."""
    r = parse_roce(linktype, data)
    if not r:
        return data[:128]
    end = r[3] + 12 + EXT_LEN.get(r[4], 28)
    if r[4] in (0x00, 0x04, 0x05, 0x17):
        end += 64
    return data[:end]


def engine_frames(cap, packets):
    """fuzz_engine frames: point, time step, captured length, wire extra, bytes."""
    out = b""
    prev = None
    for iface, ts, data, orig in packets:
        step = 0 if prev is None else ts - prev
        prev = ts
        neg = step < 0
        step = abs(step)
        for unit, scale in ((0, 1), (1, 10**3), (2, 10**6), (3, 86400 * 10**9)):
            if step // scale < 65536:
                break
        value = min(step // scale, 65535)
        point = iface % 3
        head = point | unit << 2 | (0x10 if neg else 0)
        d = trimmed(cap.ifaces[iface][0] if iface < len(cap.ifaces) else 1, data)
        extra = min(max(orig, len(data)) - len(d), 65535)
        out += struct.pack(">BHHH", head, value, len(d), extra) + d
    return out


ENGINE_CONFIGS = [0x00, 0x01, 0x03, 0x05, 0x09, 0x0B, 0x0D, 0x81, 0x02, 0x08]


def engine_corpus(corpus, cap, window=32, windows=24):
    linktype = cap.ifaces[0][0] if cap.ifaces else 1
    link_bits = {1: 0, 113: 1, 276: 2, 101: 3, 228: 3, 229: 3, 0: 4}.get(linktype, 5) << 4
    n = len(cap.packets)
    if not n:
        return
    step = max(1, (n - window) // windows) if n > window else n
    for k, s in enumerate(range(0, max(1, n - window + 1), step)):
        cfg = ENGINE_CONFIGS[k % len(ENGINE_CONFIGS)] | link_bits
        corpus.add("engine", bytes([cfg]) + engine_frames(cap, cap.packets[s:s + window]))
    # The NVMe capsules (SENDs) and READ REQUESTs of the whole capture: commands and completions
    # of many I/Os in little space.
    sends = []
    for p in cap.packets:
        r = parse_roce(linktype, p[2])
        if r and r[4] in (0x00, 0x04, 0x05, 0x06, 0x0A, 0x0C, 0x17):
            sends.append(p)
    for cfg in (0x00, 0x01):
        corpus.add("engine", bytes([cfg | link_bits]) + engine_frames(cap, sends[:120]))


def default_inputs():
    inputs = sorted(glob.glob(os.path.join(REPO, "samples", "*.pcapng")))
    for d in (os.path.join(REPO, "..", "shared", "captures"), "/work/shared/captures"):
        found = sorted(glob.glob(os.path.join(d, "*.pcapng.gz")) + glob.glob(os.path.join(d, "*.pcapng")))
        if found:
            inputs += found
            break
    return inputs


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=os.path.join(REPO, "build", "fuzz-corpus"))
    ap.add_argument("captures", nargs="*")
    args = ap.parse_args()
    inputs = args.captures or default_inputs()
    if not inputs:
        print("make_corpus: no captures found (samples/*.pcapng, shared/captures)", file=sys.stderr)
        return 1
    corpus = Corpus(args.out)
    for path in inputs:
        try:
            cap = read_capture(path)
        except (OSError, ValueError, struct.error) as e:
            print(f"make_corpus: skipping {path}: {e}", file=sys.stderr)
            continue
        decoder_corpus(corpus, cap)
        nvme_corpus(corpus, cap)
        reader_corpus(corpus, cap)
        engine_corpus(corpus, cap)
    for t in ("frame_decoder", "nvme_capsule", "capture_reader", "engine"):
        d = os.path.join(args.out, t)
        total = len(os.listdir(d)) if os.path.isdir(d) else 0
        print(f"{t}: {corpus.counts.get(t, 0)} new, {total} in {d}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
