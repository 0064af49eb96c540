# SPDX-License-Identifier: GPL-2.0-or-later
"""Sniffers that did not capture the same span, one file (or ring) per port: a copy missing at a
point that was not capturing is not a loss. The generator's lossless captures (its truth: no hop
loses a packet), split into one file per point as each port's sniffer writes it (tshark -w keeps
every interface block, only the port's packets):
 - the storage sniffer stopped 0.3 s before the compute one, or started 0.3 s after it: before,
   every packet the compute point saw meanwhile was lost on leafA-gpu -> leafB-stor (297 and 233 of
   3,400) and the diagnosis blamed that link; now none, with a warning that says why;
 - one sniffer per port writing a dumpcap ring (PREFIX_NNNNN_DATE), one middle file of the
   storage port's missing: before, 481 packets lost on leafB-up -> leafB-stor and the diagnosis
   blamed it, no warning; now none, and a warning names the missing file;
 - a multi-point ring with a middle file missing: no loss, the warning;
 - the same files complete: the truth's hops, no such warning (nothing left out that was there)."""
import json
import os
import subprocess
import sys

from rdmatel_testlib import fail, fail_if, run_cli, scratch_dir

synth, cli = sys.argv[1], sys.argv[2]
tmp = scratch_dir("rdmatel_spans_")
problems = []
checked = 0


def generate(name, *args):
    out = os.path.join(tmp, name + ".pcapng")
    subprocess.run([synth, *args, "--loss", "0", "--order", "time", "--out", out], check=True, capture_output=True)
    with open(out.replace(".pcapng", ".truth.json")) as f:
        return out, json.load(f)


def port_file(capture, point, out, extra=""):
    """The packets of one point (and every interface block), as that port's sniffer wrote them."""
    flt = f'frame.interface_name == "{point}"' + (f" && ({extra})" if extra else "")
    subprocess.run(["tshark", "-r", capture, "-Y", flt, "-w", out], check=True, capture_output=True)
    return out


def stamps(capture):
    out = subprocess.run(["tshark", "-r", capture, "-T", "fields", "-e", "frame.time_epoch"], check=True,
                         capture_output=True, text=True).stdout.split()
    return float(out[0]), float(out[-1])


def hops(*captures):
    p = run_cli(cli, "export", "paths", *captures, "--no-progress")
    return [json.loads(line) for line in p.stdout.splitlines() if line.strip()], p.stderr


def check(label, captures, want_warning, truth_packets=None):
    global checked
    records, stderr = hops(*captures)
    lost = sum(r["lost"] for r in records)
    checked += 1
    if lost:
        problems.append(f"{label}: {lost} packets lost on hops, the truth has none: "
                        f"{[(r['from_point'], r['to_point'], r['lost']) for r in records if r['lost']][:5]}")
    if want_warning and want_warning not in stderr:
        problems.append(f"{label}: no warning containing {want_warning!r}: {stderr[:400]}")
    if not want_warning and ("not counted lost" in stderr or "missing between" in stderr):
        problems.append(f"{label}: a warning of packets left out where nothing was: {stderr[:400]}")
    if truth_packets is not None and sum(r["packets"] for r in records) != truth_packets:
        problems.append(f"{label}: {sum(r['packets'] for r in records)} hop packets, the truth {truth_packets}")
    return records


# Two sniffers, one per port.
two, truth = generate("two", "--scenario", "nvme-2point", "--duration-s", "2", "--seed", "3")
truth_packets = sum(h["packets"] for h in truth["hops"])
gpu = port_file(two, "leafA-gpu", os.path.join(tmp, "gpu.pcapng"))
stor = port_file(two, "leafB-stor", os.path.join(tmp, "stor.pcapng"))
check("both ports' files, whole", [gpu, stor], None, truth_packets)
first, last = stamps(stor)
early = port_file(two, "leafB-stor", os.path.join(tmp, "stor_early.pcapng"), f"frame.time_epoch < {last - 0.3:.9f}")
check("storage sniffer stopped 0.3 s early", [gpu, early], "after its last")
late = port_file(two, "leafB-stor", os.path.join(tmp, "stor_late.pcapng"), f"frame.time_epoch > {first + 0.3:.9f}")
check("storage sniffer started 0.3 s late", [gpu, late], "before its first packet")

# One ring per port (5 points), one middle file of the storage port's missing.
five, truth5 = generate("five", "--scenario", "nvme-3point", "--points", "5", "--duration-s", "3", "--seed", "5")
rings = os.path.join(tmp, "rings")
os.makedirs(rings)
for point in ("leafA-gpu", "leafA-up", "spine1", "leafB-up", "leafB-stor"):
    whole = port_file(five, point, os.path.join(tmp, point + ".pcapng"))
    subprocess.run(["editcap", "-c", "900", whole, os.path.join(rings, point + ".pcapng")], check=True,
                   capture_output=True)
files = sorted(os.path.join(rings, f) for f in os.listdir(rings))
check("per-port rings, complete", files, None, sum(h["packets"] for h in truth5["hops"]))
missing = [f for f in files if os.path.basename(f).startswith("leafB-stor_00002_")]
if len(missing) != 1:
    fail(f"no ring file leafB-stor_00002: {files}")
check("per-port rings, leafB-stor_00002 missing", [f for f in files if f not in missing],
      "ring file number 2 is missing between")

# One multi-point ring (every port in each file), its file 00003 missing.
ring = os.path.join(tmp, "ring")
os.makedirs(ring)
subprocess.run(["editcap", "-c", "2500", five, os.path.join(ring, "all.pcapng")], check=True, capture_output=True)
files = sorted(os.path.join(ring, f) for f in os.listdir(ring))
check("multi-point ring, complete", files, None)
check("multi-point ring, file 00003 missing", [f for f in files if "_00003_" not in os.path.basename(f)],
      "ring file number 3 is missing between")

# A point whose traffic begins 12 ms after the point before it (the compute clock 29.9 ms ahead, the
# first copies towards storage lost on the way): not a sniffer started late, the losses count (a
# first version left one out, and only when the capture was given as ring files).
late, truth_late = generate("late_traffic", "--scenario", "nvme-2point", "--ios", "118", "--clock-offset",
                            "leafA-gpu=29929651", "--vlan", "0", "--ipv6", "--snaplen", "160", "--ecn-mark",
                            "leafA-gpu:leafB-stor=0.2", "--seed", "56030")
late_ring = os.path.join(tmp, "late_ring")
os.makedirs(late_ring)
subprocess.run(["editcap", "-c", "1200", late, os.path.join(late_ring, "r.pcapng")], check=True, capture_output=True)
want = {(h["src"], h["dst"], h["dst_qpn"], h["from_point"], h["to_point"]): (h["packets"], h["lost"])
        for h in truth_late["hops"]}
for label, files in (("single file", [late]), ("ring files", sorted(os.path.join(late_ring, f)
                                                                    for f in os.listdir(late_ring)))):
    records, _ = hops(*files)
    got = {(r["src"], r["dst"], r["dst_qpn"], r["from_point"], r["to_point"]): (r["packets"], r["lost"])
           for r in records}
    checked += 1
    if got != want:
        problems.append(f"traffic beginning later at a point, {label}: "
                        f"{sorted(set(got.items()) ^ set(want.items()))[:4]}")

fail_if(problems, "losses invented where a point was not capturing")
print(f"OK: {checked} arrangements of sniffers' files, no loss where a point was not capturing")
