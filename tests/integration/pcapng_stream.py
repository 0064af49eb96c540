# SPDX-License-Identifier: GPL-2.0-or-later
"""Reads the blocks of a pcapng file (little-endian, as the generator writes them) and writes
them again as a stream: repeated with shifted timestamps (a long synthetic stream for soak
tests), or as single Ethernet frames (to replay on an interface). Independent of rdmatel's
readers: only the pcapng block layout."""

import struct

SHB, IDB, EPB = 0x0A0D0D0A, 1, 6


def blocks(data):
    """(type, body bytes) of every block."""
    off = 0
    while off + 12 <= len(data):
        btype, blen = struct.unpack_from("<II", data, off)
        if blen < 12 or off + blen > len(data):
            raise ValueError(f"bad pcapng block at byte {off}")
        yield btype, data[off + 8 : off + blen - 4]
        off += blen


def block(btype, body):
    pad = (-len(body)) % 4
    n = 12 + len(body) + pad
    return struct.pack("<II", btype, n) + body + b"\0" * pad + struct.pack("<I", n)


def tsresol(idb_body):
    """Units per second of an IDB (option if_tsresol, default microseconds)."""
    off = 8
    while off + 4 <= len(idb_body):
        code, length = struct.unpack_from("<HH", idb_body, off)
        if code == 0:
            break
        if code == 9 and length >= 1:
            v = idb_body[off + 4]
            return 2 ** (v & 0x7F) if v & 0x80 else 10 ** v
        off += 4 + length + ((-length) % 4)
    return 10**6


class Capture:
    """The header blocks and packets of a pcapng file; timestamps in ns."""

    def __init__(self, path):
        with open(path, "rb") as f:
            data = f.read()
        self.header = b""
        self.resol = []
        self.packets = []  # (interface, ts_ns, wire_len, frame bytes, options bytes)
        for btype, body in blocks(data):
            if btype in (SHB, IDB):
                self.header += block(btype, body)
                if btype == IDB:
                    self.resol.append(tsresol(body))
            elif btype == EPB:
                iface, hi, lo, caplen, wire = struct.unpack_from("<IIIII", body, 0)
                units = (hi << 32) | lo
                ts = units * 10**9 // self.resol[iface]
                frame = body[20 : 20 + caplen]
                self.packets.append((iface, ts, wire, frame))
        self.first_ns = min(p[1] for p in self.packets)
        self.last_ns = max(p[1] for p in self.packets)

    def epb(self, iface, ts_ns, wire, frame):
        units = ts_ns * self.resol[iface] // 10**9
        body = struct.pack("<IIIII", iface, units >> 32, units & 0xFFFFFFFF, len(frame), wire) + frame
        return block(EPB, body)

    def repetition(self, shift_ns):
        """Every packet once more, `shift_ns` later, as EPB bytes."""
        return b"".join(self.epb(i, ts + shift_ns, w, fr) for i, ts, w, fr in self.packets)


def roce_layout(frame):
    """(offset of the IP header, IP version, offset of the BTH) of an Ethernet RoCEv2 frame
    (up to two VLAN tags), or None."""
    off = 12
    if len(frame) < 14:
        return None
    etype = struct.unpack_from(">H", frame, off)[0]
    while etype in (0x8100, 0x88A8) and off + 6 <= len(frame):
        off += 4
        etype = struct.unpack_from(">H", frame, off)[0]
    ip = off + 2
    if etype == 0x0800 and len(frame) >= ip + 20:
        udp = ip + (frame[ip] & 0x0F) * 4
        proto, version = frame[ip + 9], 4
    elif etype == 0x86DD and len(frame) >= ip + 40:
        udp, proto, version = ip + 40, frame[ip + 6], 6
    else:
        return None
    if proto != 17 or len(frame) < udp + 8 + 12 or struct.unpack_from(">H", frame, udp + 2)[0] != 4791:
        return None
    return ip, version, udp + 8


def shift_psn(frame, delta):
    """The frame with its BTH PSN moved by `delta` (mod 2^24): a repetition of a capture whose
    I/Os and messages are new ones to the engine (their keys contain the command PSN)."""
    lay = roce_layout(frame)
    if not lay or delta == 0:
        return frame
    b = bytearray(frame)
    psn_at = lay[2] + 9
    psn = int.from_bytes(b[psn_at : psn_at + 3], "big")
    b[psn_at : psn_at + 3] = ((psn + delta) & 0xFFFFFF).to_bytes(3, "big")
    return bytes(b)


def repetition_bytes(cap, k, shift_ns, psn_step=7919):
    """Repetition number k of the capture: stamps k*shift_ns later, PSNs k*psn_step further."""
    return b"".join(cap.epb(i, ts + k * shift_ns, w, shift_psn(fr, k * psn_step)) for i, ts, w, fr in cap.packets)


def tail_bytes(cap, after_ns):
    """One non-RoCE frame per interface (local experimental ethertype 0x88B5), `after_ns`
    after the last packet: time passes at every point, so every record of the capture before
    it is final (timeouts included) while the stream stays open."""
    frame = bytes(12) + b"\x88\xb5" + bytes(46)
    return b"".join(cap.epb(i, cap.last_ns + after_ns, len(frame), frame) for i in range(len(cap.resol)))


def split_by_interface(cap):
    """One pcapng per interface (its section header and IDB, its packets renumbered to
    interface 0): what an agent at that point alone would capture. The SHB is the first block
    of the header; IDBs follow in order."""
    shb_len = struct.unpack_from("<I", cap.header, 4)[0]
    shb, rest = cap.header[:shb_len], cap.header[shb_len:]
    idbs = []
    off = 0
    while off < len(rest):
        n = struct.unpack_from("<I", rest, off + 4)[0]
        idbs.append(rest[off : off + n])
        off += n
    out = []
    for i, idb in enumerate(idbs):
        body = b"".join(cap.epb(i, ts, w, fr)[:8] + struct.pack("<I", 0) + cap.epb(i, ts, w, fr)[12:]
                        for iface, ts, w, fr in cap.packets if iface == i)
        out.append(shb + idb + body)
    return out


def concatenate_points(src, out):
    """The capture's points one after the other, as mergecap -a joins per-point files: writes `out`
    and returns, for each frame number of `src`, its number in `out`."""
    cap = Capture(src)
    order = sorted(range(len(cap.packets)), key=lambda n: cap.packets[n][0])  # stable: by interface
    with open(out, "wb") as f:
        f.write(cap.header)
        for n in order:
            f.write(cap.epb(*cap.packets[n]))
    return {old + 1: new + 1 for new, old in enumerate(order)}
