# SPDX-License-Identifier: GPL-2.0-or-later
"""Mirror copies: one observation point that records packets twice, identical and a moment
apart, as a SPAN session of several ports into one interface does (a host's port and the uplink
its packets leave by) or a capture on Linux's "any" device with a VLAN over the physical
interface. The generator's captures are rewritten so that the compute leaf's interface records
every packet (or only the host-to-storage direction) a second time 0.3 to 3 us later, or 8 to
60 us later (beyond mirror_copy_window: the point's window must widen on its own evidence); the
ground truth's frame numbers are moved to where the original packets land. The CLI and tshark
with the plugin must still equal the ground truth (no packet counted as retransmitted for its
copy) and say that they counted the copies once. Two ports of one switch written to one pcap
file (no interface names) must count each packet once too. Captures whose go-back-N resends
follow their originals within microseconds, or resend nearly every packet (heavy losses on IPv6,
which has no IP ID to tell a resend from its original), must not lose a packet to the check."""
import json
import os
import random
import re
import struct
import subprocess
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "support"))
from pcapng_edit import Block, Capture  # noqa: E402
from rdmatel_testlib import Tshark, fail, fail_if, run_cli, scratch_dir  # noqa: E402

synth, cli, plugin = sys.argv[1], sys.argv[2], sys.argv[3]
tmp = scratch_dir("rdmatel_mirror_")
problems = []


def generate(name, *args):
    out = os.path.join(tmp, name + ".pcapng")
    subprocess.run([synth, "--out", out, *args], check=True, capture_output=True, timeout=300)
    return out


def host_to_storage(data):
    # IPv4 source 10.1.0.x (hosts), after the Ethernet header and its VLAN tags.
    off = 12
    while data[off:off + 2] in (b"\x81\x00", b"\x88\xa8"):
        off += 4
    ip = off + 2
    return data[off:off + 2] == b"\x08\x00" and data[ip + 12] == 10 and data[ip + 13] == 1


def untagged(body):
    """An EPB body whose frame loses its 802.1Q tag: the copy an untagged port (a routed uplink)
    gives of a packet a tagged host port gives."""
    iface, hi, lo, caplen, origlen = struct.unpack_from("<IIIII", body, 0)
    data = body[20:20 + caplen]
    assert data[12:14] == b"\x81\x00"
    data = data[:12] + data[16:]
    options = body[20 + caplen + (-caplen % 4):]
    return struct.pack("<IIIII", iface, hi, lo, len(data), origlen - 4) + data + b"\0" * (-len(data) % 4) + options


def double(src, name, point, which, seed, delay_ns=(300, 3000), copy_body=lambda body: body):
    """Writes `name`: `src` with every packet at `point` for which `which(frame bytes)` holds
    recorded again `delay_ns` later (a queue's delay: a random walk within that range, 1 us steps
    at most), its frame `copy_body(EPB body)`, in stamp order, and its truth with the frame numbers
    of the original packets in the new file. Returns (path, copies)."""
    cap = Capture(src)
    iface = cap.if_names.index(point)
    rnd = random.Random(seed)
    lo, hi = delay_ns
    delay = (lo + hi) // 2
    items = []  # (stamp, order, original frame or 0 for a copy, block)
    for i, p in enumerate(cap.packets):
        items.append((cap.stamp_ns(p), 2 * i, i + 1, p))
        data = p.body[20:]
        if cap.interface(p) == iface and which(data):
            q = Block(p.type, copy_body(p.body))
            delay = rnd.randint(lo, hi) if hi - lo <= 3000 else min(hi, max(lo, delay + rnd.randint(-1000, 1000)))
            cap.set_stamp_ns(q, cap.stamp_ns(p) + delay)
            items.append((cap.stamp_ns(q), 2 * i + 1, 0, q))
    # The source is in stamp order (--order time): the copies go in at their stamps.
    items.sort(key=lambda x: (x[0], x[1]))
    new_frame = {orig: k + 1 for k, (_, _, orig, _) in enumerate(items) if orig}
    out = os.path.join(tmp, name + ".pcapng")
    cap.write(out, [b for _, _, _, b in items])

    def renumber(v):
        if isinstance(v, dict):
            return {k: (new_frame.get(x, x) if (k.endswith("_frame") or k == "frame") and isinstance(x, int) else
                        renumber(x)) for k, x in v.items()}
        if isinstance(v, list):
            return [renumber(x) for x in v]
        return v

    with open(src.replace(".pcapng", ".truth.json")) as f:
        truth = json.load(f)
    with open(out.replace(".pcapng", ".truth.json"), "w") as f:
        json.dump(renumber(truth), f)
    return out, len(items) - len(cap.packets)


def checker(script, *args):
    p = subprocess.run([sys.executable, os.path.join(here, script), *args], capture_output=True, text=True,
                       timeout=900)
    last = p.stdout.strip().splitlines()[-1] if p.stdout.strip() else ""
    print(f"  {script}: {last}")
    if p.returncode != 0:
        problems.append(f"{script} {' '.join(map(os.path.basename, args[1:]))}:\n{p.stdout[-2500:]}{p.stderr[-1500:]}")


nvme = generate("nvme", "--scenario", "nvme-2point", "--seed", "41", "--ios", "150", "--loss", "0.02",
                "--order", "time")
flows = generate("flows", "--scenario", "write-flows", "--seed", "42", "--loss", "0.02", "--order", "time")
tagged = generate("tagged", "--scenario", "nvme-2point", "--seed", "45", "--ios", "150", "--loss", "0.02",
                  "--order", "time", "--vlan", "1", "--snaplen", "128")
cases = [double(nvme, "nvme_all", "leafA-gpu", lambda d: True, 1),
         double(nvme, "nvme_h2s", "leafA-gpu", host_to_storage, 2),
         double(flows, "flows_all", "leafA-gpu", lambda d: True, 3),
         # Ports further apart, or a switch that queues: copies beyond the 5 us window.
         double(nvme, "nvme_far", "leafA-gpu", lambda d: True, 4, (8000, 40000)),
         double(flows, "flows_far", "leafA-gpu", lambda d: True, 5, (8000, 25000)),
         # A tagged host port and an untagged uplink into one interface: each copy is 4 bytes
         # shorter than its original (and, snapped at 128, has 4 more payload bytes captured).
         double(tagged, "tagged_untagged", "leafA-gpu", lambda d: True, 6, copy_body=untagged)]
for path, copies in cases:
    p = run_cli(cli, "analyze", path, "--no-progress")
    want = f"mirror copies: {copies} copies of packets recorded more than once"
    if want not in p.stdout or "recorded twice at point leafA-gpu" not in p.stderr:
        problems.append(f"{os.path.basename(path)}: analyze must say '{want}' and warn: "
                        f"{p.stdout[:600]}\nstderr: {p.stderr[:400]}")
    if ("_far" in path) != ("window widened from 5 us" in p.stderr):
        problems.append(f"{os.path.basename(path)}: the point's window must widen exactly where copies come "
                        f"further apart than 5 us: {p.stderr[:500]}")
    # --mirror-copy-window 0: every copy counted, as a retransmission (the check is what mends it).
    off = run_cli(cli, "analyze", path, "--no-progress", "--mirror-copy-window", "0").stdout
    if "mirror copies" in off or off.split("retransmitted")[0] == p.stdout.split("retransmitted")[0]:
        problems.append(f"{os.path.basename(path)}: --mirror-copy-window 0 must count the copies")
print(f"{len(cases)} captures with a point that records packets twice ({', '.join(str(c) for _, c in cases)} copies)")
checker("test_cli_truth.py", cli, cases[0][0], cases[1][0], cases[3][0], cases[5][0])
checker("test_messages_truth.py", cli, *[c for c, _ in cases])
checker("test_tshark_truth.py", plugin, cases[0][0])
checker("test_tshark_truth.py", plugin, cases[3][0])
checker("test_tshark_messages.py", plugin, cases[2][0])
checker("test_tshark_messages.py", plugin, cases[4][0])


def header_counts(text):
    """(data packets, retransmitted, NAKs) of analyze's 'RDMA messages:' line."""
    m = re.search(r"RDMA messages: \d+ in \d+ flow-points, (\d+) data packets, (\d+) retransmitted, (\d+) NAK", text)
    return tuple(int(x) for x in m.groups()) if m else None


# Two or three points' packets written to one pcap file (microseconds; it has no interface
# names): one unnamed interface records every packet twice or three times. The host's port and
# its leaf's uplink are under a microsecond apart (copies within the 5 us window, or the same
# stamp); the host's port and the storage leaf's port 9-16 us apart (the window must widen). The data packets, resends and NAKs
# are those of the host's port alone (the same traffic captured plainly, which
# test_messages_truth holds to the truth), give or take the packets lost between the two points
# (seen once) and resends that came before their original's copy.
four = generate("four", "--scenario", "mixed", "--points", "4", "--seed", "44", "--order", "time")
cap = Capture(four)


def pcap_of(name, points):
    kept = os.path.join(tmp, name + ".pcapng")
    wanted = {cap.if_names.index(n) for n in points}
    cap.write(kept, [p for p in cap.packets if cap.interface(p) in wanted])
    out = kept.replace(".pcapng", ".pcap")
    subprocess.run(["editcap", "-F", "pcap", kept, out], check=True, capture_output=True)
    return out


plain = header_counts(run_cli(cli, "analyze", pcap_of("gpu", ["leafA-gpu"]), "--no-progress").stdout)
for name, points, widens in (("gpu_and_uplink", ["leafA-gpu", "leafA-up"], False),
                             ("gpu_and_storage_leaf", ["leafA-gpu", "leafB-stor"], True),
                             ("three_points", ["leafA-gpu", "leafA-up", "leafB-stor"], True)):
    p = run_cli(cli, "analyze", pcap_of(name, points), "--no-progress")
    merged = header_counts(p.stdout)
    times = "twice" if len(points) == 2 else f"{len(points)} times"
    if f"packets recorded {times} at point if0" not in p.stderr:
        problems.append(f"{name}.pcap: the warning must say the packets were recorded {times}: {p.stderr[:400]}")
    if widens != ("window widened from 5 us" in p.stderr) or not plain or not merged:
        problems.append(f"{name}.pcap: the window must {'' if widens else 'not '}widen: {p.stderr[:400]}\n"
                        f"{p.stdout[:400]}")
    elif not (abs(merged[0] - plain[0]) <= plain[0] // 50 and abs(merged[1] - plain[1]) <= max(3, plain[1] // 20)
              and abs(merged[2] - plain[2]) <= 1):
        problems.append(f"{name}.pcap: data packets, resends, NAKs {merged}, the host's port alone {plain}")
    else:
        print(f"{name}.pcap: {merged} (data packets, resends, NAKs), the host's port alone {plain}")

# No mirror, resends close behind their originals (go-back-N with 4% loss, IPv6 without IP IDs):
# nothing is taken for a copy, and the truth holds.
for name, args in (("lossy6", ["--scenario", "nvme-midstream", "--points", "3", "--ipv6", "--seed", "2",
                               "--loss", "0.04"]),
                   ("lossy_flows", ["--scenario", "write-flows", "--seed", "43", "--loss", "0.05", "--pmtu", "1024"]),
                   # A storage server's 64 KB WRITE resent at once 2 us after it (9 of its flow's 47
                   # packets at the compute leaf): counted only from the point's first twin on, they
                   # were half the flow's packets, and 8 resends were dropped as copies.
                   ("resent_write", ["--scenario", "nvme-midstream", "--ios", "60", "--clock-offset",
                                     "leafB-stor=-29635", "--routed", "--seed", "17053"]),
                   # Nearly every packet resent (go-back-N windows lost again and again, no IP ID):
                   # 80 % of the packets have an identical twin, as in a mirror, but not in its order.
                   ("resent_ipv6", ["--scenario", "write-flows", "--ipv6", "--loss", "0.05", "--pmtu", "1024",
                                    "--seed", "8"]),
                   # Go-back-N resending 8 of 10 data packets once, each 86 us after its original (the
                   # sender's pace): groups of two as a mirror's, and a point's window widened to 174 us
                   # (315 resends dropped as copies); the ACKs coming back were not doubled.
                   ("resent_at_one_delay", ["--scenario", "write-flows", "--flows", "3", "--messages", "11",
                                            "--ipv6", "--seed", "7109"]),
                   # Go-back-N resending 800 of a message's 847 packets, its duplicate requests
                   # re-acknowledged back to back (5 points, 512-byte MTU): groups of three, ACKs
                   # doubled too; but the points before leafB-stor recorded each packet as often.
                   ("resent_at_every_point", ["--scenario", "nvme-midstream", "--ios", "130", "--points", "5",
                                              "--clock-offset", "leafB-stor=872503", "--loss", "0.02", "--ipv6",
                                              "--order", "time", "--jitter-ns", "250", "--no-connect", "--pmtu", "512",
                                              "--seed", "1526"]),
                   # The same at one point, where no other point shows the repeats (8 % loss, IPv6,
                   # header-only snaps): 5,151 resends were dropped as copies of a mirror 174 us
                   # wide. The resends follow the receivers' NAKs; a mirror's copies follow their
                   # packets whatever the receiver says.
                   ("resent_at_one_point", ["--scenario", "write-flows", "--points", "1", "--loss", "0.08", "--ipv6",
                                            "--snaplen", "128", "--duration-s", "0.5", "--flows", "3", "--messages",
                                            "10", "--seed", "214"])):
    path = generate(name, *args)
    p = run_cli(cli, "analyze", path, "--no-progress")
    if "mirror copies" in p.stdout or "recorded twice" in p.stderr:
        problems.append(f"{name}: copies found in a capture without a mirror: {p.stderr[:300]}")
    checker("test_messages_truth.py", cli, path)

fail_if(problems, "mirror-copy problems")
print("OK: copies of a mirror counted once, the ground truth kept; resends without a mirror untouched")
