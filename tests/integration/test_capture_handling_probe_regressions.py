# SPDX-License-Identifier: GPL-2.0-or-later
"""Regressions found by probing how captures are really taken (per-point files, ring files, snap
lengths, pcap, duplicates), each checked against the generator's ground truth:
 - ring files whose PREFIX holds dots: dumpcap -w 10.2.0.254.pcapng writes
   10.2.0.254_00001_DATE.pcapng (PREFIX and EXT are what the name had before and after its last
   dot). One point's ring so named, one file of it gzipped, given with the other point's file:
   every hop's packets and losses those of the truth; with a file of the ring missing, the gap is
   said and no hop loses more than the truth (the packets in flight while the point captured
   nothing are not losses: before, the ring read as unrelated files and 205 such packets were
   counted lost where the truth has 6); pcap ring files so named whose stamps step back at a file
   boundary stay one point each.
 - a file merged with itself (mergecap -w x2 f f): every packet twice at its own stamp, which is
   no mirror: the copies were counted as a mirror's twins as they arrived, the point's window
   widened to 66 us and 89 of the truth's 436 resends were dropped as mirror copies.
 - two overlapping ring files merged into one (mergecap): the ACKs the merged file repeats at the
   start of the overlap, before a request repeated there, were counted twice: 2 packets too many
   and 2 phantom losses on a hop (8 lost where the truth has 6)."""
import glob
import json
import os
import subprocess
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "support"))
from pcapng_edit import Capture  # noqa: E402
from rdmatel_testlib import fail_if, load_truth, measurable_ios, run_cli, scratch_dir  # noqa: E402

synth, cli = sys.argv[1], sys.argv[2]
tmp = scratch_dir("rdmatel_capture_probe_")
problems = []
METRICS = ("dal_us", "dpl_us", "iol1_us", "iol2_us", "rtt_us", "iol_us")
TIMES = tuple(f"t{i}_ns" for i in range(1, 8))


def generate(name, *args):
    out = os.path.join(tmp, name + ".pcapng")
    subprocess.run([synth, *args, "--out", out], check=True, capture_output=True)
    return out


def editcap(*args):
    subprocess.run(["editcap", *args], check=True, capture_output=True)


def export(kind, *caps):
    p = run_cli(cli, "export", kind, *caps, "--no-progress")
    return p, [json.loads(line) for line in p.stdout.splitlines() if line.strip()]


def per_point_files(capture, prefix):
    """One pcapng file per interface holding that interface only (a sniffer per point)."""
    cap = Capture(capture)
    idbs = [b for b in cap.head if b.type == 1]
    files = []
    for i in range(len(cap.if_names)):
        one = Capture(capture)
        one.replace_interfaces(idbs[i])
        one.packets = [p for p in cap.packets if Capture.interface(p) == i]
        for p in one.packets:
            Capture.set_interface(p, 0)
        path = f"{prefix}{i}.pcapng"
        one.write(path)
        files.append(path)
    return files


def hop_key(h):
    return h["src"], h["dst"], int(h["dst_qpn"]), h["from_point"], h["to_point"]


def check_hops(label, truth, got, at_most=False):
    """Every hop's packets and losses as in the truth (`at_most`: losses not above the truth's)."""
    want = {hop_key(h): h for h in truth["hops"]}
    have = {hop_key(r): r for r in got}
    total = sum(int(r["lost"]) for r in got)
    for k in sorted(set(have) - set(want)):
        problems.append(f"{label}: hop {k} not in the truth")
    for k in sorted(set(want) & set(have)):
        w, g = want[k], have[k]
        if at_most:
            if int(g["lost"]) > w["lost"]:
                problems.append(f"{label}: hop {k}: {g['lost']} lost, the truth {w['lost']} (total {total} lost)")
        elif (int(g["packets"]), int(g["lost"])) != (w["packets"], w["lost"]):
            problems.append(f"{label}: hop {k}: {g['packets']} packets, {g['lost']} lost; "
                            f"truth {w['packets']}, {w['lost']}")
    if not at_most:
        for k in sorted(set(want) - set(have)):
            if want[k]["delivered"] or want[k]["packets"] > 2:
                problems.append(f"{label}: hop {k} missing")


def io_key(r):
    return r["host"], r["storage"], int(r["qpn"]), int(r["cid"]), r.get("cmd_psn")


def check_ios(label, truth, got):
    """The truth's I/Os, stamps and metrics, frame numbers aside (several files number frames
    in merged order)."""
    want = {io_key(t): t for t in measurable_ios(truth["ios"])}
    have = {}
    for r in got:
        have.setdefault(io_key(r), []).append(r)
    if len(got) != len(want):
        problems.append(f"{label}: {len(got)} I/Os, the truth {len(want)}")
    for k, t in want.items():
        if len(have.get(k, [])) != 1:
            problems.append(f"{label}: I/O {k} found {len(have.get(k, []))} times")
            continue
        g = have[k][0]
        for f in ("op", "complete") + TIMES:
            if t.get(f) != g.get(f):
                problems.append(f"{label}: I/O {k}: {f} {g.get(f)}, truth {t.get(f)}")
        for f in METRICS:
            if (t.get(f) is None) != (g.get(f) is None) or \
                    (t.get(f) is not None and round(float(t[f]) * 1000) != round(float(g[f]) * 1000)):
                problems.append(f"{label}: I/O {k}: {f} {g.get(f)}, truth {t.get(f)}")


# ---- ring files whose prefix holds dots (a sniffer's files named after its address) ----
capture = generate("dotted", "--scenario", "nvme-2point", "--ios", "80", "--seed", "21")
truth = load_truth(capture)
compute, storage = per_point_files(capture, os.path.join(tmp, "point"))
ring = os.path.join(tmp, "ring")
os.mkdir(ring)
editcap("-c", "300", storage, os.path.join(ring, "10.2.0.254.pcapng"))
files = sorted(glob.glob(os.path.join(ring, "*.pcapng")))
if len(files) < 4 or not os.path.basename(files[0]).startswith("10.2.0.254_00000_"):
    problems.append(f"editcap -c made {[os.path.basename(f) for f in files]}")
subprocess.run(["gzip", files[1]], check=True)
files[1] += ".gz"
_, hops = export("paths", compute, *files)
check_hops("dotted ring, every file", truth, hops)
_, ios = export("io", *reversed(files), compute)
check_ios("dotted ring, every file", truth, ios)

# The ring's third file missing: the point captured nothing between the second's end and the
# fourth's start.
missing = files.pop(2)
p, hops = export("paths", compute, *files)
check_hops(f"dotted ring without {os.path.basename(missing)}", truth, hops, at_most=True)
if "ring file number 2 is missing" not in p.stderr:
    problems.append(f"dotted ring without {os.path.basename(missing)}: no warning that it is missing: "
                    f"{p.stderr.strip()[:400]}")

# ---- pcap ring files so named, stamps stepping back at a file boundary ----
# A ring file's first packet may be stamped a moment before its predecessor's last (stamped when
# queued): by its name it continues its predecessor's point (pcap files have no interface names).
pcap_ring = os.path.join(tmp, "pcap_ring")
os.mkdir(pcap_ring)
for i, one in enumerate((compute, storage)):
    cap = Capture(one)
    for k in range(400, len(cap.packets), 400):
        cap.set_stamp_ns(cap.packets[k], cap.stamp_ns(cap.packets[k - 1]) - 50)
    stepped = os.path.join(tmp, f"stepped{i}.pcapng")
    cap.write(stepped)
    editcap("-F", "nsecpcap", "-c", "400", stepped, os.path.join(pcap_ring, f"10.{i + 1}.0.254.pcap"))
files = sorted(glob.glob(os.path.join(pcap_ring, "*.pcap")))
p = run_cli(cli, "analyze", *files, "--no-progress")
line = next((line for line in p.stdout.splitlines() if "observation points (" in line), "")
if "observation points (2)" not in line:
    problems.append(f"dotted pcap ring files stepping back at their boundaries: {line.strip()} "
                    f"{p.stderr.strip()[:400]}")

# ---- a file merged with itself: copies at their own stamps, not a mirror ----
def message_key(m):
    return m["src"], m["dst"], int(m["dst_qpn"]), m["point"], m["kind"], int(m["first_psn"])


def check_messages(label, truth, got):
    """Every message's packets and resends as in the truth (frames aside)."""
    want = {message_key(m): (m["packets"], m["retrans_packets"]) for m in truth["messages"]}
    have = {message_key(m): (int(m["packets"]), int(m["retrans_packets"])) for m in got}
    totals = [sum(v[i] for v in d.values()) for d in (have, want) for i in (0, 1)]
    if have != want:
        wrong = sorted(k for k in set(have) | set(want) if have.get(k) != want.get(k))
        problems.append(f"{label}: {len(wrong)} messages differ from the truth (packets, resends: "
                        f"{totals[0]}, {totals[1]}; truth {totals[2]}, {totals[3]}), first {wrong[:3]}")


capture = generate("self_merged_src", "--scenario", "nvme-3point", "--ios", "60", "--clock-offset",
                   "leafA-gpu=-6728068", "--ipv6", "--vlan", "2", "--seed", "303")
truth = load_truth(capture)
if sum(m["retrans_packets"] for m in truth["messages"]) < 100:
    problems.append("the file merged with itself: too few resends in the truth: the case proves nothing")
doubled = os.path.join(tmp, "self_merged.pcapng")
subprocess.run(["mergecap", "-w", doubled, capture, capture], check=True, capture_output=True)
p, messages = export("messages", doubled)
check_messages("the file merged with itself", truth, messages)
if "given more than once" not in p.stderr or "recorded twice" in p.stderr:
    problems.append(f"the file merged with itself: want the duplicate warning and no mirror: {p.stderr.strip()[:400]}")

# ---- two overlapping ring files merged into one: the overlap's ACKs counted once ----
capture = generate("overlap_src", "--scenario", "nvme-2point", "--ios", "60", "--seed", "205")
truth = load_truth(capture)
first, second = os.path.join(tmp, "overlap_a.pcapng"), os.path.join(tmp, "overlap_b.pcapng")
editcap("-r", capture, first, "1-1505")
editcap("-r", capture, second, "752-2258")
merged = os.path.join(tmp, "overlap_merged.pcapng")
subprocess.run(["mergecap", "-w", merged, first, second], check=True, capture_output=True)
if len(Capture(capture).packets) != 2258 or sum(h["lost"] for h in truth["hops"]) == 0:
    problems.append("overlapping files merged: the generated capture changed: the case proves nothing")
for label, inputs in (("overlapping files", (first, second)), ("overlapping files merged", (merged,))):
    p, hops = export("paths", *inputs)
    check_hops(label, truth, hops)
    if "given more than once" not in p.stderr:
        problems.append(f"{label}: no warning that packets were given twice: {p.stderr.strip()[:400]}")

fail_if(problems, "problems found by the capture-handling probe")
print("capture-handling probe regressions: OK")
