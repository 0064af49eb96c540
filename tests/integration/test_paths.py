# SPDX-License-Identifier: GPL-2.0-or-later
"""export paths (per flow and hop: packets, lost, delays), the analyze "Hops" section, and the
plugin's hop fields and -z rdmatel,hops table.

Expected values come from the generator's ground truth (rdmatel-synth --drop-between, truth
"hops": every copy it emitted followed through the points that recorded it) and, for the identity
of a retransmitted packet, from a capture this test writes by hand; never from rdmatel."""
import collections
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from pcapng_edit import Capture  # noqa: E402
from rdmatel_stats import num, parse_simple_tables  # noqa: E402
from rdmatel_testlib import Tshark, fail_if, load_truth, run_cli  # noqa: E402

cli, synth = sys.argv[1], sys.argv[2]
plugin = sys.argv[3] if len(sys.argv) > 3 else None
tmp = tempfile.mkdtemp(prefix="rdmatel_paths_")
problems = []


def generate(name, *args):
    out = os.path.join(tmp, name + ".pcapng")
    subprocess.run([synth, "--out", out, *args], check=True, capture_output=True, timeout=300)
    return out


def export_paths(cap, *extra):
    p = run_cli(cli, "export", "paths", cap, "--format", "jsonl", "--no-progress", *extra)
    return [json.loads(line) for line in p.stdout.splitlines() if line.strip()]


def key(r):
    return (r["src"], r["dst"], int(r["dst_qpn"]), r["from_point"], r["to_point"])


def us_to_ns(v):
    return round(float(v) * 1000)


def compare(label, truth_hops, got, shift=None):
    """Every hop of the truth in the export with the same packets, losses and delays (exact to
    the ns: the truth is the stamps' difference with the clock offsets taken off, as rdmatel's
    once it is given them; `shift(from, to)` turns it into the raw difference)."""
    want = {key(h): h for h in truth_hops}
    have = {key(r): r for r in got}
    for k in sorted(set(want) - set(have)):
        # A flow whose every packet was lost before B never shows rdmatel that B is on its path.
        if want[k]["delivered"] == 0 and want[k]["packets"] <= 2:
            continue
        problems.append(f"{label}: hop {k} missing from export paths (truth {want[k]})")
    for k in sorted(set(have) - set(want)):
        problems.append(f"{label}: hop {k} in export paths, not in the truth: {have[k]}")
    for k in sorted(set(want) & set(have)):
        w, g = want[k], have[k]
        for f in ("packets", "lost"):
            if int(g[f]) != w[f]:
                problems.append(f"{label}: {k} {f} {g[f]}, truth {w[f]}")
        if w["delivered"] == 0:
            if "avg_us" in g:
                problems.append(f"{label}: {k} has delays without a delivered packet")
            continue
        d = shift(k[3], k[4]) if shift else 0
        for f, tf, tol in (("min_us", "min_ns", 0), ("max_us", "max_ns", 0), ("avg_us", "avg_ns", 1)):
            if f not in g:
                problems.append(f"{label}: {k} {f} absent")
            elif abs(us_to_ns(g[f]) - (float(w[tf]) + d)) > tol + 0.5:
                problems.append(f"{label}: {k} {f} {g[f]}, truth {w[tf]} ns (+{d})")


# 1. Three points; packets dropped between the compute leaf and the spine (host -> storage
#    direction only) and between the spine and the storage leaf: losses on two hops, and the
#    transport's retransmissions are copies of their own.
cap3 = generate("drop3", "--scenario", "nvme-3point", "--seed", "11", "--ios", "300",
                "--drop-between", "leafA-gpu:spine1=0.03", "--drop-between", "spine1:leafB-stor=0.02")
truth3 = load_truth(cap3)
got3 = export_paths(cap3)
lost_truth = sum(h["lost"] for h in truth3["hops"])
packets_truth = sum(h["packets"] for h in truth3["hops"])
print(f"drop3: {len(truth3['hops'])} truth hops, {packets_truth} packets, {lost_truth} lost; "
      f"{len(got3)} exported, {sum(int(r['packets']) for r in got3)} packets, {sum(int(r['lost']) for r in got3)} lost")
if lost_truth < 20:
    problems.append(f"drop3: only {lost_truth} packets lost in the truth: the knob did not drop")
compare("drop3", truth3["hops"], got3)
for r in got3:
    if r.get("raw") is not True or "offset_applied_ns" in r:
        problems.append(f"drop3: {key(r)} without --clock-offset must be raw: {r}")
        break
# 1b. Harder conditions, each against its truth: GPU flows beside the NVMe traffic, dumpcap-like
#     file order, five points (two ports of each leaf), hosts behind both leaves (I/Os cross both
#     ways, so the engine's clock estimate mixes directions), a capture starting mid-stream over
#     IPv6 (no IP ID: resends are told apart by when they passed), two VLAN tags.
for name, args in (("mixed", ["--scenario", "mixed", "--points", "3", "--seed", "4"]),
                   ("blocks", ["--scenario", "nvme-3point", "--seed", "7", "--order", "blocks"]),
                   ("five", ["--scenario", "nvme-2point", "--points", "5", "--seed", "8",
                             "--drop-between", "leafA-up:spine1=0.03"]),
                   ("cross", ["--scenario", "nvme-3point", "--cross", "--seed", "9"]),
                   ("midstream6", ["--scenario", "nvme-midstream", "--points", "3", "--seed", "2", "--ipv6"]),
                   ("vlan6", ["--scenario", "nvme-3point", "--ipv6", "--vlan", "2", "--seed", "10"])):
    drop = [] if "--drop-between" in args else ["--drop-between", "leafA-gpu:spine1=0.02"]
    cap = generate(name, *args, *drop)
    compare(name, load_truth(cap)["hops"], export_paths(cap))

# 1b'. Hosts behind both leaves, five points, the storage-side uplink's clock 3.4 us behind: a
#     host behind leaf B passes its leaf port and the uplink 0.6 us apart, well within the offset.
#     The uplink's clock is related to its leaf port's within ns, though to the far end of the
#     path only within 10 us: ordering goes through the best-related points.
cap = generate("cross5", "--scenario", "mixed", "--points", "5", "--cross", "--routed", "--order", "time",
               "--seed", "7031", "--clock-offset", "leafB-up=-3414")
compare("cross5", load_truth(cap)["hops"], export_paths(cap),
        shift=lambda a, b: (-3414 if b == "leafB-up" else 0) - (-3414 if a == "leafB-up" else 0))

# 1b''. I/Os spread out (100 over 2 s): each one's packets follow a pause longer than the path
#      timeout, so a point's reorder buffer hands on a whole I/O at once. Packets seen at the first
#      point must still wait for their copies in the second point's batch: no loss in the truth
#      (--loss 0), none may be reported.
cap = generate("spread", "--scenario", "nvme-2point", "--points", "2", "--loss", "0", "--ios", "100",
               "--duration-s", "2", "--order", "time", "--jitter-ns", "0", "--seed", "9135")
compare("spread", load_truth(cap)["hops"], export_paths(cap))

# 1b'''. The storage leaf's clock 100 ms ahead (more than the path timeout), no offset given, over
#       a capture longer than it: a packet's copy at the storage leaf comes 100 ms of stamps later
#       in the input. The packets must wait for it (the clocks are related from such packets):
#       the truth's hops, raw (the offset is in the delays), no loss.
cap = generate("ahead", "--scenario", "nvme-2point", "--points", "2", "--loss", "0", "--ios", "200",
               "--duration-s", "1", "--clock-offset", "leafB-stor=100000000", "--seed", "9135")
compare("ahead", load_truth(cap)["hops"], export_paths(cap),
        shift=lambda a, b: (100000000 if b == "leafB-stor" else 0) - (100000000 if a == "leafB-stor" else 0))

# 1c. The bound on waiting packets: reached, it warns once and the run still succeeds.
p = run_cli(cli, "export", "paths", cap3, "--no-progress", "--max-path-packets", "50")
if p.stderr.count("--max-path-packets") != 1:
    problems.append(f"--max-path-packets 50: want one warning, stderr: {p.stderr[:300]}")

# 2. Clock offsets: the spine's clock 3 ms ahead, the storage leaf's 1.5 ms behind. Given the
#    same offsets, rdmatel's delays equal the truth's; without them they are raw: the truth
#    plus offset(B) - offset(A).
offsets = {"spine1": 3_000_000, "leafB-stor": -1_500_000}
cap_off = generate("offsets3", "--scenario", "nvme-3point", "--seed", "12", "--ios", "200",
                   "--drop-between", "leafA-gpu:spine1=0.02",
                   *[a for n, v in offsets.items() for a in ("--clock-offset", f"{n}={v}")])
truth_off = load_truth(cap_off)
# --clock-offset takes what to add to a point's stamps to get the reference clock: minus what the
# generator added.
given = [a for n, v in offsets.items() for a in ("--clock-offset", f"{n}={-v}")]
got_off = export_paths(cap_off, *given)
compare("offsets corrected", truth_off["hops"], got_off)
for r in got_off:
    want = offsets.get(r["from_point"], 0) - offsets.get(r["to_point"], 0)
    if r.get("raw") is not False or int(r.get("offset_applied_ns", 1 << 62)) != want:
        problems.append(f"offsets corrected: {key(r)} offset_applied_ns {r.get('offset_applied_ns')}, want {want}")
        break
got_raw = export_paths(cap_off)
compare("offsets raw", truth_off["hops"], got_raw, shift=lambda a, b: offsets.get(b, 0) - offsets.get(a, 0))

# 2b. --estimate-offsets: each hop's offset from its own copies both ways (data one way, ACKs
#     and responses the other). The generator's hops are symmetric but for per-packet variation
#     (0-300 ns) and serialisation, so the estimate is within 1 us of the truth, and the delays
#     with it.
got_est = export_paths(cap_off, "--estimate-offsets")
truth_hops = {key(h): h for h in truth_off["hops"]}
estimated = 0
for r in got_est:
    want = offsets.get(r["from_point"], 0) - offsets.get(r["to_point"], 0)
    if "offset_applied_ns" not in r:
        continue  # a hop crossed one way only (a flow's packets, never its peer's, at both points)
    estimated += 1
    t = truth_hops.get(key(r))
    if r.get("raw") or not r.get("offset_estimated") or abs(int(r["offset_applied_ns"]) - want) > 1000:
        problems.append(f"--estimate-offsets: {key(r)} offset_applied_ns {r.get('offset_applied_ns')} "
                        f"(estimated {r.get('offset_estimated')}), truth {want} ± 1000")
    elif t and "avg_us" in r and abs(us_to_ns(r["avg_us"]) - round(t["avg_ns"])) > 1000:
        problems.append(f"--estimate-offsets: {key(r)} avg {r['avg_us']} µs, truth {t['avg_ns']} ns ± 1000")
if estimated < len(got_est) // 2:
    problems.append(f"--estimate-offsets: only {estimated} of {len(got_est)} hops got an estimate")

# 2c. GPU traffic alone (no NVMe capsule), the spine's clock seconds off, hosts behind both leaves
#     in one case: the clocks are related from the RDMA packets' own copies (data one way, ACKs
#     the other, per pair of endpoints), so paths are laid in the right order and export offsets
#     reports every pair of points, each within its uncertainty of the truth.
for name, args, spine in (("gpu-ahead", ["--scenario", "write-flows", "--points", "3", "--seed", "5"], 2_000_000_000),
                          ("gpu-behind", ["--scenario", "write-flows", "--points", "5", "--seed", "6",
                                          "--order", "blocks", "--loss", "0.01"], -700_000_000),
                          ("mixed-cross", ["--scenario", "mixed", "--points", "3", "--cross", "--seed", "7"], 40_000)):
    cap = generate(name, *args, "--clock-offset", f"spine1={spine}")
    truth = load_truth(cap)
    compare(name, truth["hops"], export_paths(cap),
            shift=lambda a, b: (spine if b == "spine1" else 0) - (spine if a == "spine1" else 0))
    truth_offsets = {pt["name"]: pt.get("clock_offset_ns", 0) for pt in truth["points"]}
    recs = [json.loads(line) for line in
            run_cli(cli, "export", "offsets", cap, "--format", "jsonl", "--no-progress").stdout.splitlines()]
    n = len(truth_offsets)
    if len(recs) != n * (n - 1) // 2:
        problems.append(f"{name}: {len(recs)} offset records for {n} points: {recs}")
    for r in recs:
        want = truth_offsets[r["reference"]] - truth_offsets[r["point"]]
        if not r["both_directions"] or abs(int(r["offset_ns"]) - want) > int(r["uncertainty_ns"]) \
                or int(r["uncertainty_ns"]) > 20_000:
            problems.append(f"{name}: offset of {r['point']} to {r['reference']} {r['offset_ns']} ± "
                            f"{r['uncertainty_ns']} ns, truth {want}")
    # analyze does not rank raw delays that measure the clocks: it names the clocks, and ranks
    # the hops once --estimate-offsets corrects them. spine1 is on every hop of these flows.
    if name != "gpu-ahead":
        continue
    rep = run_cli(cli, "analyze", cap, "--no-progress").stdout.split("Hops (")[1].split("\n\n")[0]
    hops_n = len(truth["hops"])
    if "the clocks of spine1 and leafA-gpu differ by 2000000" not in rep.replace("leafA-gpu and spine1", "spine1 and leafA-gpu") \
            or f"{hops_n} flow-hops between them have raw delays" not in rep or "slowest hops" in rep:
        problems.append(f"{name}: analyze must name the clocks 2 s apart and rank no raw hop:\n{rep}")
    rep = run_cli(cli, "analyze", cap, "--no-progress", "--estimate-offsets").stdout.split("Hops (")[1].split("\n\n")[0]
    slow_rows = rep.split("slowest hops")[-1].split("lossiest")[0].splitlines()[2:] if "slowest hops" in rep else []
    worst = max(h["avg_ns"] for h in truth["hops"] if h["delivered"])
    if "differ by" in rep or not slow_rows or abs(float(slow_rows[0].split()[-2]) * 1000 - worst) > 1000:
        problems.append(f"{name}: with --estimate-offsets analyze must rank the hops (slowest {worst} ns):\n{rep}")
# 2d. A clock offset nobody gives (raw delays) with resent copies: a copy at B is matched to the
#     one at A by the hop's delay so far, on the same clocks; stamps of the two points are not
#     compared as if their clocks agreed (spine 31.7 us ahead: a resend 20-40 us later matched;
#     compute leaf 643 us behind: the engine's estimated offset counted twice). And losses of a
#     flow's first packets past the points it had shown so far.
for name, args in (("spine_ahead", ["--scenario", "nvme-2point", "--ios", "79", "--points", "4", "--clock-offset",
                                    "spine1=31739", "--loss", "0.01", "--vlan", "2", "--ipv6", "--order", "time",
                                    "--jitter-ns", "100", "--seed", "4008"]),
                   ("compute_behind", ["--scenario", "mixed", "--ios", "108", "--clock-offset", "leafA-gpu=-643007",
                                       "--routed", "--vlan", "1", "--ipv6", "--psn-wrap", "--seed", "4028"]),
                   ("compute_2us", ["--scenario", "nvme-3point", "--ios", "66", "--clock-offset", "leafA-gpu=2161",
                                    "--loss", "0.01", "--ipv6", "--order", "time", "--jitter-ns", "100", "--pmtu",
                                    "2048", "--seed", "4055"]),
                   # A flow's first packet lost after the last point its flow had shown then (the
                   # path grows with the next packet): lost on the hop after that point.
                   ("first_lost_mixed", ["--scenario", "mixed", "--ios", "72", "--points", "4", "--clock-offset",
                                         "leafA-gpu=-85989730", "--loss", "0.01", "--order", "time", "--jitter-ns",
                                         "0", "--snaplen", "256", "--pmtu", "1024", "--seed", "6021"]),
                   ("first_lost_gpu", ["--scenario", "write-flows", "--flows", "3", "--messages", "12", "--points",
                                       "4", "--loss", "0.02", "--jitter-ns", "0", "--seed", "2040"]),
                   # A storage server's ACK repeated 103 ns apart, both delivered, on a hop whose
                   # delays spread over 800 ns: paired in stamp order, not crossed by the average.
                   # Two ports of each leaf 300-900 ns apart, stamps +-250 ns: some copies are
                   # stamped at the second port first (delays down to -155 ns), none lost.
                   ("jitter_past_the_hop", ["--scenario", "nvme-2point", "--ios", "131", "--points", "4", "--routed",
                                            "--loss", "0", "--order", "time", "--jitter-ns", "250", "--seed", "7002"]),
                   # Two ports of a leaf 300-600 ns apart, one of them with its clock 11 us (180 us)
                   # off, stamps +-400 ns: the offset estimate is less exact than the ports are
                   # apart, so only the flows' samples both ways tell which port comes first (the
                   # hops were laid the wrong way round, raw -12 us and +180 us).
                   ("ports_apart_offset_11us", ["--scenario", "nvme-2point", "--ios", "144", "--points", "4",
                                                "--clock-offset", "leafA-gpu=11354", "--loss", "0", "--jitter-ns",
                                                "400", "--seed", "11039"]),
                   ("ports_apart_offset_180us", ["--scenario", "nvme-midstream", "--ios", "69", "--points", "5",
                                                 "--clock-offset", "leafB-up=179889", "--loss", "0", "--vlan", "0",
                                                 "--jitter-ns", "400", "--seed", "11004"]),
                   # Four identical ACKs repeated 150-350 ns apart, stamped +-250 ns at both points:
                   # stamps cross them, each point's capture order does not (min delay 13.751 us,
                   # truth 13.696).
                   ("acks_repeated_jittered", ["--scenario", "nvme-2point", "--ios", "97", "--routed", "--loss",
                                               "0.03", "--ipv6", "--order", "time", "--jitter-ns", "250", "--seed",
                                               "14028"]),
                   # Two uplinks' clocks 2 us and 10 us off (no --clock-offset), stamps +-250 ns: the
                   # estimated offset between the storage leaf's ports is less exact than their
                   # directions' overlap shows; within that slack a copy seen at both is still one
                   # (it was lost on leafB-up -> leafB-stor and seen on spine1 -> leafB-stor).
                   ("offsets_under_jitter", ["--scenario", "nvme-midstream", "--ios", "103", "--points", "5",
                                             "--clock-offset", "leafB-up=-1933", "--clock-offset", "leafA-up=-9818",
                                             "--routed", "--loss", "0.01", "--jitter-ns", "250", "--seed", "15035"]),
                   ("acks_back_to_back", ["--scenario", "nvme-midstream", "--ios", "67", "--clock-offset",
                                          "leafB-stor=18947595", "--order", "blocks", "--snaplen", "256", "--seed",
                                          "7026"])):
    cap = generate(name, *args)
    t = load_truth(cap)
    offs = {p["name"]: p.get("clock_offset_ns", 0) for p in t["points"]}
    if name == "jitter_past_the_hop" or name.startswith("ports_apart"):
        if not any(h["delivered"] and h["min_ns"] < 0 for h in t["hops"]):
            problems.append(f"{name}: no copy stamped at the next port first: the case proves nothing")
    elif not any(h["delivered"] and h["packets"] > h["delivered"] for h in t["hops"]):
        problems.append(f"{name}: no hop with a lost and resent copy: the case proves nothing")
    compare(name, t["hops"], export_paths(cap), shift=lambda a, b, o=offs: o.get(b, 0) - o.get(a, 0))

# 2e. Two sniffers, one per point, with clocks 1.35 s apart, their files given together (the
#     session merges them by stamp, as mergecap would): every packet's copy comes 1.35 s of input
#     after it. Nothing is settled before the clocks are related (it counted the first 20 packets
#     of every flow lost, 201 of 1,284), and the hops equal the truth.
cap = generate("two_sniffers", "--scenario", "nvme-2point", "--ios", "79", "--clock-offset", "leafA-gpu=-1346963756",
               "--vlan", "2", "--ipv6", "--order", "time", "--seed", "7045")
t = load_truth(cap)
offs = {p["name"]: p.get("clock_offset_ns", 0) for p in t["points"]}
whole = Capture(cap)
files = []
for i, name in enumerate(whole.if_names):
    files.append(os.path.join(tmp, f"sniffer_{name}.pcapng"))
    whole.write(files[-1], [pk for pk in whole.packets if Capture.interface(pk) == i])
for label, inputs in (("two_sniffers (merged file)", [cap]), ("two_sniffers (one file per point)", files)):
    compare(label, t["hops"], export_paths(*inputs), shift=lambda a, b, o=offs: o.get(b, 0) - o.get(a, 0))
# The storage sniffer's clock 2 s ahead or behind, over 3 s of traffic: its first packet comes 2 s
# of capture after the other's first (it was waited for 1 s only: 762 false losses of 7,622).
for sign in ("", "-"):
    cap = generate(f"two_sniffers_{sign}2s", "--scenario", "nvme-2point", "--points", "2", "--clock-offset",
                   f"leafB-stor={sign}2000000000", "--order", "time", "--ios", "600", "--duration-s", "3", "--loss",
                   "0", "--seed", "9135")
    t = load_truth(cap)
    offs = {p["name"]: p.get("clock_offset_ns", 0) for p in t["points"]}
    compare(f"two_sniffers_{sign}2s", t["hops"], export_paths(cap), shift=lambda a, b, o=offs: o.get(b, 0) - o.get(a, 0))

# 2f. One packet resent for 11 ms (go-back-N at 3 % loss per link, 512-byte MTU, 5 points): its
#     copies were settled a path timeout after its first sighting, splitting copies in flight
#     from their sightings before (1,965 false losses on a leaf's two ports), and two ports of a
#     leaf were matched as loosely as each is related to the far end (µs). Each hop's losses
#     equal the truth's, and so do its packets: the generator stamps some repeated ACKs at the same
#     nanosecond (noise of +-N ns over copies 100 ns apart), which were taken for one frame given
#     twice (one packet short on a hop).
cap = generate("resend_storm", "--scenario", "nvme-2point", "--ios", "74", "--points", "5", "--clock-offset",
               "spine1=42267", "--routed", "--cross", "--loss", "0.03", "--vlan", "2", "--ipv6", "--order", "blocks",
               "--pmtu", "512", "--seed", "8026")
t = load_truth(cap)
have = {key(r): r for r in export_paths(cap)}
for h in t["hops"]:
    r = have.get(key(h))
    if r is None or int(r["lost"]) != h["lost"] or int(r["packets"]) != h["packets"]:
        problems.append(f"resend_storm: {key(h)} packets / lost {None if r is None else (r['packets'], r['lost'])}, "
                        f"truth {h['packets']} / {h['lost']}")
if not any(h["lost"] for h in t["hops"]):
    problems.append("resend_storm: no lost copy in the truth: the case proves nothing")

# 2g. Ring files of a capture written in dumpcap-like blocks (a point's packets in runs), given
#     together: the session merges them by stamp, so frame numbers keep a point's order only within
#     a file. Copies resent 100 us apart pair by stamp (pairing them by frame crossed them: hop
#     delays from -121 us to +102 us); the ring's hops equal the single file's and the truth's.
cap = generate("ring_blocks", "--scenario", "nvme-3point", "--ios", "97", "--loss", "0.01", "--ipv6", "--jitter-ns",
               "100", "--no-connect", "--seed", "15008")
ring_dir = os.path.join(tmp, "ring_blocks")
os.makedirs(ring_dir)
subprocess.run(["editcap", "-c", "884", cap, os.path.join(ring_dir, "r.pcapng")], check=True, capture_output=True)
ring_files = sorted(os.path.join(ring_dir, f) for f in os.listdir(ring_dir))
if len(ring_files) < 3:
    problems.append(f"ring_blocks: editcap wrote {len(ring_files)} files: the case proves nothing")
t = load_truth(cap)
strip = lambda rs: sorted(json.dumps({k: v for k, v in r.items() if k != "first_frame"}, sort_keys=True) for r in rs)
single = export_paths(cap)
compare("ring_blocks", t["hops"], single)
if strip(export_paths(*ring_files)) != strip(single):
    problems.append("ring_blocks: the ring files' hops differ from the single file's")

# 2h. A host's NAK repeated in bursts of 5-8 copies 100 ns apart, hundreds of times over 10 ms
#     (go-back-N at 3 % loss, 512-byte MTU, 5 points), some copies lost: no copy overtakes another
#     on a link, so each burst pairs in order (matched one sighting at a time by the nearest delay,
#     copies crossed: a hop's max delay 1.518 us, truth 1.193). Packets, losses, min and max delay
#     of every hop equal the truth's (copies the generator stamps at the same nanosecond are two
#     frames of one capture, not one given twice).
cap = generate("nak_bursts", "--scenario", "nvme-3point", "--ios", "80", "--points", "5", "--routed", "--loss", "0.03",
               "--ipv6", "--order", "blocks", "--psn-wrap", "--pmtu", "512", "--seed", "16053")
have = {key(r): r for r in export_paths(cap)}
for h in load_truth(cap)["hops"]:
    r = have.get(key(h))
    if h["delivered"] and (r is None or us_to_ns(r["min_us"]) != h["min_ns"] or us_to_ns(r["max_us"]) != h["max_ns"]):
        problems.append(f"nak_bursts: {key(h)} delays {None if r is None else (r['min_us'], r['max_us'])} us, "
                        f"truth {h['min_ns']} .. {h['max_ns']} ns")
    if r is not None and (int(r["packets"]), int(r["lost"])) != (h["packets"], h["lost"]):
        problems.append(f"nak_bursts: {key(h)} packets / lost {r['packets']} / {r['lost']}, "
                        f"truth {h['packets']} / {h['lost']}")

# 2h'. Identical ACKs (IPv6: no IP ID tells them apart) resent back to back, one of a burst lost
#      between a leaf's uplink and the spine (probe_combos seed 1367): which copy was lost shows
#      only in the delays. The alignment that left one delay 765 ns off (summed misfits, smaller
#      than the right pairs' two of 489 and 547 ns) gave the hop a max of 3.259 us against the
#      truth's 2.858 and an average 10 ns off. Every hop equals the truth.
cap = generate("ack_burst_v6", "--scenario", "nvme-2point", "--ios", "133", "--points", "4", "--clock-offset",
               "leafB-stor=9945", "--loss", "0.03", "--vlan", "1", "--ipv6", "--snaplen", "256", "--seed", "1367")
t = load_truth(cap)
offs = {p["name"]: p.get("clock_offset_ns", 0) for p in t["points"]}
compare("ack_burst_v6", t["hops"], export_paths(cap), shift=lambda a, b, o=offs: o.get(b, 0) - o.get(a, 0))

# 2h''. CNPs (no PSN; IPv6: no IP ID either, so every CNP of a flow has one identity) with a capture
#       that begins mid-stream (probe_combos seed 1971): the capture's first frame is a CNP at the
#       compute leaf whose copies at spine1 and the storage leaf passed before they were capturing.
#       Taken for one packet with the next CNP there, 2.28 ms later, it related the clocks the wrong
#       way round: the two hosts' flows were laid spine1 -> leafA-gpu -> leafB-stor (12 hops missing,
#       12 not in the truth). Every hop equals the truth (no clock offset: raw delays are the truth's).
cap = generate("cnp_midstream", "--scenario", "nvme-midstream", "--ios", "69", "--points", "3", "--hosts", "3",
               "--storages", "1", "--queues", "2", "--ecn-mark", "leafA-gpu:spine1=0.5", "--seed", "1971")
t = load_truth(cap)
cnps = collections.defaultdict(dict)
for c in t["congestion"]:
    if c["kind"] == "ecn":
        cnps[(c["src"], c["dst"], c["dst_qpn"])][c["point"]] = c["cnp_packets"]
if not any(n.get("leafA-gpu", 0) > n.get("leafB-stor", 0) for n in cnps.values()):
    problems.append("cnp_midstream: no CNP seen at the compute leaf only: the case proves nothing")
compare("cnp_midstream", t["hops"], export_paths(cap))

# 2i. A direction black-holed: every packet from the compute side to the GPU leaf B lost (two
#     points: none reaches B; three: none gets past the spine). The lost flows' own packets never
#     show where they were going; the other flows' paths do (the reverse flows start at B). Every
#     truth hop of a flow whose endpoints delivered packets show is exported with the truth's
#     packets and losses, the lost flows' hops flagged path_inferred, the others not; a flow whose
#     destination no packet ever reached or left (nothing shows where it is) has no hop. The
#     analyze report marks the inferred hops.
blackholed = {}
for name, args in (("blackhole2", ["--scenario", "write-flows", "--points", "2", "--seed", "3",
                                   "--drop-between", "leafA-gpu:leafB-gpu=1.0"]),
                   ("blackhole3", ["--scenario", "write-flows", "--points", "3", "--seed", "3",
                                   "--drop-between", "spine1:leafB-gpu=1.0"])):
    cap = generate(name, *args)
    blackholed[name] = cap
    hops = load_truth(cap)["hops"]
    # Where an endpoint is shows from a packet of its that reached a second point, or one to it
    # that reached it (a flow none of whose hops lost everything).
    black = {(h["src"], h["dst"], h["dst_qpn"]) for h in hops if h["delivered"] == 0}
    seen_ips = {h["src"] for h in hops if h["delivered"]} | {
        h["dst"] for h in hops if h["delivered"] and (h["src"], h["dst"], h["dst_qpn"]) not in black}
    have = {key(r): r for r in export_paths(cap)}
    want = {key(h): h for h in hops if h["delivered"] or (h["src"] in seen_ips and h["dst"] in seen_ips)}
    inferred = 0
    for k, h in want.items():
        r = have.get(k)
        if r is None or (int(r["packets"]), int(r["lost"])) != (h["packets"], h["lost"]):
            problems.append(f"{name}: {k} {None if r is None else (r['packets'], r['lost'])}, "
                            f"truth {h['packets']} / {h['lost']}")
            continue
        if r.get("path_inferred") is not (h["delivered"] == 0):
            problems.append(f"{name}: {k} path_inferred {r.get('path_inferred')}, delivered {h['delivered']}")
        inferred += h["delivered"] == 0
    for k in set(have) - set(want):
        problems.append(f"{name}: hop {k} exported, not in the truth or its path unknowable: {have[k]}")
    if inferred < 3:
        problems.append(f"{name}: only {inferred} black-holed flow-hops in the truth: the case proves nothing")
    if not any(h["delivered"] == 0 and h["dst"] not in seen_ips for h in hops):
        problems.append(f"{name}: no flow to an endpoint nothing shows: the unknowable case is not covered")
    rep = run_cli(cli, "analyze", cap, "--no-progress").stdout
    if f"~ {inferred} flow-hops of flows none of whose packets reached a second point" not in rep or "~ " not in rep.split(
            "lossiest hops", 1)[-1]:
        problems.append(f"{name}: analyze does not mark the {inferred} inferred hops:\n{rep[-3000:]}")
    # The links table: every flow of a point pair together, the truth's sums, the black hole first.
    links = {}
    for h in want.values():
        l = links.setdefault((h["from_point"], h["to_point"]), [0, 0, 0, False])
        l[0] += 1
        l[1] += h["packets"]
        l[2] += h["lost"]
        l[3] |= h["delivered"] == 0
    table = rep.split("  links (every flow from one point to the next, lossiest first)\n", 1)[-1].split("  slowest")[0]
    rows = [ln.split() for ln in table.splitlines()[1:] if ln.strip()]
    got_links = {(r[0], r[1].rstrip("~")): [int(r[2]), int(r[3]), int(r[4]), r[1].endswith("~")] for r in rows}
    if got_links != links:
        problems.append(f"{name}: analyze links {got_links}, truth {links}")
    elif not rows or not rows[0][1].endswith("~") or rows[0][5] != "100.000%":
        problems.append(f"{name}: the black-holed link is not first in analyze's links: {rows}")
    else:
        # Said before the tables, with the truth's numbers.
        (a, b), (flows, packets, lost, _) = max(links.items(), key=lambda kv: kv[1][2] / kv[1][1])
        want_line = f"  {a} -> {b} loses 100.0 % of its packets: {lost} of {packets}, {flows} flows (~ path inferred"
        head = rep.split("RDMA flows: top by bytes")[0]
        if "Where packets are lost" not in head or want_line not in head:
            problems.append(f"{name}: analyze does not say first {want_line!r}:\n{head[-1500:]}")

# 3. The analyze report: a Hops section naming the lossy hop; none with one point.
rep = run_cli(cli, "analyze", cap3, "--no-progress").stdout
if "Hops (" not in rep or "lossiest hops" not in rep:
    problems.append("analyze: no Hops section with its lossiest hops on a 3-point capture")
cap1 = generate("one", "--scenario", "nvme-1point", "--seed", "3", "--ios", "50")
if "Hops (" in run_cli(cli, "analyze", cap1, "--no-progress").stdout:
    problems.append("analyze: a Hops section on a single-point capture")
if export_paths(cap1):
    problems.append("export paths: records on a single-point capture")

# 4. Identity across a retransmission, by hand. Points p1 and p2 (same clock). PSN 5 of a WRITE
#    passes p1 at 100 µs and never reaches p2; its resend passes p1 at 300 µs and p2 at 302.5 µs.
#    PSN 6 passes p1 at 110 µs, p2 at 114 µs; PSN 7 twice at p1 (a duplicate: identical bytes,
#    dropped) and at p2 4 µs later.
#    Hop p1 -> p2: packets 4 (PSN 5 twice, 6, 7), lost 1 (the first PSN 5), delays 4, 2.5 and
#    4 µs: min 2.5, avg 3.5, max 4.
T0 = 1_800_000_000_000_000_000
US = 1000


def block(btype, body):
    body += b"\0" * (-len(body) % 4)
    return struct.pack("<II", btype, 12 + len(body)) + body + struct.pack("<I", 12 + len(body))


def write_only(psn, ip_id):
    reth = struct.pack(">QII", 0x1000, 0x77, 64)
    bth = struct.pack(">BBHII", 0x0A, 0, 0xFFFF, 0x123, psn)
    l4 = bth + reth + b"\xab" * 64 + b"\0" * 4
    udp = struct.pack(">HHHH", 0xC000, 4791, 8 + len(l4), 0) + l4
    ip = struct.pack(">BBHHHBBH4s4s", 0x45, 2, 20 + len(udp), ip_id, 0x4000, 64, 17, 0,
                     bytes([10, 7, 0, 1]), bytes([10, 7, 1, 1])) + udp
    return b"\x02\0\0\0\0\x02\x02\0\0\0\0\x01\x08\x00" + ip


# IPv4 ID 0 (as many RDMA NICs send): the resend is told from the original only by when it passed.
frames = [(0, 100 * US, write_only(5, 0)), (0, 110 * US, write_only(6, 0)), (1, 114 * US, write_only(6, 0)),
          (0, 120 * US, write_only(7, 0)), (0, 120 * US, write_only(7, 0)), (1, 124 * US, write_only(7, 0)),
          (0, 300 * US, write_only(5, 0)), (1, 302500, write_only(5, 0))]
frames.sort(key=lambda f: f[1])
hand = os.path.join(tmp, "retrans.pcapng")
with open(hand, "wb") as f:
    f.write(block(0x0A0D0D0A, struct.pack("<IHHq", 0x1A2B3C4D, 1, 0, -1)))
    for name in (b"p1", b"p2"):
        f.write(block(1, struct.pack("<HHI", 1, 0, 65535) + struct.pack("<HH", 2, len(name)) + name + b"\0\0" +
                      struct.pack("<HH", 9, 1) + b"\x09\0\0\0" + b"\0\0\0\0"))
    for iface, ts, data in frames:
        t = T0 + ts
        f.write(block(6, struct.pack("<IIIII", iface, t >> 32, t & 0xFFFFFFFF, len(data), len(data)) + data))
# Frame numbers in file order: 1 p1 PSN5, 2 p1 PSN6, 3 p2 PSN6, 4-5 p1 PSN7 (copy), 6 p2 PSN7,
# 7 p1 PSN5 resend, 8 p2 PSN5 resend.
hand_rec = export_paths(hand)
want = [{"from_point": "p1", "to_point": "p2", "packets": 3 + 1, "lost": 1, "min_us": 2.5, "avg_us": 3.5,
         "max_us": 4.0, "first_frame": 1}]
got = [{k: r.get(k) for k in want[0]} for r in hand_rec]
if got != want:
    problems.append(f"retransmission: export paths {hand_rec}, want {want}")
want_fields = {3: ("2", 4.0, ""), 6: ("4", 4.0, ""), 8: ("7", 2.5, ""), 1: ("", None, "1")}

# 4b. Inferred paths by hand. Points p1 (host X's port), p2 (X's leaf uplink), p3 (host Z's port),
#     one clock. X -> Z passes p1, p2, p3; X -> W (behind a leaf not captured) p1, p2; Y (on X's
#     leaf, its port not captured) -> Z p2, p3. X -> Y (two hosts of one leaf) is seen at p1 only,
#     and Y acknowledges it: delivered a way the capture does not see, no hop (Y's point would be
#     p2 and a path p1 -> p2 is seen, but an answered flow is never taken for lost). A second
#     queue pair X -> Z is seen at p1 only and never answered: lost on p1 -> p2, the path of the
#     first one, inferred.
def roce_frame(src, dst, opcode, qpn, psn, ext=b"", payload=b""):
    l4 = struct.pack(">BBHII", opcode, 0, 0xFFFF, qpn, psn) + ext + payload + b"\0" * 4
    udp = struct.pack(">HHHH", 0xC000, 4791, 8 + len(l4), 0) + l4
    ip = struct.pack(">BBHHHBBH4s4s", 0x45, 2, 20 + len(udp), 0, 0x4000, 64, 17, 0, bytes(src), bytes(dst)) + udp
    return b"\x02\0\0\0\0\x02\x02\0\0\0\0\x01\x08\x00" + ip


X, Y, Z, W = [10, 7, 0, 1], [10, 7, 0, 2], [10, 7, 2, 1], [10, 7, 3, 1]
inf_frames = []
for i in range(8):
    t = 1000 * US + i * 10 * US
    write = lambda a, b, q: roce_frame(a, b, 0x0A, q, i, struct.pack(">QII", 0x1000, 0x77, 64), b"\xab" * 64)
    inf_frames += [(0, t, write(X, Z, 0x100)), (1, t + 2 * US, write(X, Z, 0x100)), (2, t + 4 * US, write(X, Z, 0x100))]
    inf_frames += [(0, t + 1 * US, write(X, W, 0x200)), (1, t + 3 * US, write(X, W, 0x200))]
    inf_frames += [(1, t + 5 * US, write(Y, Z, 0x300)), (2, t + 7 * US, write(Y, Z, 0x300))]
    inf_frames += [(0, t + 6 * US, write(X, Y, 0x400)),
                   (0, t + 8 * US, roce_frame(Y, X, 0x11, 0x401, i, struct.pack(">I", i + 1)))]
    inf_frames += [(0, t + 9 * US, write(X, Z, 0x500))]
inf_frames.sort(key=lambda f: f[1])
inf_cap = os.path.join(tmp, "inferred.pcapng")
with open(inf_cap, "wb") as f:
    f.write(block(0x0A0D0D0A, struct.pack("<IHHq", 0x1A2B3C4D, 1, 0, -1)))
    for name in (b"p1", b"p2", b"p3"):
        f.write(block(1, struct.pack("<HHI", 1, 0, 65535) + struct.pack("<HH", 2, len(name)) + name + b"\0\0" +
                      struct.pack("<HH", 9, 1) + b"\x09\0\0\0" + b"\0\0\0\0"))
    for iface, ts, data in inf_frames:
        t = T0 + ts
        f.write(block(6, struct.pack("<IIIII", iface, t >> 32, t & 0xFFFFFFFF, len(data), len(data)) + data))
got = {(r["src"], r["dst"], int(r["dst_qpn"]), r["from_point"], r["to_point"]):
       (int(r["packets"]), int(r["lost"]), r.get("path_inferred")) for r in export_paths(inf_cap)}
want = {("10.7.0.1", "10.7.2.1", 0x100, "p1", "p2"): (8, 0, False), ("10.7.0.1", "10.7.2.1", 0x100, "p2", "p3"): (8, 0, False),
        ("10.7.0.1", "10.7.3.1", 0x200, "p1", "p2"): (8, 0, False), ("10.7.0.2", "10.7.2.1", 0x300, "p2", "p3"): (8, 0, False),
        ("10.7.0.1", "10.7.2.1", 0x500, "p1", "p2"): (8, 8, True)}
if got != want:
    problems.append(f"inferred paths by hand: export paths {got}, want {want}")

# 5. The plugin: per-frame fields aggregated per hop equal export paths, and so does -z rdmatel,hops.
if plugin and shutil.which("tshark"):
    ts = Tshark(plugin)
    try:
        rows = ts.fields(hand, ["frame.number", "rdmatel.hop.prev_frame", "rdmatel.hop.delay", "rdmatel.hop.lost"])
        seen = {}
        for r in rows:
            n = int(r["frame.number"])
            d = float(r["rdmatel.hop.delay"]) if r["rdmatel.hop.delay"] else None
            lost = "1" if r["rdmatel.hop.lost"] in ("1", "True") else ""
            if r["rdmatel.hop.prev_frame"] or d is not None or lost:
                seen[n] = (r["rdmatel.hop.prev_frame"], d, lost)
        if seen != want_fields:
            problems.append(f"tshark hop fields on the hand capture: {seen}, want {want_fields}")

        fields = ["frame.number", "rdmatel.point", "ip.src", "ip.dst", "infiniband.bth.destqp",
                  "rdmatel.hop.prev_frame", "rdmatel.hop.delay", "rdmatel.hop.lost"]
        rows = ts.fields(cap3, fields)
        point_of = {int(r["frame.number"]): r["rdmatel.point"] for r in rows}
        agg = collections.defaultdict(lambda: {"n": 0, "min": None, "max": None, "sum": 0, "lost": 0})
        lost_at = collections.Counter()
        for r in rows:
            flow = (r["ip.src"], r["ip.dst"], int(r["infiniband.bth.destqp"], 0) if r["infiniband.bth.destqp"] else 0)
            if r["rdmatel.hop.delay"]:
                d = round(float(r["rdmatel.hop.delay"]) * 1000)
                a = agg[flow + (point_of[int(r["rdmatel.hop.prev_frame"])], r["rdmatel.point"])]
                a["n"] += 1
                a["sum"] += d
                a["min"] = d if a["min"] is None else min(a["min"], d)
                a["max"] = d if a["max"] is None else max(a["max"], d)
            if r["rdmatel.hop.lost"] in ("1", "True"):
                lost_at[flow + (r["rdmatel.point"],)] += 1
        bad = 0
        lost_cli = collections.Counter()
        for r in got3:
            k = key(r)
            if not r.get("path_inferred"):  # an inferred hop marks no frame
                lost_cli[k[:4]] += int(r["lost"])
            delivered = int(r["packets"]) - int(r["lost"])
            a = agg.get(k)
            if not delivered:
                continue
            if (not a or a["n"] != delivered or a["min"] != us_to_ns(r["min_us"]) or a["max"] != us_to_ns(r["max_us"])
                    or abs(a["sum"] / a["n"] - us_to_ns(r["avg_us"])) > 0.5):
                bad += 1
                if bad <= 3:
                    problems.append(f"tshark hop fields vs export paths: {k}: {a} vs {r}")
        if sum(a["n"] for a in agg.values()) != sum(int(r["packets"]) - int(r["lost"]) for r in got3):
            problems.append("tshark: hop delays on a different number of frames than export paths delivered")
        if +lost_at != +lost_cli:
            problems.append(f"tshark rdmatel.hop.lost per flow and point {dict(lost_at)} != export paths {dict(lost_cli)}")

        # With the clock offsets given as a preference, the delays equal the CLI's corrected ones.
        pref = "rdmatel.clock_offsets:" + ",".join(f"{n}={-v}" for n, v in offsets.items())
        rows = ts.fields(cap_off, ["rdmatel.hop.delay", "rdmatel.hop.raw"], "rdmatel.hop.delay", extra=("-o", pref))
        tshark_sum = sum(round(float(r["rdmatel.hop.delay"]) * 1000) for r in rows)
        cli_sum = sum(us_to_ns(r["avg_us"]) * (int(r["packets"]) - int(r["lost"])) for r in got_off if "avg_us" in r)
        delivered = sum(int(r["packets"]) - int(r["lost"]) for r in got_off)
        if len(rows) != delivered or abs(tshark_sum - cli_sum) > delivered or any(r["rdmatel.hop.raw"] for r in rows):
            problems.append(f"tshark -o {pref}: {len(rows)} hop delays summing to {tshark_sum} ns, "
                            f"export paths --clock-offset {delivered} summing to about {cli_sum}")

        out = ts.run("-2", "-q", "-r", ts.stage(cap3), "-z", "rdmatel,hops").stdout
        tables = parse_simple_tables(out)
        title = next((t for t in tables if "Hops" in t), None)
        if not title:
            problems.append(f"-z rdmatel,hops: no table in {out[:500]}")
        else:
            header, trows = tables[title]
            zrows = {}
            for row in trows:
                c = dict(zip(header, row))
                zrows[(c["Source"], c["Destination"], int(c["Dest QPN"], 16), c["From point"], c["To point"])] = c
            if set(zrows) != {key(r) for r in got3}:
                problems.append(f"-z rdmatel,hops: {len(zrows)} rows, export paths {len(got3)}")
            for r in got3:
                c = zrows.get(key(r))
                if not c:
                    continue
                same = int(c["Packets"]) == int(r["packets"]) and int(c["Lost"]) == int(r["lost"])
                for col, f in (("Delay min (µs)", "min_us"), ("Delay avg (µs)", "avg_us"), ("Delay max (µs)", "max_us")):
                    v = num(c[col])
                    same = same and ((f not in r and v != v) or (f in r and abs(v - float(r[f])) < 0.0006))
                if not same:
                    problems.append(f"-z rdmatel,hops row {c} != export paths {r}")
                    break

        # The black-holed direction in the plugin's table: the same rows as export paths, the
        # inferred ones saying so.
        for name, cap in blackholed.items():
            out = ts.run("-2", "-q", "-r", ts.stage(cap), "-z", "rdmatel,hops").stdout
            title = next((t for t in parse_simple_tables(out) if "Hops" in t), None)
            if not title:
                problems.append(f"{name}: -z rdmatel,hops: no table in {out[:500]}")
                continue
            header, trows = parse_simple_tables(out)[title]
            zrows = {}
            for row in trows:
                c = dict(zip(header, row))
                zrows[(c["Source"], c["Destination"], int(c["Dest QPN"], 16), c["From point"], c["To point"])] = c
            want = {key(r): r for r in export_paths(cap)}
            if set(zrows) != set(want):
                problems.append(f"{name}: -z rdmatel,hops rows {sorted(zrows)} != export paths {sorted(want)}")
            for k, r in want.items():
                c = zrows.get(k)
                if c and (int(c["Lost"]) != int(r["lost"]) or (c["Path"] == "inferred") != bool(r.get("path_inferred"))):
                    problems.append(f"{name}: -z rdmatel,hops row {c} != export paths {r}")
    finally:
        ts.close()
else:
    print("no plugin or tshark: the Wireshark checks are skipped")

shutil.rmtree(tmp, ignore_errors=True)
fail_if(problems, "path problems", 30)
print("paths: export paths equals the generator's truth; tshark equals the CLI")
