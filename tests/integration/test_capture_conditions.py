# SPDX-License-Identifier: GPL-2.0-or-later
"""Captures as people really take them, end to end through the CLI and tshark with the plugin:
 - unsynchronised clocks: one point's clock off by +-50 us, +-5 ms, +-2 s (2, 3 and 5 points,
   per-endpoint roles, a routed fabric), in dumpcap block order and re-sorted by stamp as
   mergecap would: every record equals the generator's ground truth (each stamp as its own
   point recorded it, roles included);
 - the same capture shifted afterwards (pcapng_edit): every metric and role unchanged, every
   stamp of the shifted point moved by exactly the offset;
 - file order within the reorder window (jittered, blocks reversed): the same records;
 - dumpcap ring-buffer files: the same records as mergecap's merge of them, and as the single
   file but for frame numbers; the same file given twice: the same records and a warning;
 - header-only snaps (128 bytes, IPv4 with a VLAN tag, IPv6 with one): the ground truth; one
   that cuts the SQE (96 bytes, IPv6 with a tag): a warning that says so;
 - stamp jitter beyond the packet spacing with PSN wrap, small MTUs, 4-5 points;
 - stamps in microseconds: repeated NAKs within one microsecond count each, copies given by two
   files once;
 - every point's role in analyze's header as in the truth (compute, storage, fabric between)."""
import collections
import json
import os
import shutil
import subprocess
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "support"))
from pcapng_edit import Capture  # noqa: E402
from rdmatel_stats import parse_simple_tables  # noqa: E402
from rdmatel_testlib import Tshark, fail, fail_if, run_cli, scratch_dir  # noqa: E402

synth, cli, plugin = sys.argv[1], sys.argv[2], sys.argv[3]
seed = int(os.environ.get("RDMATEL_CONDITIONS_SEED", "31"))
tmp = scratch_dir("rdmatel_conditions_")
problems = []

GENERATED = {
    "storage_-2s_sorted": ["--scenario", "nvme-2point", "--clock-offset", "leafB-stor=-2000000000", "--order", "time"],
    "storage_+2s_sorted": ["--scenario", "nvme-2point", "--clock-offset", "leafB-stor=2000000000", "--order", "time"],
    "storage_-50us_blocks": ["--scenario", "nvme-2point", "--clock-offset", "leafB-stor=-50000"],
    "compute_+5ms_3pt": ["--scenario", "nvme-3point", "--clock-offset", "leafA-gpu=5000000"],
    "spine_+2s_3pt_sorted": ["--scenario", "nvme-3point", "--clock-offset", "spine1=2000000000", "--order", "time"],
    "uplink_-5ms_5pt": ["--scenario", "nvme-2point", "--points", "5", "--clock-offset", "leafA-up=-5000000",
                        "--order", "time"],
    "cross_-2s": ["--scenario", "nvme-2point", "--cross", "--clock-offset", "leafA-gpu=-2000000000", "--order", "time"],
    "routed_3pt": ["--scenario", "nvme-3point", "--routed", "--clock-offset", "leafB-stor=50000"],
    "mixed_3pt_-5ms": ["--scenario", "mixed", "--points", "3", "--clock-offset", "leafB-stor=-5000000",
                       "--order", "time"],
    # Stamp jitter larger than the gap between packets, with PSN wrap, small MTUs, 4-5 points:
    # messages whose packets come in stamp order LAST first, across messages and READs.
    "wrap_5pt_jitter": ["--scenario", "nvme-3point", "--points", "5", "--psn-wrap", "--jitter-ns", "400"],
    "mixed_4pt_jitter_mtu1k": ["--scenario", "mixed", "--points", "4", "--jitter-ns", "400", "--pmtu", "1024"],
    "ipv6_mtu512_jitter": ["--scenario", "nvme-2point", "--pmtu", "512", "--jitter-ns", "400", "--ipv6"],
    "ipv4_vlan": ["--scenario", "nvme-2point", "--vlan", "1"],
    "ipv6_vlan": ["--scenario", "nvme-2point", "--ipv6", "--vlan", "1"],
}


def generate(name, args, ios="100", seed=seed, loss="0.01"):
    out = os.path.join(tmp, name + ".pcapng")
    extra = [] if "mixed" in args else ["--ios", ios]
    p = subprocess.run([synth, *args, *extra, "--loss", loss, "--seed", str(seed), "--out", out],
                       capture_output=True, text=True, timeout=300)
    if p.returncode != 0:
        fail(f"generator failed for {args}: {p.stderr}")
    return out


def run_script(script, *args):
    p = subprocess.run([sys.executable, os.path.join(here, script), *args], capture_output=True, text=True,
                       timeout=1200)
    print(f"{script}: {p.stdout.strip().splitlines()[-1] if p.stdout.strip() else p.stderr.strip()[-300:]}")
    if p.returncode != 0:
        problems.append(f"{script} {' '.join(os.path.basename(a) for a in args[1:])}:\n{p.stdout[-3000:]}{p.stderr[-1500:]}")


def export(kind, *caps, expect_warning=None):
    p = run_cli(cli, "export", kind, *caps, "--no-progress")
    if expect_warning and expect_warning not in p.stderr:
        problems.append(f"export {kind} {' '.join(map(os.path.basename, caps))}: no warning {expect_warning!r} "
                        f"(stderr: {p.stderr.strip()[:300]})")
    return [json.loads(l) for l in p.stdout.splitlines() if l.strip()]


FRAMES = ("cmd_frame", "rsp_frame", "first_frame", "last_frame")


def canonical(records, drop=()):
    return sorted(json.dumps({k: v for k, v in r.items() if k not in drop}, sort_keys=True) for r in records)


def same(label, a, b):
    sa, sb = set(a), set(b)
    if sa != sb or len(a) != len(b):
        only_a, only_b = sorted(sa - sb), sorted(sb - sa)
        problems.append(f"{label}: {len(a)} vs {len(b)} records, {len(only_a)} / {len(only_b)} differ; "
                        f"first: {only_a[:1]} / {only_b[:1]}")


# ---- 1. generated conditions against ground truth ----
caps = {name: generate(name, args) for name, args in GENERATED.items()}
# The compute leaf's first packets of a storage server's queue pair: a READ REQUEST (the storage
# reading a write's data) before any packet told the path MTU, then a jump in PSNs past it (the
# READ's own copy comes later). Its PSNs are sized by the next packet's MTU: the jump past them is
# out of sequence, as when the MTU is known (it was missed: oos_packets 0, truth 1).
caps["unsized_read"] = generate("unsized_read", ["--scenario", "nvme-2point", "--points", "2"], ios="86", seed=9429)
# A READ REQUEST before any packet of the capture showed the MTU (single-packet messages only so
# far), then a PSN gap (the next packet stamped 400 ns later than the one after it): the READ
# ends at one of five PSNs, one per IB MTU, and the PSN seen next follows none of them, so it is
# out of sequence whatever the MTU (it was let through: oos_packets 10, truth 11).
caps["read_before_any_mtu"] = generate("read_before_any_mtu", ["--scenario", "nvme-2point", "--points", "4",
                                                               "--clock-offset", "leafA-gpu=11354", "--jitter-ns",
                                                               "400"], ios="144", seed=11039, loss="0")
# Five points with exact clocks and stamps off by up to 250 ns: one endpoint pair's directions
# between the storage leaf's two ports happened not to overlap and bracketed [50, 58] ns, stated
# -54 +- 4 ns against the truth 0; the other pairs' overlaps show the stamps stray by ~100 ns.
caps["jittered_ports_offset"] = generate("jittered_ports_offset", ["--scenario", "nvme-2point", "--points", "5",
                                                                   "--vlan", "2", "--jitter-ns", "250", "--snaplen",
                                                                   "144", "--no-connect"], ios="135", seed=11019)
# A capture starting just after a READ REQUEST: its responses come, some lost, then a READ
# re-issued for the rest (its PSN inside the message's) and their resends: one message, whose READ
# was never seen (it was split in two at the re-issued READ's FIRST: 15 + 17 packets, truth 32).
caps["reissued_read_unseen_original"] = generate(
    "reissued_read_unseen_original", ["--scenario", "nvme-midstream", "--points", "3", "--clock-offset", "spine1=2124",
                                      "--clock-offset", "leafB-stor=-1081379", "--routed", "--ipv6", "--pmtu",
                                      "1024"], ios="68", seed=13038, loss="0.03")
# A SEND's LAST and the next SEND's FIRST lost before the storage leaf, the LAST after them
# stamped 36 ns before the FIRST it follows (jitter), then go-back-N resends: the LAST stays with
# its own message, not with the one before (a PSN between them unseen may be a FIRST; it was:
# the first message got 3 packets, truth 2, the second 4, truth 5).
caps["jitter_between_messages"] = generate("jitter_between_messages", ["--scenario", "nvme-2point", "--clock-offset",
                                                                       "leafA-gpu=-1271", "--routed", "--order", "time",
                                                                       "--jitter-ns", "100", "--psn-wrap"],
                                           ios="140", seed=18019, loss="0.03")
# The storage leaf's two ports a few hundred ns apart, stamps +-400 ns, a capture starting
# mid-stream: the first I/O seen at both ports voted them the wrong way round, and was reported
# with its storage side at the uplink port on that one vote (49 later I/Os said the opposite).
caps["first_vote_wrong"] = generate("first_vote_wrong", ["--scenario", "nvme-midstream", "--points", "5",
                                                         "--clock-offset", "spine1=-1041", "--vlan", "2", "--ipv6",
                                                         "--order", "blocks", "--jitter-ns", "400", "--snaplen",
                                                         "256"], ios="89", seed=23029)
# A queue pair whose only command the capture holds is never answered (the capture ends first):
# it cannot be told from another protocol over SEND, so it is left out, and the CLI says so
# (it was dropped without a word).
caps["unanswered_queue"] = generate("unanswered_queue", ["--scenario", "nvme-midstream", "--vlan", "0", "--order",
                                                         "time", "--psn-wrap", "--ecn-mark",
                                                         "leafA-gpu:leafB-stor=0.05"], ios="85", seed=23028, loss="0")
for name in ("ipv4_vlan", "ipv6_vlan"):
    snapped = os.path.join(tmp, name + "_snap128.pcapng")
    subprocess.run(["editcap", "-s", "128", caps[name], snapped], check=True, capture_output=True)
    shutil.copy(caps[name].replace(".pcapng", ".truth.json"), snapped.replace(".pcapng", ".truth.json"))
    caps[name + "_snap128"] = snapped
# Snaps that cut the SQE itself (96 bytes with IPv6 and a tag): no command can be recognised, and
# the CLI must say so rather than report "no NVMe-oF I/O" as if there were none.
cut = os.path.join(tmp, "ipv6_vlan_snap96.pcapng")
subprocess.run(["editcap", "-s", "96", caps["ipv6_vlan"], cut], check=True, capture_output=True)
p = run_cli(cli, "export", "io", cut, "--no-progress")
with open(caps["ipv6_vlan"].replace(".pcapng", ".truth.json")) as f:
    if not json.load(f)["ios"]:
        problems.append("ipv6_vlan: no I/Os in the truth: the snap-96 check proves nothing")
if "snap length cuts the SQE" not in p.stderr:
    problems.append(f"snap 96 on IPv6 with a tag: no warning that the SQEs are cut (stderr: {p.stderr[:300]})")
# The same warning where Wireshark users look, Expert Info: in two passes (on frame 1) and in one.
# What to capture, by hand: Ethernet 14 + one tag 4 + IPv6 40 + UDP 8 + BTH 12, and the SQE's
# first 40 bytes (opcode, flags, CID, NSID and the data pointer's start).
need = 14 + 4 + 40 + 8 + 12 + 40
ts = Tshark(plugin)
try:
    for passes in (["-2"], []):
        expert = ts.run(*passes, "-q", "-r", ts.stage(cut), "-z", "expert,warn").stdout
        lines = [l for l in expert.splitlines() if "RDMATEL" in l and "snap length cuts the SQE" in l]
        if len(lines) != 1 or f"capture at least {need} bytes" not in lines[0]:
            problems.append(f"snap 96 on IPv6 with a tag, tshark {' '.join(passes) or 'one pass'} -z expert: "
                            f"no single warning asking for {need} bytes: {lines or expert[-600:]}")
finally:
    ts.close()
nvme = list(caps.values())
run_script("test_cli_truth.py", cli, *nvme)
run_script("test_messages_truth.py", cli, *nvme)
tshark_caps = [caps["storage_-2s_sorted"], caps["cross_-2s"], caps["ipv6_vlan_snap128"], caps["mixed_3pt_-5ms"]]
run_script("test_tshark_truth.py", plugin, *tshark_caps)
run_script("test_cli_vs_tshark.py", cli, plugin, *tshark_caps)

# Point roles in analyze's header against the truth's (SPEC §3: the longest command-to-completion
# span is the compute side, the shortest the storage side, points in between the fabric). A role
# may stay unknown (a point that saw no I/O complete along with another); one given must be right.
fabric_found = 0
for name, path in caps.items():
    if "cross" in name:  # hosts and storage behind both leaves: each leaf is both sides
        continue
    with open(path.replace(".pcapng", ".truth.json")) as f:
        truth_roles = {p["name"]: p["role"] for p in json.load(f)["points"]}
    header = next((l for l in run_cli(cli, "analyze", path, "--no-progress").stdout.splitlines()
                   if "observation points (" in l), "")
    for point, role in truth_roles.items():
        at = header.find(f" {point} [")
        if at < 0:
            problems.append(f"{name}: point {point} not in analyze's header {header.strip()[:200]}")
            continue
        shown = header[at + len(point) + 3:].split(",")[0].split(":")[0].split("]")[0]
        if shown != "role unknown" and shown != role:
            problems.append(f"{name}: point {point} shown as {shown!r}, truth {role}")
        fabric_found += shown == "fabric" and role == "fabric"
if fabric_found < 3:
    problems.append(f"only {fabric_found} fabric points (spines, uplinks) shown as fabric in analyze's header")

# Clock offsets: every pair of points seen together, against the offsets the generator applied
# (truth points[].clock_offset_ns: added to every stamp of that point), within the uncertainty
# rdmatel states; with I/Os going both ways the uncertainty is about half the smallest round trip
# (wider, but still a bound, where hosts and storage servers sit behind both points: --cross).
checked_offsets = 0
for name, path in caps.items():
    with open(path.replace(".pcapng", ".truth.json")) as f:
        truth_offsets = {p["name"]: p.get("clock_offset_ns", 0) for p in json.load(f)["points"]}
    for r in export("offsets", path):
        # offset_ns is what to add to the point's stamps to get the reference's clock (SPEC §6).
        want = truth_offsets[r["reference"]] - truth_offsets[r["point"]]
        err = abs(r["offset_ns"] - want)
        if not r["both_directions"] or err > r["uncertainty_ns"] + 1 or r["uncertainty_ns"] > 1_000_000:
            problems.append(f"{name}: offset {r['point']} -> {r['reference']} = {r['offset_ns']} ± "
                            f"{r['uncertainty_ns']} ns, truth {want} ns (both directions: {r['both_directions']})")
        checked_offsets += 1
if checked_offsets < len(caps):
    problems.append(f"only {checked_offsets} clock offsets reported for {len(caps)} captures of 2 to 5 points")

# ---- 2. the same capture edited afterwards ----
base = generate("base", ["--scenario", "mixed", "--points", "3", "--order", "blocks"])
base_io, base_msg, base_flows = export("io", base), export("messages", base), export("flows", base)
if not base_io or not base_msg:
    fail("the base capture has no I/Os or messages: nothing would be compared")

# A point's clock shifted after the fact, in file order and re-sorted by stamp.
def storage_stamps(op):
    """The stamps SPEC §4 takes at the storage side: a write's T4 is its READ REQUEST at the
    compute side."""
    return ("t2_ns", "t3_ns", "t6_ns") if op == "write" else ("t2_ns", "t3_ns", "t4_ns")


for offset in (2_000_000_000, -5_000_000, 50_000):
    for resort in (False, True):
        c = Capture(base)
        c.shift_point("leafB-stor", offset)
        if resort:
            c.sort_by_stamp()
        path = os.path.join(tmp, f"shifted_{offset}_{int(resort)}.pcapng")
        c.write(path)
        label = f"leafB-stor shifted by {offset} ns{' and re-sorted' if resort else ''}"
        want = []
        for r in base_io:
            r = dict(r)
            if r.get("storage_point") == "leafB-stor":
                for k in storage_stamps(r["op"]):
                    if k in r:
                        r[k] += offset
            want.append(r)
        same(label + " (io)", canonical(export("io", path), FRAMES), canonical(want, FRAMES))
        want_msg = []
        for m in base_msg:
            m = dict(m)
            if m["point"] == "leafB-stor":
                m["first_ns"] += offset
                m["last_ns"] += offset
            want_msg.append(m)
        same(label + " (messages)", canonical(export("messages", path), FRAMES), canonical(want_msg, FRAMES))

# File order changed within the reorder window; stamps untouched.
for name, edit in (("jittered by 50 ms", lambda c: c.jitter_order(50_000_000, seed)),
                   ("blocks of 200 ms reversed", lambda c: c.reverse_blocks(200_000_000))):
    c = Capture(base)
    edit(c)
    path = os.path.join(tmp, "order.pcapng")
    c.write(path)
    for kind, want in (("io", base_io), ("messages", base_msg), ("flows", base_flows)):
        same(f"file order {name} ({kind})", canonical(export(kind, path), FRAMES), canonical(want, FRAMES))

# dumpcap ring-buffer files (every file with the same interfaces), in any order on the command
# line; and the same file given twice.
ring = Capture(base).split(os.path.join(tmp, "ring"), 700)
merged = os.path.join(tmp, "ring_merged.pcapng")
subprocess.run(["mergecap", "-w", merged, *ring], check=True, capture_output=True)
for kind, want in (("io", base_io), ("messages", base_msg)):
    got = export(kind, *reversed(ring))
    same(f"{len(ring)} ring files vs mergecap of them ({kind})", canonical(got), canonical(export(kind, merged)))
    same(f"{len(ring)} ring files vs the single file ({kind})", canonical(got, FRAMES), canonical(want, FRAMES))
    same(f"the file given twice ({kind})", canonical(export(kind, base, base, expect_warning="more than once"), FRAMES),
         canonical(want, FRAMES))

# Stamps in microseconds (dumpcap's default, classic pcap): a host's NAK repeated in bursts 100 ns
# apart gives identical frames with one stamp at one point, and each is a frame the link carried.
# They were taken for one frame given twice (the rule for a file given twice): 30 of 19,146
# frames at the compute leaf dropped. Counted per point from the file itself (every frame of it
# was sent), through the CLI and tshark with the plugin. Given by two files (the file given twice,
# ring files with an overlap merged by mergecap into one), the copies still count once.
def roce_frames_per_point(c):
    return collections.Counter(c.if_names[Capture.interface(p)] for p in c.packets)


def repeats_at_one_stamp(c):
    seen, n = set(), 0
    for p in c.packets:
        k = (Capture.interface(p), c.stamp_ns(p), p.body[20:])
        n += k in seen
        seen.add(k)
    return n


def packets_per_point(records):
    got = collections.Counter()
    for r in records:
        if r["kind"] == "ecn":
            got[r["point"]] += r["packets"]
    return got


us_cap = Capture(generate("nak_repeats", ["--scenario", "nvme-3point", "--points", "3", "--ipv6", "--psn-wrap",
                                          "--routed", "--pmtu", "512"], ios="40", seed=16053, loss="0.03"))
us_cap.set_resolution(6)
us_path = os.path.join(tmp, "nak_repeats_us.pcapng")
us_cap.write(us_path)
us_cap = Capture(us_path)
want_points = roce_frames_per_point(us_cap)
if repeats_at_one_stamp(us_cap) < 10:
    problems.append(f"microsecond stamps: {repeats_at_one_stamp(us_cap)} repeats at one stamp: the case proves nothing")
got = packets_per_point(export("congestion", us_path))
if got != want_points:
    problems.append(f"microsecond stamps: RoCE packets per point {dict(got)}, the file has {dict(want_points)}")
ts = Tshark(plugin)
try:
    out = ts.run("-2", "-q", "-r", ts.stage(us_path), "-z", "rdmatel,congestion").stdout
finally:
    ts.close()
got_ts = collections.Counter()
for row in parse_simple_tables(out).get("RDMA Telemetry · Congestion per flow (ECN, CNP)", ([], []))[1]:
    got_ts[row[3]] += int(row[4])
if got_ts != want_points:
    problems.append(f"microsecond stamps, tshark -z rdmatel,congestion: packets per point {dict(got_ts)}, "
                    f"the file has {dict(want_points)}")
got = packets_per_point(export("congestion", us_path, us_path, expect_warning="more than once"))
if got != want_points:
    problems.append(f"microsecond stamps, the file given twice: packets per point {dict(got)}, want {dict(want_points)}")
# Two ring files overlapping by 2,000 frames, given as they are and merged by mergecap into one
# file (one capture then gives every frame of the overlap twice, a NAK and its repeat both twice:
# one repeat in two is a copy there): the packets, I/Os and messages of the single file.
half = len(us_cap.packets) // 2
ring_a, ring_b = os.path.join(tmp, "us_ring_a.pcapng"), os.path.join(tmp, "us_ring_b.pcapng")
us_cap.write(ring_a, us_cap.packets[:half + 1000])
us_cap.write(ring_b, us_cap.packets[half - 1000:])
overlap = os.path.join(tmp, "us_overlap_merged.pcapng")
subprocess.run(["mergecap", "-w", overlap, ring_a, ring_b], check=True, capture_output=True)
for label, inputs in (("overlapping ring files", [ring_a, ring_b]), ("overlapping ring files merged", [overlap])):
    got = packets_per_point(export("congestion", *inputs, expect_warning="more than once"))
    if got != want_points:
        problems.append(f"microsecond stamps, {label}: packets per point {dict(got)}, want {dict(want_points)}")
    for kind in ("io", "messages"):
        same(f"microsecond stamps, {label} ({kind})", canonical(export(kind, *inputs), FRAMES),
             canonical(export(kind, us_path), FRAMES))

fail_if(problems, f"problems on real-world capture conditions (captures kept in {tmp})", shown=40)
shutil.rmtree(tmp, ignore_errors=True)
print(f"OK: clock offsets, file order, ring buffers, duplicates and header-only snaps on {len(nvme) + 1} captures")
