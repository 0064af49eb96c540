# SPDX-License-Identifier: GPL-2.0-or-later
"""Packets the capture itself dropped (pcapng interface statistics, as dumpcap writes them): the
generator leaves out a share of one point's packets that the network delivered and writes the
count in an interface statistics block (its truth: points[].capture_dropped). The CLI must report
exactly that count at that point (header and warning), 0 elsewhere, and say that the losses it
locates on hops into that point may be the capture's; through the fast reader and libwiretap
(gzip), on one thread and two. Without statistics blocks, nothing of the kind is said."""
import gzip
import json
import os
import shutil
import subprocess
import sys

from rdmatel_testlib import Tshark, fail_if, run_cli, scratch_dir

synth, cli = sys.argv[1], sys.argv[2]
plugin = sys.argv[3] if len(sys.argv) > 3 else None
tmp = scratch_dir("rdmatel_capture_drops_")
problems = []

cap = os.path.join(tmp, "drops.pcapng")
subprocess.run([synth, "--scenario", "nvme-2point", "--ios", "200", "--seed", "3", "--capture-drops",
                "leafB-stor=0.02", "--out", cap], check=True, capture_output=True)
with open(cap.replace(".pcapng", ".truth.json")) as f:
    truth = {p["name"]: p["capture_dropped"] for p in json.load(f)["points"]}
if not truth.get("leafB-stor") or truth.get("leafA-gpu"):
    problems.append(f"generator: capture drops {truth}, wanted some at leafB-stor only")
gz = cap + ".gz"
with open(cap, "rb") as src, gzip.open(gz, "wb") as dst:
    shutil.copyfileobj(src, dst)

for path in (cap, gz):
    for threads in ("1", "2"):
        label = f"{os.path.basename(path)} --threads {threads}"
        p = run_cli(cli, "analyze", path, "--threads", threads, "--no-progress")
        header = next((l for l in p.stdout.splitlines() if "observation points (" in l), "")
        for point, n in truth.items():
            shown = f"{n} dropped by the capture"
            at = header.find(f" {point} [")
            part = header[at:header.find("]", at)] if at >= 0 else ""
            if n and shown not in part:
                problems.append(f"{label}: {point}: no '{shown}' in {part!r}")
            if not n and "dropped by the capture" in part:
                problems.append(f"{label}: {point} shown with capture drops it has not: {part!r}")
        want = f"{truth['leafB-stor']} at point leafB-stor"
        if "the capture itself dropped packets" not in p.stderr or want not in p.stderr:
            problems.append(f"{label}: no warning with {want!r}: {p.stderr.strip()[:300]}")
        verdicts = [l for l in p.stdout.splitlines() if "loses its packets" in l and "and leafB-stor" in l]
        if not verdicts:
            problems.append(f"{label}: no flow loses packets on the hop into leafB-stor: the check proves nothing")
        bad = [v for v in verdicts if f"it dropped {truth['leafB-stor']} packets at leafB-stor" not in v]
        if bad:
            problems.append(f"{label}: {len(bad)} verdicts on the hop into leafB-stor without the capture's drops: "
                            f"{bad[0].strip()[:200]}")

# The diagnosis: a lossy pair whose hop into leafB-stor loses most, where the capture dropped 3 %:
# its finding says the capture may have lost them (before, the message-flow verdicts said so and
# the diagnosis did not), in the CLI on one thread and two, and in the plugin, which reads the
# interface statistics when the first pass ends (before, it never saw them).
lossy = os.path.join(tmp, "lossy_drops.pcapng")
subprocess.run([synth, "--scenario", "nvme-2point", "--hosts", "3", "--storages", "3", "--ios", "900", "--loss", "0",
                "--lossy-path", "2:1=0.03", "--capture-drops", "leafB-stor=0.03", "--out", lossy], check=True,
               capture_output=True)
with open(lossy.replace(".pcapng", ".truth.json")) as f:
    dropped = {p["name"]: p["capture_dropped"] for p in json.load(f)["points"]}["leafB-stor"]
caveat = f"(or the capture does: it dropped {dropped} packets at leafB-stor)"
for threads in ("1", "2"):
    p = run_cli(cli, "export", "diagnosis", lossy, "--no-progress", "--threads", threads)
    findings = [json.loads(l) for l in p.stdout.splitlines() if l.strip() and json.loads(l)["rank"]]
    into = [r for r in findings if "towards leafB-stor" in r["evidence"]]
    if not into or any(caveat not in r["evidence"] for r in into):
        problems.append(f"diagnosis, {threads} thread(s): findings on the hop into leafB-stor without {caveat!r}: "
                        f"{[r['evidence'][-200:] for r in findings]}")
if plugin:
    ts = Tshark(plugin)
    try:
        table = ts.run("-2", "-r", ts.stage(lossy), "-q", "-z", "rdmatel,diagnosis").stdout
    finally:
        ts.close()
    if "towards leafB-stor" not in table or caveat not in table:
        problems.append(f"plugin: the diagnosis table lacks {caveat!r}: {table[-600:]}")

# The same traffic without statistics blocks: nothing about the capture's drops.
plain = os.path.join(tmp, "plain.pcapng")
subprocess.run([synth, "--scenario", "nvme-2point", "--ios", "200", "--seed", "3", "--out", plain], check=True,
               capture_output=True)
p = run_cli(cli, "analyze", plain, "--no-progress")
if "dropped by the capture" in p.stdout or "capture itself dropped" in p.stderr or "the capture does" in p.stdout:
    problems.append("a capture without interface statistics is said to have dropped packets")

fail_if(problems, "problems with the capture's own drops")
print(f"capture drops: {truth['leafB-stor']} at leafB-stor reported on 4 runs; none without statistics: OK")
