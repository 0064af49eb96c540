# SPDX-License-Identifier: GPL-2.0-or-later
"""Rewrites pcapng files the way real captures differ from tidy ones, for tests: one capture
point's clock shifted, packets in another file order (jittered, blocks reversed), several points
merged by stamp as mergecap would. Written from the pcapng specification (draft-ietf-opsawg-
pcapng), independent of the engine's reader. Only little-endian files with EPBs are handled
(what rdmatel-synth and dumpcap write)."""

import random
import struct

SHB, IDB, EPB = 0x0A0D0D0A, 0x00000001, 0x00000006


class Block:
    def __init__(self, btype, body):
        self.type = btype
        self.body = body  # bytes between the length fields

    def encode(self):
        n = 12 + len(self.body)
        return struct.pack("<II", self.type, n) + self.body + struct.pack("<I", n)


def interface_block(name="", tsoffset_s=None, link=1):
    """An interface description block: its link type, stamps in nanoseconds (if_tsresol 9), and
    if_name and if_tsoffset when given."""
    opts = b""
    if name:
        n = name.encode()
        opts += struct.pack("<HH", 2, len(n)) + n + b"\0" * (-len(n) % 4)
    opts += struct.pack("<HHB3x", 9, 1, 9)
    if tsoffset_s is not None:
        opts += struct.pack("<HHq", 14, 8, tsoffset_s)
    return Block(IDB, struct.pack("<HHI", link, 0, 0) + opts + struct.pack("<HH", 0, 0))


class Capture:
    """A single-section pcapng: its header blocks, its interfaces and its packets in file order."""

    def __init__(self, path):
        data = open(path, "rb").read()
        self.head = []  # SHB, IDBs and other non-packet blocks before the first packet
        self.packets = []  # EPB blocks
        self.if_names = []
        self.if_tsresol = []
        off = 0
        while off + 12 <= len(data):
            btype, blen = struct.unpack_from("<II", data, off)
            body = data[off + 8: off + blen - 4]
            b = Block(btype, body)
            if btype == EPB:
                self.packets.append(b)
            else:
                if self.packets:
                    raise ValueError("blocks after the first packet are not supported")
                self.head.append(b)
                if btype == IDB:
                    self._read_idb(body)
            off += blen

    def _read_idb(self, body):
        name, resol = "", 6
        o = 8
        while o + 4 <= len(body):
            code, olen = struct.unpack_from("<HH", body, o)
            if code == 0:
                break
            v = body[o + 4: o + 4 + olen]
            if code == 2:
                name = v.split(b"\0")[0].decode()
            if code == 9:
                resol = v[0]
            o += 4 + ((olen + 3) & ~3)
        self.if_names.append(name)
        self.if_tsresol.append(resol)

    # ---- packet fields ----
    @staticmethod
    def interface(pkt):
        return struct.unpack_from("<I", pkt.body, 0)[0]

    @staticmethod
    def set_interface(pkt, iface):
        pkt.body = struct.pack("<I", iface) + pkt.body[4:]

    def stamp_ns(self, pkt):
        hi, lo = struct.unpack_from("<II", pkt.body, 4)
        units = (hi << 32) | lo
        return self._to_ns(units, self.interface(pkt))

    def _to_ns(self, units, iface):
        r = self.if_tsresol[iface]
        if r & 0x80:
            raise ValueError("binary time resolution not supported")
        return units * 10 ** (9 - r) if r <= 9 else units // 10 ** (r - 9)

    def _from_ns(self, ns, iface):
        r = self.if_tsresol[iface]
        return ns // 10 ** (9 - r) if r <= 9 else ns * 10 ** (r - 9)

    def set_stamp_ns(self, pkt, ns):
        units = self._from_ns(ns, self.interface(pkt))
        body = bytearray(pkt.body)
        struct.pack_into("<II", body, 4, units >> 32, units & 0xFFFFFFFF)
        pkt.body = bytes(body)

    # ---- edits ----
    def replace_interfaces(self, *idbs):
        """The interface description blocks become `idbs` (interface_block()), in this order."""
        self.head = [b for b in self.head if b.type != IDB] + list(idbs)
        self.if_names, self.if_tsresol = [], []
        for b in idbs:
            self._read_idb(b.body)

    def set_link(self, link):
        """Every interface's link type becomes `link` (a LINKTYPE_ value); its options stay."""
        for b in self.head:
            if b.type == IDB:
                b.body = struct.pack("<HH", link, 0) + b.body[4:]

    def set_resolution(self, resol):
        """Every interface stamps in units of 10^-resol s (6: microseconds, as dumpcap and classic
        pcap do): each stamp is cut down to the unit, the IDBs' if_tsresol rewritten."""
        stamps = [self.stamp_ns(p) for p in self.packets]
        for b in self.head:
            if b.type != IDB:
                continue
            body, o, found = bytearray(b.body), 8, False
            while o + 4 <= len(body):
                code, olen = struct.unpack_from("<HH", body, o)
                if code == 0:
                    break
                if code == 9:
                    body[o + 4], found = resol, True
                o += 4 + ((olen + 3) & ~3)
            if not found:
                raise ValueError("an interface without if_tsresol")
            b.body = bytes(body)
        self.if_tsresol = [resol] * len(self.if_tsresol)
        for p, ns in zip(self.packets, stamps):
            self.set_stamp_ns(p, ns)

    def shift_point(self, name, ns):
        """Adds `ns` to every stamp of interface `name` (an unsynchronised capture clock)."""
        iface = self.if_names.index(name)
        for p in self.packets:
            if self.interface(p) == iface:
                self.set_stamp_ns(p, self.stamp_ns(p) + ns)

    def sort_by_stamp(self):
        """File order = stamp order, ties in file order (as mergecap merges per-point streams)."""
        self.packets = [p for _, _, p in sorted((self.stamp_ns(p), i, p) for i, p in enumerate(self.packets))]

    def jitter_order(self, window_ns, seed):
        """Moves every packet up to `window_ns` of stamp away from its place in the file: the file
        order within each point changes, no stamp does."""
        rnd = random.Random(seed)
        keyed = [(self.stamp_ns(p) + rnd.uniform(-window_ns, window_ns), i, p) for i, p in enumerate(self.packets)]
        self.packets = [p for _, _, p in sorted(keyed)]

    def reverse_blocks(self, window_ns):
        """Reverses the file order within consecutive runs spanning at most `window_ns` of stamps."""
        out, run, start = [], [], None
        for p in self.packets:
            t = self.stamp_ns(p)
            if run and abs(t - start) > window_ns:
                out += reversed(run)
                run = []
            if not run:
                start = t
            run.append(p)
        out += reversed(run)
        self.packets = out

    def write(self, path, packets=None):
        with open(path, "wb") as f:
            for b in self.head:
                f.write(b.encode())
            for p in self.packets if packets is None else packets:
                f.write(p.encode())

    def split(self, prefix, n):
        """Writes the packets as files of `n` packets each with the same header (as dumpcap ring
        buffers do); returns their paths."""
        paths = []
        for k in range(0, len(self.packets), n):
            path = f"{prefix}_{k // n:05d}.pcapng"
            self.write(path, self.packets[k: k + n])
            paths.append(path)
        return paths
