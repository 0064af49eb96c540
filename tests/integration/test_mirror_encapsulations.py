# SPDX-License-Identifier: GPL-2.0-or-later
"""Mirrored traffic as switches deliver it, against the same traffic captured plainly (whose
records equal the generator's ground truth: test_cli_truth), through the CLI (and, for a
collector of two sessions and a truncating mirror, tshark with the plugin against the CLI):
 - ERSPAN II and III, and VXLAN, whose mirror truncated each frame to 128 bytes (the T bit; the
   outer frame is whole, the inner lengths say the original size): the records of the plain
   capture snapped at 128 bytes;
 - VXLAN on Linux's port 8472 as on 4789;
 - ERSPAN II over a mirror path with a 1500-byte MTU, so that the outer IPv4 packet of a 4 KB frame
   is fragmented: the first fragment carries the mirrored headers; the records of the plain capture
   (frame numbers aside: one frame became several);
 - the mirrored frames' own 802.1Q priority, not the tunnel's: congestion records with the plain
   capture's priority;
 - pcapng custom blocks between packets, which Wireshark numbers as frames: every frame number
   moves by the custom blocks before it;
 - one collector interface receiving an ERSPAN session per point: a point per session, the
   records of the plain capture;
 - LINKTYPE_LOOP (OpenBSD loopback, the address family in network byte order): the records of the
   plain capture."""
import json
import os
import struct
import subprocess
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "support"))
from pcapng_edit import EPB, Block, Capture, interface_block  # noqa: E402
from rdmatel_testlib import Tshark, fail_if, run_cli, scratch_dir  # noqa: E402

synth, cli, plugin = sys.argv[1], sys.argv[2], sys.argv[3]
tmp = scratch_dir("rdmatel_mirrors_")
problems = []
FRAMES = ("cmd_frame", "rsp_frame", "first_frame", "last_frame")
OUTER_SRC, OUTER_DST = bytes([192, 0, 2, 1]), bytes([192, 0, 2, 2])


def packet_bytes(pkt):
    cap = struct.unpack_from("<I", pkt.body, 12)[0]
    return pkt.body[20:20 + cap]


def with_bytes(pkt, data, stamp_add=0):
    """A copy of the EPB carrying `data` (captured whole), its stamp moved by `stamp_add` units."""
    iface, hi, lo = struct.unpack_from("<III", pkt.body, 0)
    units = ((hi << 32) | lo) + stamp_add
    body = struct.pack("<IIIII", iface, units >> 32, units & 0xFFFFFFFF, len(data), len(data))
    return Block(EPB, body + data + b"\0" * (-len(data) % 4))


def ipv4(proto, payload, ident=0, flags_offset=0, src=OUTER_SRC):
    return struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(payload), ident, flags_offset, 64, proto, 0,
                       src, OUTER_DST) + payload


def outer_ethernet(l3, tags=b""):
    # The mirror's transport: its own VLAN (priority 0), not the mirrored frame's.
    return b"\x02\0\0\0\0\x01" + b"\x02\0\0\0\0\x02" + tags + b"\x08\x00" + l3


def erspan(inner, version, truncated, seq, session=7):
    t = 1 if truncated else 0
    if version == 2:
        gre = struct.pack("!HHI", 0x1000, 0x88BE, seq)
        header = struct.pack("!HHI", 1 << 12, (t << 10) | session, 0)
    else:
        gre = struct.pack("!HHI", 0x1000, 0x22EB, seq)
        header = struct.pack("!HHIHH", 2 << 12, (t << 10) | session, 0x12345678, 0, 0)
    return gre + header + inner


def vxlan(inner, port=4789):
    udp_payload = struct.pack("!II", 0x08000000, 0x000A0000) + inner
    return struct.pack("!HHHH", 49152, port, 8 + len(udp_payload), 0) + udp_payload


def rewrite(src, dst, frames_of):
    """Writes `dst`: `src` with each packet replaced by the frames frames_of(i, bytes) returns."""
    c = Capture(src)
    out = []
    for i, pkt in enumerate(c.packets):
        for k, data in enumerate(frames_of(i, packet_bytes(pkt))):
            out.append(with_bytes(pkt, data, stamp_add=k))
    c.write(dst, out)


def export(kind, path):
    p = run_cli(cli, "export", kind, path, "--no-progress", check=False)
    if p.returncode != 0:
        problems.append(f"export {kind} {os.path.basename(path)}: exit {p.returncode}: {p.stderr.strip()[:200]}")
    return p, [json.loads(line) for line in p.stdout.splitlines() if line.strip()]


def canonical(records, drop=()):
    return sorted(json.dumps({k: v for k, v in r.items() if k not in drop}, sort_keys=True) for r in records)


def same(label, path, reference, drop=(), kinds=("io", "messages")):
    for kind in kinds:
        p, got = export(kind, path)
        _, want = export(kind, reference)
        if not want:
            problems.append(f"{label}: the reference has no {kind} records: the check proves nothing")
        a, b = canonical(got, drop), canonical(want, drop)
        if a != b:
            only = sorted(set(a) - set(b))[:1] + sorted(set(b) - set(a))[:1]
            problems.append(f"{label}, export {kind}: {len(got)} records against {len(want)}; first differing: {only}; "
                            f"stderr {p.stderr.strip()[:200]}")


plain = os.path.join(tmp, "plain.pcapng")
subprocess.run([synth, "--scenario", "nvme-2point", "--ios", "100", "--seed", "7", "--vlan", "1", "--pcp", "3",
                "--ecn-mark", "leafA-gpu:leafB-stor=0.1", "--out", plain], check=True, capture_output=True)
snapped = os.path.join(tmp, "plain128.pcapng")
subprocess.run(["editcap", "-s", "128", plain, snapped], check=True, capture_output=True)

# ---- mirrors that truncate ----
for name, wrap in (("erspan2", lambda i, f: outer_ethernet(ipv4(47, erspan(f[:128], 2, len(f) > 128, i)))),
                   ("erspan3", lambda i, f: outer_ethernet(ipv4(47, erspan(f[:128], 3, len(f) > 128, i)))),
                   ("vxlan", lambda i, f: outer_ethernet(ipv4(17, vxlan(f[:128]))))):
    path = os.path.join(tmp, f"{name}_truncated.pcapng")
    rewrite(plain, path, lambda i, f, wrap=wrap: [wrap(i, f)])
    same(f"{name} truncated to 128 bytes by the mirror", path, snapped)

# ---- VXLAN on Linux's own port (8472) ----
linux_vxlan = os.path.join(tmp, "vxlan8472.pcapng")
rewrite(plain, linux_vxlan, lambda i, f: [outer_ethernet(ipv4(17, vxlan(f, port=8472)))])
same("VXLAN on UDP 8472", linux_vxlan, plain)

# ---- the outer packet fragmented on the mirror's path ----
def fragments(i, frame):
    payload = erspan(frame, 2, False, i)
    out = []
    for off in range(0, len(payload), 1480):
        chunk = payload[off:off + 1480]
        more = 0x2000 if off + len(chunk) < len(payload) else 0
        out.append(outer_ethernet(ipv4(47, chunk, ident=i & 0xFFFF, flags_offset=more | off // 8)))
    return out


fragmented = os.path.join(tmp, "erspan2_fragmented.pcapng")
rewrite(plain, fragmented, fragments)
if len(Capture(fragmented).packets) <= len(Capture(plain).packets):
    problems.append("fragmented mirror: no packet was fragmented: the check proves nothing")
same("ERSPAN II fragmented on a 1500-byte path", fragmented, plain, drop=FRAMES)

# ---- the mirrored frames' priority, not the tunnel's ----
tagged = os.path.join(tmp, "erspan2_tagged.pcapng")
rewrite(plain, tagged, lambda i, f: [outer_ethernet(ipv4(47, erspan(f, 2, False, i)), tags=b"\x81\x00\x00\x64")])
_, want = export("congestion", plain)
_, got = export("congestion", tagged)
want_ecn = canonical([r for r in want if r.get("kind") == "ecn"], FRAMES)
if not want_ecn or not all(json.loads(r).get("priority") == 3 for r in want_ecn):
    problems.append("reference congestion records without priority 3: the check proves nothing")
if canonical([r for r in got if r.get("kind") == "ecn"], FRAMES) != want_ecn:
    problems.append(f"ERSPAN with its own VLAN: congestion records differ from the plain capture's "
                    f"(priorities {sorted({str(r.get('priority')) for r in got})})")

# ---- custom blocks, numbered as frames by Wireshark ----
c = Capture(plain)
custom = Block(0x00000BAD, struct.pack("<I", 32473) + b"rdmatel-test" + b"\0" * 4)
with_custom, before = [], []
for i, pkt in enumerate(c.packets):
    if i % 10 == 0:
        with_custom.append(custom)
    with_custom.append(pkt)
    before.append(i // 10 + 1)  # custom blocks before packet i (frame i + 1)
numbered = os.path.join(tmp, "custom_blocks.pcapng")
c.write(numbered, with_custom)
_, want = export("io", plain)
_, got = export("io", numbered)
moved = [{k: (r[k] + before[r[k] - 1] if k in FRAMES and r.get(k) else r[k]) for k in r} for r in want]
if canonical(got) != canonical(moved):
    problems.append(f"custom blocks: frame numbers not moved by the blocks before them "
                    f"(first I/O: {got[:1]} against {moved[:1]})")

# ---- one collector interface receiving an ERSPAN session per point ----
# Each point's frames mirrored by a switch of its own (session 1 from 192.0.2.1, session 2 from
# 192.0.2.2), all captured on one interface: one observation point per session, the records of
# the plain capture (the first session seen keeps the interface's name).
c = Capture(plain)
sessions = [(1, bytes([192, 0, 2, 1])), (2, bytes([192, 0, 2, 2]))]
collector_packets = []
for i, pkt in enumerate(c.packets):
    point = Capture.interface(pkt)
    session, mirror = sessions[point]
    frame = outer_ethernet(ipv4(47, erspan(packet_bytes(pkt), 2, False, i, session=session), src=mirror))
    b = with_bytes(pkt, frame)
    Capture.set_interface(b, 0)
    collector_packets.append(b)
c.replace_interfaces(interface_block("collector"))
collector = os.path.join(tmp, "collector.pcapng")
c.write(collector, collector_packets)
first = Capture.interface(Capture(plain).packets[0])
other = 1 - first
names = {"collector": Capture(plain).if_names[first],
         f"collector/ERSPAN {sessions[other][0]} from 192.0.2.{other + 1}": Capture(plain).if_names[other]}
for kind in ("io", "messages"):
    p, got = export(kind, collector)
    _, want = export(kind, plain)
    renamed = [{k: names.get(v, v) if isinstance(v, str) else v for k, v in r.items()} for r in got]
    if canonical(renamed) != canonical(want) or not want:
        only = sorted(set(canonical(renamed)) - set(canonical(want)))[:1]
        problems.append(f"one collector, two ERSPAN sessions, export {kind}: {len(got)} records against {len(want)}; "
                        f"first differing: {only}; stderr {p.stderr.strip()[:200]}")
    if "receives more than one ERSPAN session" not in p.stderr:
        problems.append(f"one collector, two ERSPAN sessions: no warning that they are two points: {p.stderr[:200]}")

# --point names a session's point; an interface's number names the interface's point only.
other_name = f"collector/ERSPAN {sessions[other][0]} from 192.0.2.{other + 1}"
p = run_cli(cli, "analyze", collector, "--point", f"{other_name}=fabric", "--no-progress", check=False)
if p.returncode != 0 or f"{other_name} [fabric, configured" not in p.stdout:
    problems.append(f"--point '{other_name}=fabric': exit {p.returncode}, {p.stderr.strip()[:200]}")
p = run_cli(cli, "analyze", collector, "--point", "0=fabric", "--no-progress")
if f"{other_name} [fabric, configured" in p.stdout or "collector [fabric, configured" not in p.stdout:
    problems.append("--point 0=fabric: not the interface's point alone: " +
                    next((l for l in p.stdout.splitlines() if "observation points" in l), "")[:300])

# Hostile: a packet per made-up mirror address. Sessions get points up to a bound, then the rest
# are measured at the interface's point, with a warning.
c = Capture(plain)
pkt = c.packets[0]
hostile = [with_bytes(pkt, outer_ethernet(ipv4(47, erspan(packet_bytes(pkt), 2, False, k, session=k % 1000),
                                                 src=struct.pack("!I", 0x0A000000 + k))), stamp_add=k)
           for k in range(3000)]
for b in hostile:
    Capture.set_interface(b, 0)
c.replace_interfaces(interface_block("collector"))
many = os.path.join(tmp, "many_sessions.pcapng")
c.write(many, hostile)
p = run_cli(cli, "analyze", many, "--no-progress", check=False)
points_line = next((l for l in p.stdout.splitlines() if "observation points (" in l), "")
count = int(points_line.split("(")[1].split(")")[0]) if points_line else -1
if p.returncode != 0 or "ERSPAN sessions: the frames of further ones" not in p.stderr or not 2 <= count <= 1024:
    problems.append(f"3000 made-up ERSPAN sessions: exit {p.returncode}, {count} points, {p.stderr.strip()[:200]}")

# Tunnels inside captures of another link type (a collector captured with tcpdump -i any: SLL;
# raw IP): the truncating mirror read the same way.
for link, name, strip in ((101, "raw IP", lambda f: f[14:]),
                          (113, "Linux cooked", lambda f: struct.pack("!HHH8sH", 0, 1, 6, b"\x02\0\0\0\0\x01\0\0", 0x0800) + f[14:])):
    wrapped = Capture(plain)
    wrapped.set_link(link)
    out = [with_bytes(pk, strip(outer_ethernet(ipv4(47, erspan(packet_bytes(pk)[:128], 2, True, i)))))
           for i, pk in enumerate(wrapped.packets)]
    path = os.path.join(tmp, f"erspan_link{link}.pcapng")
    wrapped.write(path, out)
    same(f"ERSPAN truncated to 128 bytes in a {name} capture", path, snapped)

# The Wireshark plugin on the same files: the CLI's numbers on every I/O's and message's frames,
# and each frame of the collector at its session's point.
p = subprocess.run([sys.executable, os.path.join(here, "test_cli_vs_tshark.py"), cli, plugin, collector,
                    os.path.join(tmp, "erspan2_truncated.pcapng")], capture_output=True, text=True, timeout=900)
if p.returncode != 0:
    problems.append(f"plugin against CLI on mirrored captures:\n{p.stdout[-2000:]}{p.stderr[-800:]}")
ts = Tshark(plugin)
try:
    shown = {}
    for row in ts.fields(collector, ["rdmatel.point"], "rdmatel.point"):
        shown[row["rdmatel.point"]] = shown.get(row["rdmatel.point"], 0) + 1
    # Each I/O's frames at every point, linked from each of its frames, as on the plain capture.
    def links(path):
        return {r["frame.number"]: r["rdmatel.io.frame"] for r in ts.fields(path, ["frame.number", "rdmatel.io.frame"],
                                                                            "rdmatel.io.frame")}
    plain_links, collector_links = links(plain), links(collector)
    if not plain_links or plain_links != collector_links:
        differ = [f for f in plain_links if plain_links[f] != collector_links.get(f)]
        problems.append(f"plugin: the I/O frame links of {len(differ)} frames differ from the plain capture's "
                        f"(first: frame {differ[:1]})")
finally:
    ts.close()
if sorted(shown) != sorted(names) or min(shown.values()) < 1000:
    problems.append(f"plugin: the collector's frames at points {shown}, wanted {sorted(names)}")

# ---- LINKTYPE_LOOP ----
loop = Capture(plain)
loop.set_link(108)
loop_out = []
for pkt in loop.packets:
    f = packet_bytes(pkt)
    tags = 4 * (f[12:14] == b"\x81\x00")
    ethertype = f[12 + tags:14 + tags]
    family = 2 if ethertype == b"\x08\x00" else 24
    loop_out.append(with_bytes(pkt, struct.pack("!I", family) + f[14 + tags:]))
looped = os.path.join(tmp, "loop.pcapng")
loop.write(looped, loop_out)
same("LINKTYPE_LOOP", looped, plain, kinds=("io",))

fail_if(problems, "problems with mirrored or oddly encapsulated traffic")
print("mirror encapsulations, truncation, fragments, custom blocks, LINKTYPE_LOOP: OK")
