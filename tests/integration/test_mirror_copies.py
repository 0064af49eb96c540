# SPDX-License-Identifier: GPL-2.0-or-later
"""Mirror copies: one observation point that records packets twice, identical and a moment
apart, as a SPAN session of several ports into one interface does (a host's port and the uplink
its packets leave by) or a capture on Linux's "any" device with a VLAN over the physical
interface. The generator's captures are rewritten so that the compute leaf's interface records
every packet (or only the host-to-storage direction) a second time 0.3 to 3 us later; the
ground truth's frame numbers are moved to where the original packets land. The CLI and tshark
with the plugin must still equal the ground truth (no packet counted as retransmitted for its
copy) and say that they counted the copies once; captures whose go-back-N resends follow their
originals within microseconds (losses, no mirror) must not lose a packet to the check."""
import json
import os
import random
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


def double(src, name, point, which, seed):
    """Writes `name`: `src` with every packet at `point` for which `which(frame bytes)` holds
    recorded again 300-3000 ns later, in stamp order, and its truth with the frame numbers of the
    original packets in the new file. Returns (path, copies)."""
    cap = Capture(src)
    iface = cap.if_names.index(point)
    rnd = random.Random(seed)
    items = []  # (stamp, order, original frame or 0 for a copy, block)
    for i, p in enumerate(cap.packets):
        items.append((cap.stamp_ns(p), 2 * i, i + 1, p))
        data = p.body[20:]
        if cap.interface(p) == iface and which(data):
            q = Block(p.type, p.body)
            cap.set_stamp_ns(q, cap.stamp_ns(p) + rnd.randint(300, 3000))
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
cases = [double(nvme, "nvme_all", "leafA-gpu", lambda d: True, 1),
         double(nvme, "nvme_h2s", "leafA-gpu", host_to_storage, 2),
         double(flows, "flows_all", "leafA-gpu", lambda d: True, 3)]
for path, copies in cases:
    p = run_cli(cli, "analyze", path, "--no-progress")
    want = f"mirror copies: {copies} packets recorded twice"
    if want not in p.stdout or "recorded twice at point leafA-gpu" not in p.stderr:
        problems.append(f"{os.path.basename(path)}: analyze must say '{want}' and warn: "
                        f"{p.stdout[:600]}\nstderr: {p.stderr[:400]}")
    # --mirror-copy-window 0: every copy counted, as a retransmission (the check is what mends it).
    off = run_cli(cli, "analyze", path, "--no-progress", "--mirror-copy-window", "0").stdout
    if "mirror copies" in off or off.split("retransmitted")[0] == p.stdout.split("retransmitted")[0]:
        problems.append(f"{os.path.basename(path)}: --mirror-copy-window 0 must count the copies")
print(f"{len(cases)} captures with a point that records packets twice ({', '.join(str(c) for _, c in cases)} copies)")
checker("test_cli_truth.py", cli, cases[0][0], cases[1][0])
checker("test_messages_truth.py", cli, *[c for c, _ in cases])
checker("test_tshark_truth.py", plugin, cases[0][0])
checker("test_tshark_messages.py", plugin, cases[2][0])

# No mirror, resends close behind their originals (go-back-N with 4% loss, IPv6 without IP IDs):
# nothing is taken for a copy, and the truth holds.
for name, args in (("lossy6", ["--scenario", "nvme-midstream", "--points", "3", "--ipv6", "--seed", "2",
                               "--loss", "0.04"]),
                   ("lossy_flows", ["--scenario", "write-flows", "--seed", "43", "--loss", "0.05", "--pmtu", "1024"]),
                   # A storage server's 64 KB WRITE resent at once 2 us after it (9 of its flow's 47
                   # packets at the compute leaf): counted only from the point's first twin on, they
                   # were half the flow's packets, and 8 resends were dropped as copies.
                   ("resent_write", ["--scenario", "nvme-midstream", "--ios", "60", "--clock-offset",
                                     "leafB-stor=-29635", "--routed", "--seed", "17053"])):
    path = generate(name, *args)
    p = run_cli(cli, "analyze", path, "--no-progress")
    if "mirror copies" in p.stdout or "recorded twice" in p.stderr:
        problems.append(f"{name}: copies found in a capture without a mirror: {p.stderr[:300]}")
    checker("test_messages_truth.py", cli, path)

fail_if(problems, "mirror-copy problems")
print("OK: copies of a mirror counted once, the ground truth kept; resends without a mirror untouched")
