# SPDX-License-Identifier: GPL-2.0-or-later
"""Captures without interface names, and snap lengths that cut the headers, end to end through
the CLI. The reference is the generator's named two-point capture, whose records equal its ground
truth (test_cli_truth, test_capture_conditions):
 - one pcap file per point (nanosecond stamps; pcap has no interface names): the same I/O and
   message records as the named capture, the points named if0 and FILE:if0;
 - the storage point's file with its clock 2.5 s later (editcap -t), so that it starts after the
   compute point's file ended: still two points (a ring buffer's files follow each other within a
   second), with a warning, and every metric unchanged; 0.1 s later (within a ring's gap): two
   points too, since the file begins with packets the other file began with;
 - pcap ring files of both points (editcap -c): two points, the same records; also when a ring
   file's first packet is stamped before its predecessor's last (stamps step back);
 - --point FILE:if0=ROLE names such a point; a --point naming none is an error;
 - two hosts' files whose interfaces share a name (eth0): a warning that they look like two
   sniffers, and with --points-by-file the records of the named capture; ring files and a file
   given twice get no such warning;
 - one file of two pcapng sections (cat) with unnamed interfaces: the first section's points;
   per-point files joined with cat (sections overlapping in time): a point per section, with a
   warning (named interfaces too); two sniffers' eth0 as two sections: the two-sniffers warning;
 - snap lengths that cut the BTH (IPv4 with a VLAN tag), the UDP header (IPv6) or the RETH of
   RDMA WRITEs: a warning that says the snap length cut the headers and how much to capture, not a
   silent empty result; 128 bytes: no such warning."""
import glob
import json
import os
import subprocess
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "support"))
from pcapng_edit import Capture, interface_block  # noqa: E402
from rdmatel_testlib import fail_if, run_cli, scratch_dir  # noqa: E402

synth, cli = sys.argv[1], sys.argv[2]
tmp = scratch_dir("rdmatel_unnamed_")
problems = []
CUT = "cut by the snap length inside their headers"


def generate(name, *args):
    out = os.path.join(tmp, name + ".pcapng")
    subprocess.run([synth, *args, "--seed", "11", "--out", out], check=True, capture_output=True)
    return out


def editcap(*args):
    subprocess.run(["editcap", *args], check=True, capture_output=True)


def cat(path, parts):
    """`path`: the files `parts` one after the other (cat): a pcapng file of several sections."""
    with open(path, "wb") as out:
        for part in parts:
            with open(part, "rb") as f:
                out.write(f.read())
    return path


def export(kind, *caps, check=True):
    p = run_cli(cli, "export", kind, *caps, "--no-progress", check=check)
    return p, [json.loads(line) for line in p.stdout.splitlines() if line.strip()]


def points(*caps, extra=()):
    p = run_cli(cli, "analyze", *caps, *extra, "--no-progress")
    line = next((line for line in p.stdout.splitlines() if "observation points (" in line), "")
    return line, p


def canonical(records, names, drop=()):
    """Records as sorted JSON texts, point names mapped to the reference's, without `drop`."""
    out = []
    for r in records:
        r = {k: names.get(v, v) if isinstance(v, str) else v for k, v in r.items() if k not in drop}
        out.append(json.dumps(r, sort_keys=True))
    return sorted(out)


def same(label, got, want):
    if got != want:
        only_got, only_want = sorted(set(got) - set(want)), sorted(set(want) - set(got))
        problems.append(f"{label}: {len(got)} records against {len(want)}; first differing: "
                        f"{only_got[:1]} / {only_want[:1]}")


FRAMES = ("cmd_frame", "rsp_frame", "first_frame", "last_frame")
STAMPS = ("t1_ns", "t2_ns", "t3_ns", "t4_ns", "t5_ns", "t6_ns", "t7_ns", "first_ns", "last_ns")

# ---- one pcap file per point ----
named = generate("named", "--scenario", "nvme-2point", "--ios", "100")
cap = Capture(named)
per_point = []
for i, name in enumerate(cap.if_names):
    one = os.path.join(tmp, f"p{i}.pcapng")
    cap.write(one, [p for p in cap.packets if Capture.interface(p) == i])
    pcap = os.path.join(tmp, f"p{i}.pcap")
    editcap("-F", "nsecpcap", one, pcap)
    per_point.append(pcap)
compute, storage = per_point
names = {"if0": cap.if_names[0], f"{storage}:if0": cap.if_names[1]}

_, ref_io = export("io", named)
_, ref_msg = export("messages", named)
if len(ref_io) < 100 or len(ref_msg) < 100:
    problems.append(f"reference: only {len(ref_io)} I/Os and {len(ref_msg)} messages")
line, _ = points(compute, storage)
if "observation points (2)" not in line:
    problems.append(f"one pcap per point: {line.strip()}")
_, io = export("io", compute, storage)
same("I/Os, one pcap per point", canonical(io, names, FRAMES), canonical(ref_io, {}, FRAMES))
_, msg = export("messages", storage, compute)
same("messages, one pcap per point (given in the other order)", canonical(msg, names, FRAMES),
     canonical(ref_msg, {}, FRAMES))

# ---- the storage point's clock later: its file starts after the other's end ----
# 2.5 s later: more than a ring's gap. 0.1 s later: within it, but the file begins with packets the
# compute point's file began with (the same traffic at another point), so no ring continuation.
for offset in ("2.5", "0.1"):
    shifted = os.path.join(tmp, f"p1_late{offset}.pcap")
    editcap("-t", offset, storage, shifted)
    names_shifted = {"if0": cap.if_names[0], f"{shifted}:if0": cap.if_names[1]}
    line, p = points(compute, shifted)
    if "observation points (2)" not in line:
        problems.append(f"storage clock +{offset} s: {line.strip()}")
    if "taken as two observation points" not in p.stderr and "taken as a point of its own" not in p.stderr:
        problems.append(f"storage clock +{offset} s: no warning that the files are two points: {p.stderr.strip()[:300]}")
    _, io = export("io", compute, shifted)
    # Every metric and role unchanged; the storage point's stamps move with its clock (not compared).
    same(f"I/Os, storage clock +{offset} s", canonical(io, names_shifted, FRAMES + STAMPS),
         canonical(ref_io, {}, FRAMES + STAMPS))
    # T2 (the command at the storage side) is on the storage point's clock, T1 on the compute point's.
    late = [r for r in io if r.get("t2_ns") and r.get("t1_ns") and
            r["t2_ns"] - r["t1_ns"] < float(offset) * 1e9 - 50_000_000]
    if late or not any(r.get("t2_ns") for r in io):
        problems.append(f"storage clock +{offset} s: {len(late)} I/Os whose storage-side stamp is not on the storage clock")
    _, msg = export("messages", compute, shifted)
    same(f"messages, storage clock +{offset} s", canonical(msg, names_shifted, FRAMES + STAMPS),
         canonical(ref_msg, {}, FRAMES + STAMPS))

# ---- pcap ring files of both points ----
ring = os.path.join(tmp, "ring")
os.mkdir(ring)
editcap("-F", "nsecpcap", "-c", "700", compute, os.path.join(ring, "host0.pcap"))
editcap("-F", "nsecpcap", "-c", "700", storage, os.path.join(ring, "host1.pcap"))
files = sorted(glob.glob(os.path.join(ring, "*.pcap")))
if len(files) < 4:
    problems.append(f"ring: only {len(files)} files")
line, p = points(*files)
if "observation points (2)" not in line:
    problems.append(f"ring files of two points: {line.strip()}")
first_storage = next(f for f in files if "host1" in f)
names_ring = {"if0": cap.if_names[0], f"{first_storage}:if0": cap.if_names[1]}
for order in (files, list(reversed(files))):
    _, io = export("io", *order)
    same("I/Os, ring files of two points", canonical(io, names_ring, FRAMES), canonical(ref_io, {}, FRAMES))
    _, msg = export("messages", *order)
    same("messages, ring files of two points", canonical(msg, names_ring, FRAMES), canonical(ref_msg, {}, FRAMES))

# ---- pcap ring files whose stamps step back across a file boundary ----
# Packets are stamped when queued (NIC queues in parallel): a ring file's first packet may be
# stamped a moment before its predecessor's last. Each point's packet 700k (the first of ring file
# k) gets a stamp 50 ns before packet 700k - 1's: the ring files must still make two points, with
# the records of the same traffic given as one pcap file per point.
stepped = []
for i in range(len(cap.if_names)):
    one = Capture(os.path.join(tmp, f"p{i}.pcapng"))
    for k in range(700, len(one.packets), 700):
        one.set_stamp_ns(one.packets[k], one.stamp_ns(one.packets[k - 1]) - 50)
    whole = os.path.join(tmp, f"stepped{i}.pcapng")
    one.write(whole)
    pcap = os.path.join(tmp, f"stepped{i}.pcap")
    editcap("-F", "nsecpcap", whole, pcap)
    stepped.append(pcap)
_, step_io = export("io", *stepped)
_, step_msg = export("messages", *stepped)
ring = os.path.join(tmp, "stepped_ring")
os.mkdir(ring)
for i, pcap in enumerate(stepped):
    editcap("-F", "nsecpcap", "-c", "700", pcap, os.path.join(ring, f"host{i}.pcap"))
files = sorted(glob.glob(os.path.join(ring, "*.pcap")))
first_storage = next(f for f in files if "host1" in f)
names_step = {"if0": "if0", f"{first_storage}:if0": f"{stepped[1]}:if0"}
line, p = points(*files)
if "observation points (2)" not in line:
    problems.append(f"ring files stepping back at their boundaries: {line.strip()} {p.stderr.strip()[:300]}")
for order in (files, list(reversed(files))):
    _, io = export("io", *order)
    same("I/Os, ring files stepping back at their boundaries", canonical(io, names_step, FRAMES),
         canonical(step_io, {}, FRAMES))
    _, msg = export("messages", *order)
    same("messages, ring files stepping back at their boundaries", canonical(msg, names_step, FRAMES),
         canonical(step_msg, {}, FRAMES))

# ---- --point names an unnamed point of one of several files ----
line, _ = points(compute, storage, extra=("--point", f"{storage}:if0=storage"))
if "[storage, configured" not in line:
    problems.append(f"--point {storage}:if0=storage: {line.strip()}")
p = run_cli(cli, "analyze", compute, storage, "--point", "nowhere=storage", "--no-progress", check=False)
if p.returncode == 0 or "--point nowhere names no observation point" not in p.stderr or "if0" not in p.stderr:
    problems.append(f"--point nowhere=storage: exit {p.returncode}, stderr {p.stderr.strip()[:300]}")

# ---- two hosts' files whose interfaces share a name (eth0) ----
# Interfaces of one name are one point (ring files); two files of one name overlapping in time
# without the same packets are two sniffers: a warning, and --points-by-file makes them two points.
def one_point_file(path, point, idb):
    """The named capture's packets of `point`, as the only interface of a file described by `idb`."""
    one = Capture(named)
    packets = [p for p in one.packets if Capture.interface(p) == point]
    for p in packets:
        Capture.set_interface(p, 0)
    one.replace_interfaces(idb)
    one.write(path, packets)
    return path


hosts = [one_point_file(os.path.join(tmp, f"host{i}.pcapng"), i, interface_block("eth0")) for i in range(2)]
p = run_cli(cli, "analyze", *hosts, "--no-progress")
if "without holding the same packets" not in p.stderr or "--points-by-file" not in p.stderr:
    problems.append(f"two hosts' eth0: no warning that they are two sniffers: {p.stderr.strip()[:300]}")
by_file = {f"{hosts[0]}:eth0": cap.if_names[0], f"{hosts[1]}:eth0": cap.if_names[1]}
_, io = export("io", *hosts, "--points-by-file")
same("I/Os, two hosts' eth0 with --points-by-file", canonical(io, by_file, FRAMES), canonical(ref_io, {}, FRAMES))
# The same in one file: both points' interfaces of the named capture named eth0 (what mergecap
# keeps of two hosts' eth0 captures whose descriptions differ): the warning too (before, none:
# one point, every packet seen at both a resend).
both = Capture(named)
both.replace_interfaces(interface_block("eth0"), interface_block("eth0"))
one_file = os.path.join(tmp, "two_eth0.pcapng")
both.write(one_file)
p = run_cli(cli, "analyze", one_file, "--no-progress")
if "interfaces 0 and 1 both have interface eth0" not in p.stderr or "without holding the same packets" not in p.stderr:
    problems.append(f"one file, two interfaces named eth0: no warning that they are two sniffers: {p.stderr.strip()[:300]}")
# Ring files of the named capture, and the capture given twice: no such warning.
for label, files in (("ring files", Capture(named).split(os.path.join(tmp, "named_ring"), 500)),
                     ("the capture given twice", [named, named])):
    p = run_cli(cli, "analyze", *files, "--no-progress")
    if "without holding the same packets" in p.stderr:
        problems.append(f"{label}: taken for two sniffers: {p.stderr.strip()[:300]}")

# ---- the same packets given twice, once without interface names ----
# The compute point's packets of the named capture saved again as nanosecond pcap (identical bytes
# and stamps): that point, its packets counted once, with a warning (before, a third point "if0",
# a hop of zero delay into it, every message of the point twice).
copy = os.path.join(tmp, "compute_copy.pcap")
compute_only = os.path.join(tmp, "compute_only.pcapng")
Capture(named).write(compute_only, [q for q in Capture(named).packets if Capture.interface(q) == 0])
editcap("-F", "nsecpcap", compute_only, copy)
line, p = points(named, copy)
if "observation points (2)" not in line or "the same capture" not in p.stderr:
    problems.append(f"named capture and an unnamed copy of a point: {line.strip()} / {p.stderr.strip()[:300]}")
_, io = export("io", named, copy)
same("I/Os, named capture and an unnamed copy of a point", canonical(io, {}, FRAMES), canonical(ref_io, {}, FRAMES))
_, msg = export("messages", copy, named)
same("messages, named capture and an unnamed copy of a point", canonical(msg, {}, FRAMES), canonical(ref_msg, {}, FRAMES))

# ---- a dumpcap ring (PREFIX_NNNNN_DATE) with one file converted or rewritten ----
# One file of a one-point ring converted to pcap (no interface name, another extension), one of a
# two-point ring rewritten without interface names, another gzipped: the file continues the
# points of the file numbered before it (before, it was a point of its own: 2 points for 1, 4 for
# 2, I/Os across its ends incomplete), and no ring file is taken for missing.
import gzip  # noqa: E402
import shutil  # noqa: E402
one = generate("one", "--scenario", "nvme-1point", "--ios", "100")
for label, source, convert in (("one-point ring, a file as pcap", one, "pcap"),
                               ("two-point ring, a file without interface names", named, "unnamed")):
    ring_dir = os.path.join(tmp, "mixed_" + convert)
    os.makedirs(ring_dir)
    editcap("-c", "300", source, os.path.join(ring_dir, "port.pcapng"))
    files = sorted(os.path.join(ring_dir, f) for f in os.listdir(ring_dir))
    if len(files) < 4:
        problems.append(f"{label}: editcap wrote {len(files)} ring files: the case proves nothing")
        continue
    if convert == "pcap":
        editcap("-F", "nsecpcap", files[1], files[1][:-2])
        os.remove(files[1])
        files[1] = files[1][:-2]
    else:
        c = Capture(files[1])
        c.replace_interfaces(*[interface_block("") for _ in c.if_names])
        c.write(files[1])
    with open(files[2], "rb") as f_in, gzip.open(files[2] + ".gz", "wb") as f_out:
        shutil.copyfileobj(f_in, f_out)
    os.remove(files[2])
    files[2] += ".gz"
    want_points = Capture(source).if_names
    line, p = points(*files)
    if f"observation points ({len(want_points)})" not in line:
        problems.append(f"{label}: {line.strip()}")
    if "missing between" in p.stderr:
        problems.append(f"{label}: a ring file taken for missing: {p.stderr.strip()[:300]}")
    _, io = export("io", *files)
    _, ref = export("io", source)
    same(f"I/Os, {label}", canonical(io, {}, FRAMES), canonical(ref, {}, FRAMES))

# ---- unnamed interfaces with stamps at both ends of the 64-bit range (hostile if_tsoffset) ----
# The second file starts long after the first ended: two points, with the warning, and no
# arithmetic overflow on the way (the sanitizer job checks).
ends = [one_point_file(os.path.join(tmp, f"end{i}.pcapng"), i, interface_block(tsoffset_s=offset))
        for i, offset in enumerate((-9_200_000_000, 9_200_000_000))]
line, p = points(*ends)
if "observation points (2)" not in line or "after" not in p.stderr:
    problems.append(f"stamps at both ends of the range: {line.strip()[:200]}; {p.stderr.strip()[:200]}")

# ---- one file of two pcapng sections (two files joined with cat), unnamed interfaces ----
# A later section's unnamed interfaces are the first section's of the same number: the records of
# the same packets in one section.
whole = Capture(named)
whole.replace_interfaces(interface_block(), interface_block())
one_section = os.path.join(tmp, "one_section.pcapng")
whole.write(one_section)
half = len(whole.packets) // 2
parts = []
for k, packets in enumerate((whole.packets[:half], whole.packets[half:])):
    part = os.path.join(tmp, f"section{k}.pcapng")
    whole.write(part, packets)
    parts.append(part)
two_sections = cat(os.path.join(tmp, "two_sections.pcapng"), parts)
line, _ = points(two_sections)
if "observation points (2)" not in line:
    problems.append(f"two sections of unnamed interfaces: {line.strip()[:200]}")
_, want = export("io", one_section)
_, got = export("io", two_sections)
same("I/Os, two sections of unnamed interfaces", canonical(got, {}), canonical(want, {}))

# ---- per-point files joined with cat: sections that overlap in time ----
# Sections are read one after the other, each from the start of the capture: a later section's
# unnamed interface whose packets begin before the first section's end is an observation point of
# its own (the records of the two files given separately, names mapped), with a warning; two
# sniffers' eth0 as two sections get the two-sniffers warning, as two files do.
unnamed_hosts = [one_point_file(os.path.join(tmp, f"unnamed{i}.pcapng"), i, interface_block()) for i in range(2)]
catted = cat(os.path.join(tmp, "per_point_sections.pcapng"), unnamed_hosts)
line, p = points(catted)
if "observation points (2)" not in line or "per-point files joined with cat?" not in p.stderr:
    problems.append(f"per-point files joined with cat: {line.strip()[:200]}; {p.stderr.strip()[:300]}")
names_cat = {"if0": "if0", f"{catted} section 2:if0": f"{unnamed_hosts[1]}:if0"}
for kind in ("io", "messages"):
    _, want = export(kind, *unnamed_hosts)
    _, got = export(kind, catted)
    same(f"{kind}, per-point files joined with cat", canonical(got, names_cat, FRAMES), canonical(want, {}, FRAMES))
# Named per-point files joined with cat: each section's point is declared when the section is
# reached, after the others' I/Os were final: a warning says so and what to do.
ports = [one_point_file(os.path.join(tmp, f"port{i}.pcapng"), i, interface_block(f"port{i}")) for i in range(2)]
p = run_cli(cli, "analyze", cat(os.path.join(tmp, "port_sections.pcapng"), ports), "--no-progress")
if "pcapng section 2 begins" not in p.stderr or "join them with mergecap" not in p.stderr:
    problems.append(f"named per-point files joined with cat: no warning: {p.stderr.strip()[:300]}")
p = run_cli(cli, "analyze", two_sections, "--no-progress")
if "pcapng section 2 begins" in p.stderr:
    problems.append(f"two sections that follow each other in time: warned as overlapping: {p.stderr.strip()[:300]}")
eth0_catted = cat(os.path.join(tmp, "eth0_sections.pcapng"), hosts)
p = run_cli(cli, "analyze", eth0_catted, "--no-progress")
if "sections 1 and 2 both have interface eth0 and overlap in time without holding the same packets" not in p.stderr:
    problems.append(f"two hosts' eth0 as two sections: no warning that they are two sniffers: {p.stderr.strip()[:300]}")

# ---- snap lengths that cut the headers ----
vlan = generate("vlan", "--scenario", "nvme-2point", "--ios", "60", "--vlan", "1")
ipv6 = generate("ipv6", "--scenario", "nvme-2point", "--ios", "60", "--ipv6")
writes = generate("writes", "--scenario", "write-flows", "--flows", "2", "--messages", "6")
# Ethernet 14 + tag 4 + IPv4 20 + UDP 8 + BTH 12 = 58; IPv6: 14 + 40 + 8 = 62 before the BTH;
# an RDMA WRITE FIRST's RETH ends 16 bytes after the BTH.
cases = [(vlan, 54, "BTH cut by the snap length"), (ipv6, 60, "UDP header cut by the snap length"),
         (writes, 66, "extension headers cut by the snap length")]
for src, snap, why in cases:
    cut = os.path.join(tmp, f"{os.path.basename(src)}.s{snap}.pcapng")
    editcap("-s", str(snap), src, cut)
    for kind in ("io", "messages"):
        p, _ = export(kind, cut)
        if CUT not in p.stderr or why not in p.stderr or "at least 128 bytes" not in p.stderr:
            problems.append(f"export {kind}, {os.path.basename(src)} snapped at {snap}: no warning that the snap length "
                            f"cut the headers ({why}): {p.stderr.strip()[:300]}")
    whole = os.path.join(tmp, f"{os.path.basename(src)}.s128.pcapng")
    editcap("-s", "128", src, whole)
    p, records = export("io" if src != writes else "messages", whole)
    if CUT in p.stderr or not records:
        problems.append(f"{os.path.basename(src)} snapped at 128: {len(records)} records, stderr {p.stderr.strip()[:300]}")

fail_if(problems, "problems with unnamed points or header-cutting snaps")
print("unnamed points and header-cutting snaps: OK")
