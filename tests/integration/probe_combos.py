# SPDX-License-Identifier: GPL-2.0-or-later
"""Probe (not in CTest): random combinations of the generator's real-world knobs, each checked
against its ground truth by the existing checkers, plus ring-file splits (editcap -c) compared
with the single file, clock offsets against the truth, paths against the truth's hops.

usage: probe_combos.py SYNTH CLI N [SEED0] [OUTDIR]    (failures appended to OUTDIR/failures.txt)"""
import json
import os
import random
import subprocess
import sys

from rdmatel_testlib import load_truth

synth, cli, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
seed0 = int(sys.argv[4]) if len(sys.argv) > 4 else 1000
outdir = sys.argv[5] if len(sys.argv) > 5 else "/tmp/probe_out"
os.makedirs(outdir, exist_ok=True)
here = os.path.dirname(os.path.abspath(__file__))
FRAMES = ("cmd_frame", "rsp_frame", "first_frame", "last_frame")


def point_names(scen, points, nvme):
    if points is None:
        points = {"nvme-1point": 1, "nvme-3point": 3}.get(scen, 2)
    names = ["leafA-gpu"]
    if points >= 4:
        names.append("leafA-up")
    if points >= 3:
        names.append("spine1")
    if points >= 5:
        names.append("leafB-up")
    if points >= 2:
        names.append("leafB-stor" if nvme else "leafB-gpu")
    return names


def draw(rng):
    scen = rng.choice(["nvme-2point", "nvme-1point", "nvme-3point", "nvme-midstream", "mixed", "write-flows",
                       "nvme-2point", "nvme-3point", "mixed"])
    a = ["--scenario", scen]
    nvme = scen != "write-flows"
    if nvme:
        a += ["--ios", str(rng.randint(60, 150))]
    else:
        a += ["--flows", str(rng.randint(2, 4)), "--messages", str(rng.randint(5, 12))]
    points = None
    if rng.random() < 0.6:
        points = rng.choice([1, 2, 3, 4, 5, 4, 5])
        a += ["--points", str(points)]
    names = point_names(scen, points, nvme)
    if len(names) > 1 and rng.random() < 0.75:
        for name in rng.sample(names, rng.choice([1, 1, 2]) if len(names) > 2 else 1):
            mag = 10 ** rng.uniform(3, 9.7)  # 1 us .. 5 s
            a += ["--clock-offset", f"{name}={int(rng.choice([-1, 1]) * mag)}"]
    if rng.random() < 0.3:
        a.append("--routed")
    if nvme and rng.random() < 0.25:
        a.append("--cross")
    if rng.random() < 0.6:
        a += ["--loss", rng.choice(["0", "0.005", "0.01", "0.02", "0.03"])]
    if rng.random() < 0.4:
        a += ["--vlan", str(rng.choice([0, 1, 2]))]
    if rng.random() < 0.35:
        a.append("--ipv6")
    if rng.random() < 0.5:
        a += ["--order", rng.choice(["time", "blocks"])]
    if rng.random() < 0.4:
        a += ["--jitter-ns", str(rng.choice([0, 100, 250, 400]))]
    if rng.random() < 0.4:
        # 128 and up only: below it the SQE is cut ("sqe_cut"), which SPEC does not cover.
        a += ["--snaplen", str(rng.choice([128, 144, 160, 200, 256]))]
    if rng.random() < 0.3:
        a.append("--psn-wrap")
    if nvme and rng.random() < 0.15:
        a.append("--no-connect")
    if rng.random() < 0.2:
        a += ["--pmtu", rng.choice(["512", "1024", "2048"])]
    # Topology and designed faults (drawn last, so the combinations above keep their seeds' draws).
    if nvme and rng.random() < 0.3:
        least = 2 if "--cross" in a else 1  # hosts and storage servers behind both leaves
        a += ["--hosts", str(rng.randint(least, 3)), "--storages", str(rng.randint(least, 3)), "--queues",
              str(rng.randint(1, 3))]
    if len(names) > 1 and rng.random() < 0.2:
        i = rng.randrange(len(names) - 1)
        pair = (names[i], names[i + 1]) if rng.random() < 0.5 else (names[i + 1], names[i])
        a += ["--drop-between", f"{pair[0]}:{pair[1]}={rng.choice(['0.01', '0.03', '0.05'])}"]
    if len(names) > 1 and rng.random() < 0.2:
        i = rng.randrange(len(names) - 1)
        a += ["--ecn-mark", f"{names[i]}:{names[i + 1]}={rng.choice(['0.05', '0.2', '0.5'])}"]
    return a, nvme


def run(cmd, timeout=600):
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)


def export(kind, *caps):
    p = run([cli, "export", kind, *caps, "--format", "jsonl", "--no-progress"])
    if p.returncode != 0:
        return None, p.stderr
    return [json.loads(l) for l in p.stdout.splitlines() if l.strip()], p.stderr


def canonical(recs, drop=()):
    return sorted(json.dumps({k: v for k, v in r.items() if k not in drop}, sort_keys=True) for r in recs)


def diff(a, b):
    sa, sb = set(a), set(b)
    return sorted(sa - sb), sorted(sb - sa)


def check_paths(truth, got):
    probs = []
    offs = {p["name"]: p.get("clock_offset_ns", 0) for p in truth["points"]}
    key = lambda r: (r["src"], r["dst"], int(r["dst_qpn"]), r["from_point"], r["to_point"])
    want = {key(h): h for h in truth.get("hops", [])}
    have = {key(r): r for r in got}
    for k in sorted(set(want) - set(have)):
        if want[k]["delivered"] == 0 and want[k]["packets"] <= 2:
            continue
        probs.append(f"paths: hop {k} missing (truth {want[k]})")
    for k in sorted(set(have) - set(want)):
        probs.append(f"paths: hop {k} not in truth: {have[k]}")
    for k in sorted(set(want) & set(have)):
        w, g = want[k], have[k]
        for f in ("packets", "lost"):
            if int(g[f]) != w[f]:
                probs.append(f"paths: {k} {f} {g[f]}, truth {w[f]}")
        if w["delivered"] == 0:
            continue
        d = offs.get(k[4], 0) - offs.get(k[3], 0)
        for f, tf, tol in (("min_us", "min_ns", 0), ("max_us", "max_ns", 0), ("avg_us", "avg_ns", 1)):
            if f not in g:
                probs.append(f"paths: {k} {f} absent")
            elif abs(round(float(g[f]) * 1000) - (float(w[tf]) + d)) > tol + 0.5:
                probs.append(f"paths: {k} {f} {g[f]}, truth {w[tf]} ns (+{d})")
    return probs


def check_offsets(truth, got):
    probs = []
    offs = {p["name"]: p.get("clock_offset_ns", 0) for p in truth["points"]}
    for r in got:
        if "uncertainty_ns" not in r:
            continue  # one direction only: the offset holds the one-way delay, and claims no bound
        want = offs[r["reference"]] - offs[r["point"]]
        err = abs(r["offset_ns"] - want)
        if err > r["uncertainty_ns"] + 1:
            probs.append(f"offsets: {r['point']} -> {r['reference']} = {r['offset_ns']} ± {r['uncertainty_ns']}, "
                         f"truth {want} (both directions {r['both_directions']})")
    # Offsets come from NVMe capsules seen at both points (docs/metrics.md): none without I/Os.
    if len(truth["points"]) > 1 and truth["ios"] and not got:
        probs.append("offsets: none reported on a multi-point capture with NVMe I/Os")
    return probs


def probe(i, args, nvme, rng):
    cap = os.path.join(outdir, f"c{i}.pcapng")
    p = run([synth, *args, "--out", cap], 300)
    if p.returncode != 0:
        return [f"generator failed: {p.stderr.strip()}"]
    truth = load_truth(cap)
    probs = []
    for script in (["test_cli_truth.py"] if nvme and truth["ios"] else []) + ["test_messages_truth.py"]:
        p = run([sys.executable, os.path.join(here, script), cli, cap], 1200)
        if p.returncode != 0:
            probs.append(f"{script}:\n" + "\n".join((p.stdout + p.stderr).strip().splitlines()[:25]))
    paths, _ = export("paths", cap)
    probs += check_paths(truth, paths or [])[:20]
    offs, _ = export("offsets", cap)
    probs += check_offsets(truth, offs or [])
    # Ring files: split in file order, given in a random order: the single file's records but
    # for frame numbers.
    if rng.random() < 0.6:
        k = rng.randint(2, 4)
        count = truth["packets"] // k + 1
        ringdir = os.path.join(outdir, f"ring{i}")
        os.makedirs(ringdir, exist_ok=True)
        subprocess.run(["editcap", "-c", str(count), cap, os.path.join(ringdir, "r.pcapng")], check=True,
                       capture_output=True)
        files = sorted(os.path.join(ringdir, f) for f in os.listdir(ringdir))
        rng.shuffle(files)
        for kind in ("io", "messages", "paths", "flows"):
            single, _ = export(kind, cap)
            ring, err = export(kind, *files)
            if ring is None:
                probs.append(f"ring {k} files {kind}: CLI failed {err[:300]}")
                continue
            a, b = diff(canonical(ring, FRAMES), canonical(single, FRAMES))
            if a or b or len(ring) != len(single):
                probs.append(f"ring {k} files ({kind}): {len(ring)} vs single {len(single)}; {len(a)}/{len(b)} "
                             f"differ; first ring-only {a[:1]} single-only {b[:1]}")
    return probs


rng = random.Random(seed0)
fails = 0
with open(os.path.join(outdir, "log.txt"), "a") as log:
    for i in range(n):
        args, nvme = draw(rng)
        args += ["--seed", str(seed0 + i)]
        probs = probe(i, args, nvme, rng)
        line = f"[{i}] {'FAIL' if probs else 'ok'}: {' '.join(args)}"
        print(line, flush=True)
        log.write(line + "\n")
        if probs:
            fails += 1
            with open(os.path.join(outdir, "failures.txt"), "a") as f:
                f.write(line + "\n" + "\n".join(probs) + "\n\n")
            for pr in probs[:6]:
                print("    " + pr.replace("\n", "\n    ")[:1500])
        else:
            cap = os.path.join(outdir, f"c{i}")
            for ext in (".pcapng", ".truth.json"):
                if os.path.exists(cap + ext):
                    os.remove(cap + ext)
print(f"{fails} of {n} combinations failed")
