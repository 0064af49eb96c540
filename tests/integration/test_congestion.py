# SPDX-License-Identifier: GPL-2.0-or-later
"""export congestion (kinds ecn, cnp and pfc), the congestion timeline of export flows and the
analyze section on a capture this test writes: ECN marks, CNPs and PFC pauses at two points, one
with a recorded link speed. Expected values come
from what was written (worked out in the comments), not from rdmatel."""
import collections
import json
import os
import shutil
import struct
import subprocess
import sys

from rdmatel_stats import parse_simple_tables
from rdmatel_testlib import Tshark, fail_if, scratch_dir

cli = sys.argv[1]
plugin = sys.argv[2] if len(sys.argv) > 2 else None
tmp = scratch_dir("rdmatel_cong_")
problems = []
T0 = 1_800_000_000_000_000_000
US = 1000


def block(btype, body):
    body += b"\0" * (-len(body) % 4)
    return struct.pack("<II", btype, 12 + len(body)) + body + struct.pack("<I", 12 + len(body))


def option(code, value):
    return struct.pack("<HH", code, len(value)) + value + b"\0" * (-len(value) % 4)


def roce(src, dst, qpn, opcode, psn, ecn, ext=b"", payload=b""):
    bth = struct.pack(">BBHII", opcode, 0, 0xFFFF, qpn & 0xFFFFFF, psn & 0xFFFFFF)
    l4 = bth + ext + payload + b"\0" * 4  # ICRC (not checked)
    udp = struct.pack(">HHHH", 0xC000, 4791, 8 + len(l4), 0) + l4
    ip = struct.pack(">BBHHHBBH4s4s", 0x45, ecn, 20 + len(udp), 0, 0x4000, 64, 17, 0,
                     bytes(map(int, src.split("."))), bytes(map(int, dst.split(".")))) + udp
    return b"\x02\0\0\0\0\x02\x02\0\0\0\0\x01\x08\x00" + ip


def pfc(enabled, quanta):
    f = b"\x01\x80\xc2\0\0\x01\x02\0\0\0\0\x01" + struct.pack(">HHH", 0x8808, 0x0101, enabled)
    f += b"".join(struct.pack(">H", q) for q in quanta)
    return f + b"\0" * (60 - len(f))


H, S = "10.9.0.1", "10.9.1.1"
frames = []  # (interface, ts, bytes)
for point, skew in ((0, 0), (1, 2 * US)):
    # Host -> storage: 20 WRITE ONLY, every 4th CE-marked (ECN 11), the rest ECT(0) (ECN 10).
    for i in range(20):
        reth = struct.pack(">QII", 0x1000, 0x77, 64)
        frames.append((point, T0 + i * US + skew, roce(H, S, 0x111, 0x0A, i, 3 if i % 4 == 3 else 2, reth, b"\0" * 64)))
    # Storage -> host: the ACK of PSN 19 (pairs the two directions), then 3 CNPs.
    frames.append((point, T0 + 30 * US + skew, roce(S, H, 0x222, 0x11, 19, 2, struct.pack(">I", 1))))
    for i in range(3):
        frames.append((point, T0 + (40 + i) * US + skew, roce(S, H, 0x222, 0x81, 0, 2, b"", b"\0" * 16)))
# PFC at leaf1 (100 Gb/s), priority 3: pause 0xFFFF at 1.0 ms and at 1.2 ms, resume at 1.3 ms.
frames += [(0, T0 + 1000 * US, pfc(0x08, [0, 0, 0, 0xFFFF, 0, 0, 0, 0])),
           (0, T0 + 1200 * US, pfc(0x08, [0, 0, 0, 0xFFFF, 0, 0, 0, 0])),
           (0, T0 + 1300 * US, pfc(0x08, [0] * 8))]
# PFC at leaf2 (speed not recorded), priority 0: one pause of 100 quanta.
frames.append((1, T0 + 1000 * US, pfc(0x01, [100, 0, 0, 0, 0, 0, 0, 0])))
frames.sort(key=lambda f: f[1])

cap = os.path.join(tmp, "congestion.pcapng")
with open(cap, "wb") as f:
    f.write(block(0x0A0D0D0A, struct.pack("<IHHq", 0x1A2B3C4D, 1, 0, -1)))
    f.write(block(1, struct.pack("<HHI", 1, 0, 65535) + option(2, b"leaf1") + option(9, b"\x09") +
                  option(8, struct.pack("<Q", 100_000_000_000)) + b"\0\0\0\0"))
    f.write(block(1, struct.pack("<HHI", 1, 0, 65535) + option(2, b"leaf2") + option(9, b"\x09") + b"\0\0\0\0"))
    for iface, ts, data in frames:
        f.write(block(6, struct.pack("<IIIII", iface, ts >> 32, ts & 0xFFFFFFFF, len(data), len(data)) + data))


def export(kind, *extra):
    p = subprocess.run([cli, "export", kind, cap, *extra], capture_output=True, text=True, timeout=120)
    if p.returncode != 0:
        problems.append(f"export {kind} {extra}: exit {p.returncode}: {p.stderr}")
        return [], p.stderr
    return [json.loads(l) for l in p.stdout.splitlines()], p.stderr


def check(label, rec, want):
    for k, v in want.items():
        got = rec.get(k) if rec else None
        if got != v:
            problems.append(f"{label}: {k} = {got!r}, want {v!r}")


everything, _ = export("congestion")
kinds = [r.get("kind") for r in everything]
# SPEC §6: one record per point and kind; ecn per flow, cnp per IP pair, pfc per priority.
if kinds != ["ecn"] * 4 + ["cnp"] * 2 + ["pfc"] * 2:
    problems.append(f"congestion record kinds {kinds}, want 4 ecn (2 flows x 2 points), 2 cnp, 2 pfc")
for r in everything:
    for k in ("point", "kind", "first_ns", "last_ns"):
        if k not in r:
            problems.append(f"congestion {r.get('kind')} record without {k}: {r}")
recs = [r for r in everything if r.get("kind") == "ecn"]
by = {(r["src"], r["point"]): r for r in recs}
for point in ("leaf1", "leaf2"):
    # 20 packets, all ECN-capable, 5 CE (i = 3, 7, 11, 15, 19): ratio 0.25; the reverse carried 3 CNPs.
    check(f"{point} host->storage", by.get((H, point)),
          {"dst": S, "dst_qpn": 0x111, "packets": 20, "ect_packets": 20, "ce_packets": 5, "ce_ratio": 0.25,
           "cnp_packets": 0, "cnps_received": 3})
    # 1 ACK + 3 CNPs, ECT(0), none CE; the host sent no CNP.
    check(f"{point} storage->host", by.get((S, point)),
          {"packets": 4, "ect_packets": 4, "ce_packets": 0, "cnp_packets": 3, "cnps_received": 0})
check("leaf1 first CE", by.get((H, "leaf1")), {"first_ce_ns": T0 + 3 * US})
# CNPs per IP pair: the storage (notification point) told the host 3 times at each point, the
# first at 40 us (+2 us at leaf2), the last at 42 us.
cnps = {r["point"]: r for r in everything if r.get("kind") == "cnp"}
for point, skew in (("leaf1", 0), ("leaf2", 2 * US)):
    check(f"cnp {point}", cnps.get(point),
          {"src": S, "dst": H, "cnps": 3, "first_ns": T0 + 40 * US + skew, "last_ns": T0 + 42 * US + skew})
    if cnps.get(point, {}).get("priority") is not None or cnps.get(point, {}).get("packets") is not None:
        problems.append(f"cnp {point}: carries another kind's fields: {cnps.get(point)}")

# The congestion timeline in the flows' periods (one period of 1 s holds everything): the data
# flow's 20 packets, 5 CE-marked, 3 CNPs back to its sender; PFC pauses (quanta > 0) at its
# point: 2 at leaf1 (the resume is not a pause), 1 at leaf2.
periods, _ = export("flows")
by = {(r["src"], r["point"]): r for r in periods}
if len(periods) != 2:
    problems.append(f"flows: {len(periods)} periods, want 2 (the data flow at 2 points; ACKs and CNPs carry no data)")
check("flows leaf1", by.get((H, "leaf1")), {"packets": 20, "ce_packets": 5, "cnps": 3, "pfc_pauses": 2, "naks": 0})
check("flows leaf2", by.get((H, "leaf2")), {"packets": 20, "ce_packets": 5, "cnps": 3, "pfc_pauses": 1})

# PFC at 100 Gb/s: one quantum = 5.12 ns, 0xFFFF quanta = 335,539 ns (335.5392 truncated);
# paused from 1.0 ms, refreshed at 1.2 ms, resumed at 1.3 ms: 300 us without a break.
def pfc_records(*extra):
    recs, err = export("congestion", *extra)
    return {(r["point"], r["priority"]): r for r in recs if r.get("kind") == "pfc"}, err


# Defaults (SPEC §6): the pcapng if_speed, else 100 Gb/s; storms from 10 ms (300 us is none).
by, _ = pfc_records()
check("pfc leaf1 prio 3", by.get(("leaf1", 3)),
      {"frames": 3, "pause_frames": 2, "resume_frames": 1, "quanta": 131070, "pause_us": 671.078,
       "longest_pause_us": 300.0, "storm": False, "speed_bps": 100_000_000_000})
# leaf2 records no speed: 100 quanta x 512 bits / 100 Gb/s = 0.512 us.
check("pfc leaf2 prio 0", by.get(("leaf2", 0)),
      {"frames": 1, "pause_frames": 1, "resume_frames": 0, "quanta": 100, "pause_us": 0.512,
       "speed_bps": 100_000_000_000})
by, _ = pfc_records("--link-speed", "0")
if by.get(("leaf2", 0), {}).get("pause_us") is not None or by.get(("leaf2", 0), {}).get("speed_bps") != 0:
    problems.append(f"pfc leaf2 with --link-speed 0: a pause time without a link speed: {by.get(('leaf2', 0))}")
check("pfc leaf1 with --link-speed 0 (its own if_speed)", by.get(("leaf1", 3)), {"pause_us": 671.078})
# A storm threshold below 300 us makes it a storm, with a warning; --link-speed 10 gives leaf2
# 100 x 512 / 10e9 s = 5.120 us.
by, err = pfc_records("--pfc-storm", "0.25", "--link-speed", "10")
check("pfc storm", by.get(("leaf1", 3)), {"storm": True})
check("pfc --link-speed", by.get(("leaf2", 0)), {"pause_us": 5.12, "speed_bps": 10_000_000_000})
if "PFC storm" not in err:
    problems.append(f"no PFC storm warning: {err!r}")
# A point's own speed (SPEC §6: a per-point setting) comes before the capture's if_speed:
# leaf1 at 400 Gb/s: 65535 x 512 / 400 = 83,884 ns per pause (83,884.8 truncated), 2 pauses;
# leaf2 at 25 Gb/s: 100 x 512 / 25 = 2,048 ns.
by, _ = pfc_records("--point-speed", "leaf1=400", "--point-speed", "leaf2=25")
check("pfc --point-speed leaf1", by.get(("leaf1", 3)), {"pause_us": 167.768, "speed_bps": 400_000_000_000})
check("pfc --point-speed leaf2", by.get(("leaf2", 0)), {"pause_us": 2.048, "speed_bps": 25_000_000_000})
for bad in ("leaf1", "leaf1=", "leaf1=fast", "leaf1=0", "=10"):
    p = subprocess.run([cli, "export", "congestion", cap, "--point-speed", bad], capture_output=True, text=True,
                       timeout=60)
    if p.returncode != 2 or "--point-speed takes NAME=GBPS" not in p.stderr:
        problems.append(f"--point-speed {bad!r}: exit {p.returncode}, {p.stderr.strip()!r}, want a usage error")
p = subprocess.run([cli, "export", "congestion", cap, "--point-speed", "nosuch=10"], capture_output=True, text=True,
                   timeout=60)
if p.returncode != 0 or "names no observation point" not in p.stderr:
    problems.append(f"--point-speed nosuch=10: exit {p.returncode}, {p.stderr.strip()!r}, want a warning")

# The analyze section: 2 points x (20 + 4) ECN-capable packets, 2 x 5 CE, 2 x 3 CNPs.
p = subprocess.run([cli, "analyze", cap, "--pfc-storm", "0.25"], capture_output=True, text=True, timeout=120)
out = p.stdout
for needle in ("Congestion (ECN, CNP, PFC)", "ECN: 10 of 48 ECN-capable packets marked CE (20.83%) in 2 of 4 flow-points; CNPs: 6",
               "STORM"):
    if needle not in out:
        problems.append(f"analyze lacks {needle!r}")
if p.returncode != 0:
    problems.append(f"analyze: exit {p.returncode}: {p.stderr}")

# Wireshark: the same PFC facts on the frames. Wireshark 4.0 gives a dissector no interface
# speed, so pause times need the link_speed preference there (100 Gb/s, as leaf1's if_speed).
if plugin:
    ts = Tshark(plugin)
    try:
        rows = ts.fields(cap, ["frame.number", "rdmatel.point", "rdmatel.pfc.priority", "rdmatel.pfc.quanta",
                               "rdmatel.pfc.pause_time", "rdmatel.pfc.resume", "rdmatel.pfc.storm",
                               "rdmatel.pfc.storm_time", "rdmatel.ecn_ce", "rdmatel.cnp"],
                         extra=["-o", "rdmatel.link_speed:100", "-o", "rdmatel.pfc_storm:0.25"])
        pfc_rows = [(r["rdmatel.point"], r["rdmatel.pfc.priority"], r["rdmatel.pfc.quanta"], r["rdmatel.pfc.pause_time"],
                     r["rdmatel.pfc.resume"], r["rdmatel.pfc.storm"], r["rdmatel.pfc.storm_time"])
                    for r in rows if r["rdmatel.pfc.priority"]]
        # File order: leaf1 pause (the storm's first frame: 300 us), leaf2 pause (100 quanta =
        # 0.512 us at 100 Gb/s), leaf1 pause, leaf1 resume.
        want = [("leaf1", "3", "65535", "335.539", "", "1", "300"), ("leaf2", "0", "100", "0.512", "", "", ""),
                ("leaf1", "3", "65535", "335.539", "", "", ""), ("leaf1", "3", "0", "", "1", "", "")]
        if pfc_rows != want:
            problems.append(f"tshark PFC fields: {pfc_rows}, want {want}")
        # The point_speeds preference (the CLI's --point-speed): leaf2 at 25 Gb/s, 2.048 us.
        rows2 = ts.fields(cap, ["rdmatel.point", "rdmatel.pfc.pause_time"], "rdmatel.pfc.priority",
                          extra=["-o", "rdmatel.point_speeds:leaf2=25", "-o", "rdmatel.link_speed:100"])
        leaf2 = [r["rdmatel.pfc.pause_time"] for r in rows2 if r["rdmatel.point"] == "leaf2"]
        if leaf2 != ["2.048"]:
            problems.append(f"tshark -o rdmatel.point_speeds:leaf2=25: leaf2 pause times {leaf2}, want ['2.048']")
        # Expert info on CE-marked packets and CNPs, naming who is involved.
        ex = ts.fields(cap, ["frame.number", "_ws.expert.message"], "rdmatel.ecn_ce || rdmatel.cnp")
        msgs = collections.Counter(m for r in ex for m in r["_ws.expert.message"].split("|") if m)
        want_ex = {f"Congestion experienced (ECN CE) on the way from {H} to {S}": 10, f"CNP: {S} asks {H} to slow down": 6}
        for m, n in want_ex.items():
            if msgs.get(m) != n:
                problems.append(f"tshark expert {m!r}: {msgs.get(m)} frames, want {n} ({dict(msgs)})")
        ce = sum(1 for r in rows if r["rdmatel.ecn_ce"])
        cnp = sum(1 for r in rows if r["rdmatel.cnp"])
        if (ce, cnp) != (10, 6):
            problems.append(f"tshark: {ce} CE-marked and {cnp} CNP frames, want 10 and 6")
        # The -z tables, two passes: the same numbers, worked out above.
        out = ts.run("-2", "-q", "-r", ts.stage(cap), "-o", "rdmatel.link_speed:100", "-o", "rdmatel.pfc_storm:0.25",
                     "-z", "rdmatel,congestion", "-z", "rdmatel,pfc").stdout
        tables = parse_simple_tables(out)
        rows = {tuple(r[:4]): r[4:] for r in tables.get("RDMA Telemetry · Congestion per flow (ECN, CNP)", ([], []))[1]}
        for point in ("leaf1", "leaf2"):
            want = {(H, S, "0x000111", point): ["20", "20", "5", "0.250000", "0", "3"],
                    (S, H, "0x000222", point): ["4", "4", "0", "0.000000", "3", "0"]}
            for k, v in want.items():
                if rows.get(k) != v:
                    problems.append(f"-z rdmatel,congestion {k}: {rows.get(k)}, want {v}")
        if len(rows) != 4:
            problems.append(f"-z rdmatel,congestion: {len(rows)} rows, want 4:\n{out}")
        # CNPs per IP pair and point: the storage told the host 3 times at each point.
        out_cnp = ts.run("-2", "-q", "-r", ts.stage(cap), "-z", "rdmatel,cnp").stdout
        cnp_rows = parse_simple_tables(out_cnp).get("RDMA Telemetry · CNPs per IP pair", ([], []))[1]
        if sorted(cnp_rows) != [[S, H, "leaf1", "3"], [S, H, "leaf2", "3"]]:
            problems.append(f"-z rdmatel,cnp: {cnp_rows}, want 3 CNPs from {S} to {H} at leaf1 and leaf2:\n{out_cnp}")
        rows = {tuple(r[:2]): r[2:] for r in tables.get("RDMA Telemetry · PFC per point and priority", ([], []))[1]}
        want = {("leaf1", "3"): ["3", "2", "1", "131070", "671.078", "300.000", "storm"],
                ("leaf2", "0"): ["1", "1", "0", "100", "0.512", "0.512", "-"]}
        if rows != want:
            problems.append(f"-z rdmatel,pfc: {rows}, want {want}:\n{out}")
        one = ts.run("-q", "-r", ts.stage(cap), "-z", "rdmatel,congestion").stdout
        if "ONE PASS: empty" not in one:
            problems.append(f"-z rdmatel,congestion in one pass does not say it is empty:\n{one}")
    finally:
        ts.close()

shutil.rmtree(tmp, ignore_errors=True)
fail_if(problems, "congestion problems")
print("OK: congestion and PFC records")
