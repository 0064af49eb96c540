#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Independent check of an rdmatel-synth capture against its .truth.json.

Decodes the capture with tshark (and reads raw bytes with its own small pcapng reader),
never with the generator's code, and verifies:
  * every I/O: cmd_frame / rsp_frame exist at its compute interface and carry the expected
    opcode, QPN, PSN, CID (and CQE status / r_key, as far as the snap length kept them),
    t1..t7 are the stamps of the first matching copies (in each interface's stamp order) at
    its compute/storage interfaces, metrics are the right differences; its compute/storage
    points are the two leaf host ports, the same for every I/O of a host (of a storage
    server), consistent with the point roles and with causality once each point's clock
    offset is taken off (a command reaches the compute point before the storage point, a
    completion the storage point before the compute point);
  * every message and flow record, recomputed from the decoded packets in each interface's
    stamp order (PSN tracking per interface, flow and PSN space, NAK matching, byte counts
    from the wire lengths);
  * ICRC of every untruncated RoCE packet, IPv4 header checksums, IPv6 UDP checksums,
    interface names, packet and NAK totals; every packet's transport headers captured whole
    and caplen = min(length, interface snap length);
  * the host port and uplink port of one leaf saw the same packets (no loss in a switch);
  * points[].clock_offset_ns as the command line gave them; with --order time, the file is
    the mergecap-like merge of the interfaces by stamp;
  * IP TTL / hop limit: 64 everywhere, or with "routed" 64 minus the switches left before
    the point (the table in README.md), per source address and point.
Usage: check_truth.py CAPTURE.pcapng [more.pcapng ...]   (exit 1 on any mismatch)
"""
import json
import re
import struct
import subprocess
import sys
import zlib
from collections import Counter, defaultdict
from decimal import Decimal

FIELDS = [
    "frame.number", "frame.interface_id", "frame.interface_name", "frame.time_epoch",
    "frame.len", "frame.cap_len", "ip.src", "ipv6.src", "ip.dst", "ipv6.dst", "udp.length",
    "infiniband.bth.opcode", "infiniband.bth.destqp", "infiniband.bth.psn",
    "infiniband.bth.padcnt", "infiniband.aeth.syndrome", "infiniband.reth.r_key",
    "infiniband.reth.dmalen", "ip.ttl", "ipv6.hlim",
]

SEND_OPS = {0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x16, 0x17}
WRITE_OPS = {0x06, 0x07, 0x08, 0x09, 0x0A, 0x0B}
RESP_OPS = {0x0D, 0x0E, 0x0F, 0x10}
FIRST_OPS = {0x00, 0x04, 0x05, 0x17, 0x06, 0x0A, 0x0B, 0x0D, 0x10}
MASK = 0xFFFFFF
# Switch position of each point name (README "Points"): leaf A host port, leaf A uplink,
# spine, leaf B uplink, leaf B host port; and the switches a packet going from side 0 to
# side 1 has left when it is recorded there (routed TTL = 64 - that; mirrored the other way).
POS = {"leafA-gpu": 0, "leafA-up": 1, "spine1": 2, "leafB-up": 3, "leafB-stor": 4, "leafB-gpu": 4}
LEFT = [0, 1, 1, 2, 3]
FLAGS = {"--ipv6", "--psn-wrap", "--no-connect", "--routed", "--cross", "--help", "-h"}
TIME_ORDER_PRESETS = {"nvme-midstream", "mixed"}  # the others default to dumpcap blocks


def ext_len(o):
    n = 0
    if o in (0x06, 0x0A, 0x0B, 0x0C):
        n += 16  # RETH
    if o in (0x03, 0x05, 0x09, 0x0B, 0x16, 0x17, 0x0D, 0x0F, 0x10, 0x11):
        n += 4  # ImmDt / IETH / AETH
    if o == 0x64:
        n += 8  # DETH
    return n


def newer(a, b):
    d = (a - b) & MASK
    return 1 <= d < (1 << 23)


def read_pcapng(path):
    """Enhanced packet blocks as (interface, stamp, bytes, wire length), and the snap
    length of every interface description block."""
    data = open(path, "rb").read()
    off, out, snaps = 0, [], []
    while off < len(data):
        bt, bl = struct.unpack_from("<II", data, off)
        if bt == 6:
            iid, th, tl, cl, ol = struct.unpack_from("<IIIII", data, off + 8)
            out.append((iid, (th << 32) | tl, data[off + 28:off + 28 + cl], ol))
        elif bt == 1:
            snaps.append(struct.unpack_from("<I", data, off + 12)[0])
        off += bl
    return out, snaps


def command_options(cmd):
    """(option, value) pairs of the generator command line recorded in the truth."""
    toks, out, i = cmd.split()[1:], [], 0
    while i < len(toks):
        t = toks[i]
        if t.startswith("--") and "=" in t:
            out.append(tuple(t.split("=", 1)))
        elif t in FLAGS:
            out.append((t, None))
        else:
            out.append((t, toks[i + 1] if i + 1 < len(toks) else None))
            i += 1
        i += 1
    return out


def header_len(pkt, opcode):
    o, et = l3_offset(pkt)
    o += (pkt[o] & 15) * 4 if et == 0x0800 else 40
    return o + 8 + 12 + ext_len(opcode)


def l3_offset(pkt):
    o = 12
    et = struct.unpack_from(">H", pkt, o)[0]
    o += 2
    while et == 0x8100:
        et = struct.unpack_from(">H", pkt, o + 2)[0]
        o += 4
    return o, et


def csum(b):
    if len(b) % 2:
        b += b"\0"
    s = sum(struct.unpack(">%dH" % (len(b) // 2), b))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return s


def check_wire(pkt, err, fno):
    """ICRC (rxe / IBA A17 masking), IPv4 header checksum, IPv6 UDP checksum."""
    o, et = l3_offset(pkt)
    if et == 0x0800:
        ihl = (pkt[o] & 15) * 4
        if csum(pkt[o:o + ihl]) != 0xFFFF:
            err("frame %d: bad IPv4 header checksum" % fno)
        ip = bytearray(pkt[o:o + ihl])
        ip[1] = 0xFF
        ip[8] = 0xFF
        ip[10:12] = b"\xff\xff"
        u = o + ihl
    elif et == 0x86DD:
        ip = bytearray(pkt[o:o + 40])
        ip[0] |= 0x0F
        ip[1:4] = b"\xff\xff\xff"
        ip[7] = 0xFF
        u = o + 40
        ulen = struct.unpack_from(">H", pkt, u + 4)[0]
        pseudo = pkt[o + 8:o + 40] + struct.pack(">IxxxB", ulen, 17)
        if struct.unpack_from(">H", pkt, u + 6)[0] == 0 or csum(pseudo + pkt[u:u + ulen]) != 0xFFFF:
            err("frame %d: bad IPv6 UDP checksum" % fno)
    else:
        return
    udp = bytearray(pkt[u:u + 8])
    udp[6:8] = b"\xff\xff"
    bth = bytearray(pkt[u + 8:u + 20])
    bth[4] = 0xFF
    c = zlib.crc32(b"\xff" * 8 + bytes(ip) + bytes(udp) + bytes(bth) + pkt[u + 20:-4])
    if struct.pack("<I", c) != pkt[-4:]:
        err("frame %d: bad ICRC" % fno)


def payload(pkt, opcode):
    o, et = l3_offset(pkt)
    o += (pkt[o] & 15) * 4 if et == 0x0800 else 40
    return pkt[o + 8 + 12 + ext_len(opcode):]


def run_tshark(path):
    cmd = ["tshark", "-r", path, "-T", "fields", "-E", "separator=\t", "-E", "occurrence=f"]
    for f in FIELDS:
        cmd += ["-e", f]
    res = subprocess.run(cmd, capture_output=True, text=True, check=True)
    rows = []
    for line in res.stdout.splitlines():
        v = dict(zip(FIELDS, line.split("\t")))
        sec, _, frac = v["frame.time_epoch"].partition(".")
        r = {
            "no": int(v["frame.number"]),
            "if": int(v["frame.interface_id"]),
            "ifname": v["frame.interface_name"],
            "ts": int(sec) * 10**9 + int((frac + "000000000")[:9]),
            "len": int(v["frame.len"]),
            "caplen": int(v["frame.cap_len"]),
            "src": v["ip.src"] or v["ipv6.src"],
            "dst": v["ip.dst"] or v["ipv6.dst"],
        }
        if v["ip.ttl"] or v["ipv6.hlim"]:
            r["ttl"] = int(v["ip.ttl"] or v["ipv6.hlim"])
        if v["infiniband.bth.opcode"]:
            r["op"] = int(v["infiniband.bth.opcode"])
            r["qp"] = int(v["infiniband.bth.destqp"], 16)
            r["psn"] = int(v["infiniband.bth.psn"])
            r["pad"] = int(v["infiniband.bth.padcnt"] or 0)
            r["udplen"] = int(v["udp.length"])
            r["syn"] = int(v["infiniband.aeth.syndrome"]) if v["infiniband.aeth.syndrome"] else None
            r["rkey"] = int(v["infiniband.reth.r_key"], 16) if v["infiniband.reth.r_key"] else None
            r["dmalen"] = int(v["infiniband.reth.dmalen"]) if v["infiniband.reth.dmalen"] else None
            r["paylen"] = r["udplen"] - 8 - 12 - ext_len(r["op"]) - r["pad"] - 4
        rows.append(r)
    return rows


def us3(ns):
    return Decimal(ns) / Decimal(1000)


def check(path):
    errors = []

    def err(msg):
        if len(errors) < 40:
            print("  MISMATCH " + msg)
        errors.append(msg)

    truth_path = path[:-len(".pcapng")] + ".truth.json"
    text = open(truth_path).read()
    # Metrics are exact: ns differences / 1000 written with exactly three decimals.
    for m in re.finditer(r'"(\w+_us)":\s*(-?[0-9.eE+]+)', text):
        if not re.fullmatch(r"-?\d+\.\d{3}", m.group(2)):
            err("%s written as %s (want exactly 3 decimals)" % (m.group(1), m.group(2)))
            break
    truth = json.loads(text, parse_float=Decimal)
    rows = run_tshark(path)
    raw, snaps = read_pcapng(path)
    if len(rows) != len(raw) or len(rows) != truth["packets"]:
        err("packet count tshark=%d pcapng=%d truth=%d" % (len(rows), len(raw), truth["packets"]))
    pmtu = truth["pmtu"]
    points = truth["points"]
    names = {p["id"]: p["name"] for p in points}
    ifid = {p["name"]: p["id"] for p in points}
    for r in rows:
        if r["ifname"] != names.get(r["if"]):
            err("frame %d: interface name %r, truth says %r" % (r["no"], r["ifname"], names.get(r["if"])))
            break
    nwire = 0
    for i, (iid, ts, data, ol) in enumerate(raw):
        if "op" in rows[i]:
            # Transport headers are never cut; payload is, at the interface's snap length.
            if len(data) != min(ol, snaps[iid]) or len(data) < header_len(data, rows[i]["op"]):
                err("frame %d: %d of %d bytes captured, snap length %d" % (i + 1, len(data), ol, snaps[iid]))
        if len(data) == ol and "op" in rows[i]:
            check_wire(data, err, i + 1)
            nwire += 1

    # ---------------------------------------------------------------- capture clocks, file order
    opts = command_options(truth["command"])
    want_off = {v.split("=", 1)[0]: int(v.split("=", 1)[1]) for k, v in opts if k == "--clock-offset"}
    off = {}
    for p in points:
        off[p["id"]] = p.get("clock_offset_ns")
        if off[p["id"]] != want_off.get(p["name"], 0):
            err("point %s: clock_offset_ns %s, command line says %d" % (p["name"], off[p["id"]],
                                                                       want_off.get(p["name"], 0)))
            off[p["id"]] = want_off.get(p["name"], 0)
    order = ([v for k, v in opts if k == "--order"] or
             ["time" if truth["scenario"] in TIME_ORDER_PRESETS else "blocks"])[-1]
    if order == "time":
        # mergecap: the next frame is always the interface head with the smallest stamp
        # (clock offsets included), ties to the lower interface id.
        stamps = defaultdict(list)
        for iid, ts, _, _ in raw:
            stamps[iid].append(ts)
        head = defaultdict(int)
        for i, (iid, ts, _, _) in enumerate(raw):
            for b, lst in stamps.items():
                if b != iid and head[b] < len(lst) and (lst[head[b]], b) < (ts, iid):
                    err("frame %d: time order, but interface %d had a packet stamped %d before %d" %
                        (i + 1, b, lst[head[b]], ts))
                    break
            head[iid] += 1

    # ---------------------------------------------------------------- two ports of one leaf
    # Nothing is lost inside a switch: its host port and uplink port see the same packets.
    for x, y in (("leafA-gpu", "leafA-up"), ("leafB-stor", "leafB-up"), ("leafB-gpu", "leafB-up")):
        if x in ifid and y in ifid:
            seen = [Counter((r["src"], r["dst"], r.get("op"), r.get("qp"), r.get("psn"), r["len"])
                            for r in rows if r["if"] == ifid[n]) for n in (x, y)]
            if seen[0] != seen[1]:
                err("%s and %s (one switch) saw different packets: %d only at %s, %d only at %s" %
                    (x, y, sum((seen[0] - seen[1]).values()), x, sum((seen[1] - seen[0]).values()), y))

    # ---------------------------------------------------------------- TTL / hop limit
    ttl_seen = defaultdict(lambda: defaultdict(set))  # src -> iface -> {ttl}
    for r in rows:
        if "ttl" in r:
            ttl_seen[r["src"]][r["if"]].add(r["ttl"])
    src_side = {}
    for src, per_if in ttl_seen.items():
        if not truth.get("routed"):
            if any(v != {64} for v in per_if.values()):
                err("%s: TTL %s in an unrouted capture" % (src, dict(per_if)))
            continue
        for side in (0, 1):
            exp = {p["id"]: 64 - LEFT[POS[p["name"]] if side == 0 else 4 - POS[p["name"]]] for p in points}
            if all(v == {exp[i]} for i, v in per_if.items()):
                src_side[src] = side
        if src not in src_side:
            err("%s: TTLs %s fit neither direction" % (src, {i: sorted(v) for i, v in per_if.items()}))

    # ---------------------------------------------------------------- I/Os
    npt = len(points)
    ends = sorted(p["id"] for p in points if POS.get(p["name"]) in (0, 4))
    roles_seen = defaultdict(set)
    side_of_ip = {}  # endpoint -> its leaf's host-port interface (from the I/O roles)
    # Each interface's packets in stamp order (SPEC §3: results are those of the packets
    # sorted by their stamps). Python's sort is stable: equal stamps keep file order, which
    # within one interface is the generator's passage order.
    by_if = defaultdict(list)
    for r in rows:
        if "op" in r:
            by_if[r["if"]].append(r)
    pos = {}
    for iface in by_if:
        by_if[iface].sort(key=lambda r: r["ts"])
        for i, r in enumerate(by_if[iface]):
            pos[r["no"]] = i

    def first(iface, after, pred):
        """First packet at iface after row `after` (None: from the start), in stamp order."""
        lst = by_if.get(iface, [])
        for i in range(pos[after["no"]] + 1 if after else 0, len(lst)):
            if pred(lst[i]):
                return lst[i]
        return None

    nio = cut_sqe = cut_cqe = 0
    for io in truth["ios"]:
        nio += 1
        tag = "io cid=%d qpn=%d psn=%d" % (io["cid"], io["qpn"], io["cmd_psn"])
        if npt >= 2:
            # Per-I/O roles: the host-facing ports of the host's and the storage's leaves.
            if "compute_point" not in io or "storage_point" not in io:
                err("%s: no compute_point/storage_point with %d points" % (tag, npt))
                continue
            comp, stor = ifid[io["compute_point"]], ifid[io["storage_point"]]
            if sorted((comp, stor)) != ends:
                err("%s: compute %s storage %s are not the two leaf host ports" %
                    (tag, io["compute_point"], io["storage_point"]))
            for ip, pt in ((io["host"], comp), (io["storage"], stor)):
                if side_of_ip.setdefault(ip, pt) != pt:
                    err("%s: %s has its leaf at %s and at %s" % (tag, ip, names[side_of_ip[ip]], names[pt]))
                if ip in src_side and (src_side[ip] == 0) != (POS[names[pt]] == 0):
                    err("%s: %s TTLs say side %d, its I/O point is %s" % (tag, ip, src_side[ip], names[pt]))
            roles_seen[comp].add("compute")
            roles_seen[stor].add("storage")
        else:
            if "compute_point" in io or "storage_point" in io:
                err("%s: compute_point/storage_point with one point" % tag)
            comp, stor = points[0]["id"], None

        def is_cmd(r):
            return (r["op"] in (0x00, 0x04) and r["qp"] == io["qpn"] and r["psn"] == io["cmd_psn"]
                    and r["src"] == io["host"] and r["dst"] == io["storage"])

        def is_cpl(r):
            return ("rsp_psn" in io and r["op"] in (0x04, 0x17) and r["qp"] == io["host_qpn"]
                    and r["psn"] == io["rsp_psn"] and r["src"] == io["storage"])

        cmd = first(comp, None, is_cmd)
        if (cmd is None) != ("cmd_frame" not in io):
            err("%s: command at compute %s, truth cmd_frame %s" % (tag, cmd and cmd["no"], io.get("cmd_frame")))
            continue
        if cmd:
            if cmd["no"] != io["cmd_frame"]:
                err("%s: cmd_frame %d, expected %d" % (tag, io["cmd_frame"], cmd["no"]))
            # The SQE as far as the snap length kept it (header-only snaps cut it).
            pl = payload(raw[cmd["no"] - 1][2], cmd["op"])
            cut_sqe += len(pl) < 64
            if len(pl) >= 1 and pl[0] != io["opcode"]:
                err("%s: SQE opcode %02x" % (tag, pl[0]))
            if len(pl) >= 4 and struct.unpack_from("<H", pl, 2)[0] != io["cid"]:
                err("%s: SQE CID %d" % (tag, struct.unpack_from("<H", pl, 2)[0]))
            if len(pl) >= 5 and "fctype" in io and pl[4] != io["fctype"]:
                err("%s: fctype %d" % (tag, pl[4]))
            if len(pl) >= 39 and "rkey" in io and struct.unpack_from("<I", pl, 35)[0] != io["rkey"]:
                err("%s: SGL key %#x != %#x" % (tag, struct.unpack_from("<I", pl, 35)[0], io["rkey"]))
            if len(pl) >= 40 and io["in_capsule"] != (pl[39] == 0x01):
                err("%s: SGL identifier %#x vs in_capsule %s" % (tag, pl[39], io["in_capsule"]))
        cpl = first(comp, cmd, is_cpl)
        if io["complete"] != (cpl is not None) or (cpl and cpl["no"] != io.get("rsp_frame")):
            err("%s: completion at compute %s, truth rsp_frame %s complete %s" %
                (tag, cpl and cpl["no"], io.get("rsp_frame"), io["complete"]))
        if cpl:
            pl = payload(raw[cpl["no"] - 1][2], cpl["op"])
            cut_cqe += len(pl) < 16
            if len(pl) >= 14 and struct.unpack_from("<H", pl, 12)[0] != io["cid"]:
                err("%s: CQE cid %d" % (tag, struct.unpack_from("<H", pl, 12)[0]))
            if len(pl) >= 16 and struct.unpack_from("<H", pl, 14)[0] >> 1 != io["status"]:
                err("%s: CQE status %#x" % (tag, struct.unpack_from("<H", pl, 14)[0] >> 1))
            if cpl["op"] == 0x17:
                data = raw[cpl["no"] - 1][2]
                ieth = struct.unpack_from(">I", data, len(data) - len(pl) - 4)[0]
                if ieth != io.get("rkey"):
                    err("%s: IETH %#x != rkey %s" % (tag, ieth, io.get("rkey")))
        want = {}
        if stor is None:
            if cmd and cpl:
                want["iol_us"] = us3(cpl["ts"] - cmd["ts"])
        else:
            t = {}
            if cmd:
                t[1] = cmd["ts"]
            c2 = first(stor, None, is_cmd)
            if c2:
                t[2] = c2["ts"]
            write = io["opcode"] == 1 and not io["admin"]
            read = io["opcode"] == 2 and not io["admin"]
            s_cpl = first(stor, c2, is_cpl)
            if write:
                key = io.get("rkey")
                rr_s = first(stor, c2,
                             lambda r: r["op"] == 0x0C and r["rkey"] == key and r["qp"] == io["host_qpn"])
                rr_c = first(comp, cmd,
                             lambda r: r["op"] == 0x0C and r["rkey"] == key and r["qp"] == io["host_qpn"])
                psns = {r["psn"] for i2, after in ((comp, cmd), (stor, c2)) for r in by_if[i2]
                        if r["op"] == 0x0C and r["rkey"] == key and r["qp"] == io["host_qpn"]
                        and (after is None or pos[r["no"]] > pos[after["no"]])}
                resp = first(comp, cmd,
                             lambda r: r["op"] in (0x0D, 0x10) and r["qp"] == io["qpn"] and r["psn"] in psns
                             and r["src"] == io["host"])
                for n, r in ((3, rr_s), (4, rr_c), (5, resp), (6, s_cpl), (7, cpl)):
                    if r:
                        t[n] = r["ts"]
            else:
                if read and "rkey" in io:
                    d = first(stor, c2,
                              lambda r: r["op"] in (0x06, 0x0A) and r["rkey"] == io["rkey"] and r["qp"] == io["host_qpn"])
                    if d:
                        t[3] = d["ts"]
                if s_cpl:
                    t[4] = s_cpl["ts"]
                if cpl:
                    t[5] = cpl["ts"]
            for n in range(1, 8):
                k = "t%d_ns" % n
                if (n in t) != (k in io) or (n in t and t[n] != io[k]):
                    err("%s %s: %s %s truth %s" % (tag, io["op"], k, t.get(n), io.get(k)))
            cc, cs = (7, 6) if write else (5, 4)
            # Causality on one clock: take each point's offset off its stamps.
            if 1 in t and 2 in t and (t[2] - off[stor]) - (t[1] - off[comp]) <= 0:
                err("%s: command at storage %d not after compute %d (offsets %d, %d)" %
                    (tag, t[2], t[1], off[stor], off[comp]))
            if cs in t and cc in t and (t[cc] - off[comp]) - (t[cs] - off[stor]) <= 0:
                err("%s: completion at compute %d not after storage %d" % (tag, t[cc], t[cs]))
            if (read or write) and 2 in t and 3 in t:
                want["dal_us"] = us3(t[3] - t[2])
            if write and 4 in t and 5 in t:
                want["dpl_us"] = us3(t[5] - t[4])
            if 1 in t and cc in t:
                want["iol1_us"] = us3(t[cc] - t[1])
                want["iol_us"] = want["iol1_us"]
            if 2 in t and cs in t:
                want["iol2_us"] = us3(t[cs] - t[2])
            if "iol1_us" in want and "iol2_us" in want:
                want["rtt_us"] = us3((t[cc] - t[1]) - (t[cs] - t[2]))
        for k in ("dal_us", "dpl_us", "iol1_us", "iol2_us", "rtt_us", "iol_us"):
            if want.get(k) != io.get(k):
                err("%s %s: %s %s truth %s" % (tag, io["op"], k, want.get(k), io.get(k)))

    if npt >= 2 and truth["ios"]:
        for p in points:
            seen = roles_seen.get(p["id"], set())
            want = "mixed" if len(seen) == 2 else (next(iter(seen)) if seen else "fabric")
            if POS.get(p["name"]) in (1, 2, 3) and seen:
                err("point %s: a middle point has I/O roles %s" % (p["name"], seen))
            if p["role"] != want:
                err("point %s: role %s, its I/Os make it %s" % (p["name"], p["role"], want))

    # ---------------------------------------------------------------- messages and flows
    # A NAK from B to A carries A's QPN; the flow it concerns is (A, B, QPN A sends to).
    # Pair QPs by PSN echo: an ACK/NAK from B (to A's qpn qa) with PSN p, and a request
    # A->B at the same interface with PSN p (or p-1 for NAK) gives (A, qa) <-> (B, qb).
    req_by = defaultdict(dict)  # (if, src, dst) -> {psn: qp}
    pair = {}
    for r in rows:
        if "op" not in r or r["op"] == 0x64:
            continue
        if r["op"] in SEND_OPS or r["op"] in WRITE_OPS or r["op"] == 0x0C:
            req_by[(r["if"], r["src"], r["dst"])][r["psn"]] = r["qp"]
        elif r["op"] == 0x11:
            d = req_by[(r["if"], r["dst"], r["src"])]
            for p in (r["psn"], (r["psn"] - 1) & MASK):
                if p in d:
                    pair[(r["dst"], r["qp"])] = d[p]
                    break
    nak_total = 0
    nak_at = defaultdict(list)  # (if, flow) -> [psn]
    flows = defaultdict(lambda: [0, 0, 0, 0, 0, 0])
    state = {}
    pkt_class = {}  # frame -> (retrans)
    period = truth.get("period_ns", 10**9)
    for iface in sorted(by_if):
        for r in by_if[iface]:
            o = r["op"]
            per = (r["ts"] // period) * period
            if o == 0x11:
                if r["syn"] is not None and (r["syn"] & 0xE0) == 0x60:
                    nak_total += 1
                    fq = pair.get((r["dst"], r["qp"]))
                    if fq is None:
                        err("frame %d: cannot pair NAK QP" % r["no"])
                        continue
                    flow = (r["dst"], r["src"], fq)
                    nak_at[(iface, flow)].append(r["psn"])
                    flows[(flow, iface, per)][4] += 1
                continue
            if o == 0x64:
                continue
            flow = (r["src"], r["dst"], r["qp"])
            if o == 0x0C:
                key = (iface, flow, 0)
                n = max(1, -(-r["dmalen"] // pmtu))
                end = (r["psn"] + n - 1) & MASK
                if key not in state or newer(end, state[key]):
                    state[key] = end
                continue
            if o in RESP_OPS:
                space = 1
            elif o in SEND_OPS or o in WRITE_OPS:
                space = 0
            else:
                continue
            key = (iface, flow, space)
            retrans = oos = False
            if key not in state:
                state[key] = r["psn"]
            elif newer(r["psn"], state[key]):
                oos = r["psn"] != ((state[key] + 1) & MASK) and not (space == 1 and o in FIRST_OPS)
                state[key] = r["psn"]
            else:
                retrans = True
            pkt_class[r["no"]] = retrans
            f = flows[(flow, iface, per)]
            f[0] += 1
            f[1] += r["paylen"]
            if retrans:
                f[2] += 1
                f[3] += r["paylen"]
            if oos:
                f[5] += 1
    if nak_total != truth["naks"]:
        err("NAK total %d, truth %d" % (nak_total, truth["naks"]))

    # messages: assign every data packet by (iface, flow, space, PSN range)
    ranges = defaultdict(list)
    for m in truth["messages"]:
        flow = (m["src"], m["dst"], m["dst_qpn"])
        space = 1 if m["kind"] == "read_response" else 0
        n = (m["last_psn"] - m["first_psn"]) & MASK
        ranges[(ifid[m["point"]], flow, space)].append((m["first_psn"], n + 1, m))
    got = {}
    for iface in sorted(by_if):
        for r in by_if[iface]:
            if r["no"] not in pkt_class:
                continue
            o = r["op"]
            space = 1 if o in RESP_OPS else 0
            flow = (r["src"], r["dst"], r["qp"])
            hit = None
            for f0, n, m in ranges.get((iface, flow, space), []):
                if ((r["psn"] - f0) & MASK) < n:
                    hit = m
                    break
            if hit is None:
                err("frame %d: data packet in no truth message" % r["no"])
                continue
            kind = "read_response" if space else ("write" if o in WRITE_OPS else "send")
            if kind != hit["kind"]:
                err("frame %d: opcode %#x in a %s message" % (r["no"], o, hit["kind"]))
            a = got.setdefault(id(hit), {"packets": 0, "retrans_packets": 0, "bytes": 0, "retrans_bytes": 0,
                                         "first_ns": r["ts"], "last_ns": r["ts"], "first_frame": r["no"],
                                         "last_frame": r["no"], "psns": set()})
            a["packets"] += 1
            a["bytes"] += r["paylen"]
            if pkt_class[r["no"]]:
                a["retrans_packets"] += 1
                a["retrans_bytes"] += r["paylen"]
            a["first_ns"] = min(a["first_ns"], r["ts"])
            a["last_ns"] = max(a["last_ns"], r["ts"])
            a["last_frame"] = r["no"]
            a["psns"].add(r["psn"])
    nmsg = 0
    for m in truth["messages"]:
        nmsg += 1
        a = got.get(id(m))
        tag = "msg %s %s->%s qp=%d psn=%d@%s" % (m["kind"], m["src"], m["dst"], m["dst_qpn"], m["first_psn"], m["point"])
        if a is None:
            err(tag + ": no packets in the capture")
            continue
        n = ((m["last_psn"] - m["first_psn"]) & MASK) + 1
        for k in ("packets", "retrans_packets", "bytes", "retrans_bytes", "first_ns", "last_ns",
                  "first_frame", "last_frame"):
            if a[k] != m[k]:
                err("%s: %s %s truth %s" % (tag, k, a[k], m[k]))
        if (len(a["psns"]) == n) != m["complete"]:
            err("%s: complete %s" % (tag, m["complete"]))
        if us3(a["last_ns"] - a["first_ns"]) != m["fct_us"]:
            err("%s: fct_us" % tag)
        naks = 0
        if m["kind"] != "read_response":
            for p in nak_at.get((ifid[m["point"]], (m["src"], m["dst"], m["dst_qpn"])), []):
                if ((p - m["first_psn"]) & MASK) < n:
                    naks += 1
        if naks != m["naks"]:
            err("%s: naks %d truth %d" % (tag, naks, m["naks"]))
        fct = a["last_ns"] - a["first_ns"]
        if (fct > 0) != ("fet_bps" in m) or (fct > 0 and abs(float(m["fet_bps"]) - (a["bytes"] - a["retrans_bytes"]) * 8e9 / fct) > 0.01):
            err("%s: fet_bps %s" % (tag, m.get("fet_bps")))
        orig = a["packets"] - a["retrans_packets"]
        if (orig > 0) != ("fnr" in m) or (orig > 0 and abs(float(m["fnr"]) - naks / orig) > 1e-9):
            err("%s: fnr %s" % (tag, m.get("fnr")))
    tf = {}
    for fr in truth["flows"]:
        k = ((fr["src"], fr["dst"], fr["dst_qpn"]), ifid[fr["point"]], fr["period_start_ns"])
        tf[k] = [fr["packets"], fr["bytes"], fr["retrans_packets"], fr["retrans_bytes"], fr["naks"], fr["oos_packets"]]
    mine = {k: v for k, v in flows.items() if any(v)}
    if mine != tf:
        for k in sorted(set(mine) | set(tf), key=str):
            if mine.get(k) != tf.get(k):
                err("flow %s: %s truth %s" % (k, mine.get(k), tf.get(k)))
    cut = ""
    if cut_sqe or cut_cqe:
        cut = " (snap length cut %d SQEs, %d CQEs: checked as far as captured)" % (cut_sqe, cut_cqe)
    print("%s: %d frames, %d wire-checked, %d ios%s, %d messages, %d flow records, %d NAKs: %s" %
          (path, len(rows), nwire, nio, cut,
           nmsg, len(tf), nak_total, "OK" if not errors else "%d ERRORS" % len(errors)))
    return not errors


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    ok = True
    for p in sys.argv[1:]:
        ok = check(p) and ok
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
