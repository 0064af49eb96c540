# SPDX-License-Identifier: GPL-2.0-or-later
"""--clock-offset must not change which copies of a packet export paths pairs across points.

IPv6 has no IP ID, so a go-back-N resend is identical to its original: copies are told apart by
when they passed each point. With jittered stamps (+-250 ns) a copy may be stamped at a leaf's
storage port a few ns before its uplink port. Once, any --clock-offset (even NAME=0, which moves
no stamp) made the points' relative offsets "exact" (no slack), so such a copy could not follow
its own copy and joined a resend that was lost a hop earlier: a spurious hop spine1 -> leafB-stor
(one packet, ~100 us), one loss too few before leafB-up and one too many after it.

Checks, on captures of that recipe (seeds where it showed):
  * export paths with --clock-offset leafA-gpu=0 equals export paths without, line by line, but
    for what a given offset sets by design on the hops of the named point (offset_applied_ns 0,
    raw false: docs/metrics.md, Hop);
  * with the true offsets given (0 for every point; on one capture the generator's own clock
    offsets, negated), every hop's packets, losses and delays equal the generator's truth.
Expected values come from the generator's truth (and from the run without the option), never
from rdmatel's code.

Args: CLI SYNTH (either order: the one named *synth* is the generator)."""
import json
import os
import subprocess
import sys

from rdmatel_testlib import fail_if, load_truth, run_cli, scratch_dir

a, b = sys.argv[1], sys.argv[2]
synth, cli = (a, b) if "synth" in os.path.basename(a) else (b, a)
tmp = scratch_dir("rdmatel_offset_pairing_")
problems = []

RECIPE = ["--scenario", "nvme-3point", "--points", "5", "--ios", "97", "--jitter-ns", "250", "--ipv6",
          "--loss", "0.02"]
POINTS = ["leafA-gpu", "leafA-up", "spine1", "leafB-up", "leafB-stor"]
# Seeds where the bug showed (before the fix, --clock-offset leafA-gpu=0 moved losses and made
# spurious hops): 105 (the report's), 122, 143.
SEEDS = (105, 122, 143)
# One capture with the capture clocks apart: what the generator adds to each point's stamps.
CLOCKS = {"spine1": 3_000_000, "leafB-up": -3414, "leafB-stor": -1_500_000}
CLOCK_SEED = 130


def generate(name, *args):
    out = os.path.join(tmp, name + ".pcapng")
    subprocess.run([synth, *RECIPE, *args, "--out", out], check=True, capture_output=True, timeout=120)
    return out


def export_paths(cap, *extra):
    return run_cli(cli, "export", "paths", cap, "--format", "jsonl", "--no-progress", *extra).stdout


def records(text):
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def key(r):
    return (r["src"], r["dst"], int(r["dst_qpn"]), r["from_point"], r["to_point"])


def compare_truth(label, truth_hops, got):
    """Every hop of the truth with the same packets and losses, and the same delays (exact to
    the ns, avg within 1: the truth is the stamps' difference with the clock offsets taken off,
    as rdmatel's once it is given them); no hop the truth does not have."""
    want = {key(h): h for h in truth_hops}
    have = {key(r): r for r in got}
    for k in sorted(set(want) - set(have)):
        # A flow whose every packet was lost before B never shows rdmatel that B is on its path.
        if want[k]["delivered"] == 0 and want[k]["packets"] <= 2:
            continue
        problems.append(f"{label}: hop {k} missing (truth packets {want[k]['packets']} lost {want[k]['lost']})")
    for k in sorted(set(have) - set(want)):
        problems.append(f"{label}: hop {k} not in the truth: packets {have[k]['packets']} lost {have[k]['lost']} "
                        f"avg {have[k].get('avg_us')} us")
    for k in sorted(set(want) & set(have)):
        w, g = want[k], have[k]
        for f in ("packets", "lost"):
            if int(g[f]) != w[f]:
                problems.append(f"{label}: {k} {f} {g[f]}, truth {w[f]}")
        if w["delivered"] == 0 or "avg_us" not in g:
            continue
        for f, tf, tol in (("min_us", "min_ns", 0), ("max_us", "max_ns", 0), ("avg_us", "avg_ns", 1)):
            if abs(round(float(g[f]) * 1000) - float(w[tf])) > tol + 0.5:
                problems.append(f"{label}: {k} {f} {g[f]}, truth {w[tf]} ns")


def same_but_offset_fields(label, plain, zero, point):
    """`zero` (export paths with --clock-offset POINT=0) is `plain` line for line, but that the
    hops from or to POINT carry offset_applied_ns 0 and raw false (an offset was given)."""
    pl, zl = plain.splitlines(), zero.splitlines()
    if len(pl) != len(zl):
        problems.append(f"{label}: {len(zl)} records with --clock-offset {point}=0, {len(pl)} without")
    for i, (x, y) in enumerate(zip(pl, zl)):
        if x == y:
            if point in (json.loads(x)["from_point"], json.loads(x)["to_point"]):
                problems.append(f"{label}: line {i + 1}: hop of {point} without offset_applied_ns: {y[:200]}")
            continue
        rx, ry = json.loads(x), json.loads(y)
        if point in (rx["from_point"], rx["to_point"]):
            want = dict(rx, raw=False, offset_applied_ns=0)
            if ry == want:
                continue
        problems.append(f"{label}: line {i + 1} differs: {x[:240]} vs {y[:240]}")
        if sum(p.startswith(label) for p in problems) > 5:
            break


for seed in SEEDS:
    cap = generate(f"s{seed}", "--seed", str(seed))
    truth = load_truth(cap)["hops"]
    plain = export_paths(cap)
    compare_truth(f"seed {seed}, no offset", truth, records(plain))
    zero = export_paths(cap, "--clock-offset", "leafA-gpu=0")
    same_but_offset_fields(f"seed {seed}, leafA-gpu=0", plain, zero, "leafA-gpu")
    compare_truth(f"seed {seed}, leafA-gpu=0", truth, records(zero))
    # The true offsets, all 0.
    every = [x for p in POINTS for x in ("--clock-offset", f"{p}=0")]
    compare_truth(f"seed {seed}, every point 0", truth, records(export_paths(cap, *every)))

# The capture clocks apart (ms between the spine and the storage leaf, 3.4 us between the
# storage leaf's ports): given the true offsets (what to add to a point's stamps: minus what the
# generator added), the truth's hops, delays included.
cap = generate("clocks", "--seed", str(CLOCK_SEED), *[x for n, v in CLOCKS.items() for x in ("--clock-offset", f"{n}={v}")])
given = [x for n, v in CLOCKS.items() for x in ("--clock-offset", f"{n}={-v}")]
compare_truth(f"seed {CLOCK_SEED}, true offsets", load_truth(cap)["hops"], records(export_paths(cap, *given)))

fail_if(problems, "clock offset pairing problems", 40)
print("clock offset pairing: OK")
