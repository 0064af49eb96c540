# SPDX-License-Identifier: GPL-2.0-or-later
"""GPU binding (SPEC §7): with a GPU map written here, I/O records carry their host's GPU, node
and job, messages and flows their ends' GPUs and nodes and the job both ends share; analyze
--by gpu|node|job aggregates per GPU, node and job (checked against the generator's truth); the
diagnosis compares jobs; wrong maps are usage errors; in Wireshark the GPU map preference (UAT)
gives rdmatel.gpu.src, rdmatel.gpu.dst and rdmatel.job.

usage: test_gpu_map.py RDMATEL_CLI RDMATEL_SYNTH [PLUGIN_SO]
"""

import json
import os
import subprocess
import sys

from rdmatel_testlib import Tshark, fail_if, load_truth, run_cli, scratch_dir

# The map: NVMe hosts 1 and 2 in job "train", host 3 (made slow to prepare write data) in job
# "eval"; the GPUs of the RDMA WRITE flows split over both jobs; storage servers unbound.
MAP = {
    "10.1.0.1": ("h1", "node-a", "train"),
    "10.1.0.2": ("h2", "node-a", "train"),
    "10.1.0.3": ("h3", "node-b", "eval"),
    "10.3.0.1": ("g-a1", "node-a", "train"),
    "10.3.0.2": ("g-a2", "node-a", "eval"),
    "10.4.0.1": ("g-b1", "node-b", "train"),
    "10.4.0.2": ("g-b2", "node-b", "eval"),
}


def records(cli, kind, capture, *extra):
    out = run_cli(cli, "export", kind, capture, "--format", "jsonl", "--no-progress", *extra).stdout
    return [json.loads(line) for line in out.splitlines() if line.strip()]


def check_records(cli, capture, gpu_map):
    problems = []
    for r in records(cli, "io", capture, "--gpu-map", gpu_map):
        want = MAP.get(r["host"])
        got = (r.get("host_gpu"), r.get("host_node"), r.get("job"))
        if got != (want or (None, None, None)):
            problems.append(f"io {r['host']} cid {r['cid']}: {got}, map says {want}")
    for kind in ("messages", "flows"):
        for r in records(cli, kind, capture, "--gpu-map", gpu_map):
            s, d = MAP.get(r["src"]), MAP.get(r["dst"])
            want = (s and s[0], d and d[0], s and s[1], d and d[1], s[2] if s and d and s[2] == d[2] else None)
            got = tuple(r.get(k) for k in ("src_gpu", "dst_gpu", "src_node", "dst_node", "job"))
            if got != want:
                problems.append(f"{kind} {r['src']} > {r['dst']}: {got}, map says {want}")
    return problems


def by_table(report, title):
    """Rows of an analyze --by table: the first column and the numbers after it."""
    lines = report.splitlines()
    start = next((i for i, l in enumerate(lines) if l.startswith(title)), None)
    if start is None:
        return None
    rows = {}
    for line in lines[start + 2:]:
        if not line.strip():
            break
        cells = line.split()
        rows[cells[0]] = cells[1:]
    return rows


def check_by(cli, capture, gpu_map):
    """I/O count and mean IOL1 per job, GPU and node, against the truth's I/Os."""
    truth = [io for io in load_truth(capture)["ios"] if io["op"] in ("read", "write") and not io.get("admin")]
    problems = []
    for dim, index, title in (("job", 2, "NVMe I/O latency per AI job"), ("gpu", 0, "NVMe I/O latency per GPU"),
                              ("node", 1, "NVMe I/O latency per node")):
        report = run_cli(cli, "analyze", capture, "--gpu-map", gpu_map, "--by", dim, "--no-progress").stdout
        rows = by_table(report, title)
        if rows is None:
            problems.append(f"--by {dim}: no table '{title}'")
            continue
        want = {}
        for io in truth:
            if io["host"] in MAP:
                key = MAP[io["host"]][index]
                n, total, timed = want.get(key, (0, 0.0, 0))
                want[key] = (n + 1, total + io.get("iol1_us", 0.0), timed + ("iol1_us" in io))
        for key, (n, total, timed) in want.items():
            row = rows.get(key)
            if not row:
                problems.append(f"--by {dim}: no row {key}")
                continue
            if int(row[0]) != n or abs(float(row[1]) - total / timed) > 0.0015:
                problems.append(f"--by {dim} {key}: {row[0]} I/Os, IOL1 avg {row[1]}; truth {n}, {total / timed:.4f}")
        if set(rows) != set(want):
            problems.append(f"--by {dim}: rows {sorted(rows)}, truth {sorted(want)}")
    return problems


def check_job_diagnosis(cli, capture, gpu_map):
    jobs = {r["job"]: r for r in records(cli, "diagnosis", capture, "--gpu-map", gpu_map) if r["scope"] == "job"}
    problems = []
    if set(jobs) != {"train", "eval"}:
        return [f"diagnosis job records: {sorted(jobs)}"]
    if jobs["eval"]["segment"] != "host" or jobs["eval"].get("explained_by") != "host 10.1.0.3":
        problems.append(f"job eval (its host slow): {jobs['eval']}")
    if jobs["train"]["segment"] != "none":
        problems.append(f"job train (healthy): {jobs['train']}")
    return problems


def check_usage_errors(cli, capture, tmp):
    bad = os.path.join(tmp, "bad.csv")
    with open(bad, "w") as f:
        f.write("ip,gpu,node,job\n10.1.0.1,g,n\n10.1.0.x,g2,n\n")
    problems = []
    p = run_cli(cli, "analyze", capture, "--gpu-map", bad, check=False)
    if p.returncode != 2 or "line 3" not in p.stderr or "10.1.0.x" not in p.stderr:
        problems.append(f"bad GPU map: exit {p.returncode}, {p.stderr.strip()!r}")
    p = run_cli(cli, "analyze", capture, "--by", "job", check=False)
    if p.returncode != 2 or "GPU map" not in p.stderr:
        problems.append(f"--by without a map: exit {p.returncode}, {p.stderr.strip()!r}")
    p = run_cli(cli, "analyze", capture, "--gpu", "10.1.0.1,a,b", "--gpu", "10.1.0.1,c,d", check=False)
    if p.returncode != 2 or "twice" not in p.stderr:
        problems.append(f"an IP bound twice: exit {p.returncode}, {p.stderr.strip()!r}")
    return problems


def check_wireshark(plugin, capture):
    ts = Tshark(plugin)
    try:
        uat = []
        for ip, (gpu, node, job) in MAP.items():
            uat += ["-o", f'uat:rdmatel_gpu_map:"{ip}","{gpu}","{node}","{job}"']
        rows = ts.fields(capture, ["ip.src", "ip.dst", "rdmatel.gpu.src", "rdmatel.gpu.dst", "rdmatel.job"],
                         display_filter="rdmatel", two_pass=False, extra=uat)
    finally:
        ts.close()
    problems = []
    bound = 0
    for r in rows:
        s, d = MAP.get(r["ip.src"]), MAP.get(r["ip.dst"])
        want = (s[0] if s else "", d[0] if d else "", s[2] if s and d and s[2] == d[2] else "")
        got = (r["rdmatel.gpu.src"], r["rdmatel.gpu.dst"], r["rdmatel.job"])
        bound += bool(s or d)
        if got != want:
            problems.append(f"tshark {r['ip.src']} > {r['ip.dst']}: {got}, map says {want}")
    if not bound:
        problems.append("tshark: no frame between bound IPs")
    return problems


def main():
    cli, synth = sys.argv[1], sys.argv[2]
    plugin = sys.argv[3] if len(sys.argv) > 3 else None
    tmp = scratch_dir("rdmatel_gpu_")
    capture = os.path.join(tmp, "jobs.pcapng")
    subprocess.run([synth, "--scenario", "mixed", "--hosts", "3", "--storages", "2", "--ios", "600", "--loss", "0",
                    "--slow-host", "3=300", "--out", capture], check=True, capture_output=True, timeout=300)
    gpu_map = os.path.join(tmp, "gpus.csv")
    with open(gpu_map, "w") as f:
        f.write("ip,gpu,node,job\n# written by test_gpu_map.py\n")
        for ip, (gpu, node, job) in MAP.items():
            f.write(f"{ip},{gpu},{node},{job}\n")
    problems = check_records(cli, capture, gpu_map)
    problems += check_by(cli, capture, gpu_map)
    problems += check_job_diagnosis(cli, capture, gpu_map)
    problems += check_usage_errors(cli, capture, tmp)
    if plugin:
        problems += check_wireshark(plugin, capture)
    fail_if(problems, "GPU map problems", shown=20)
    print("gpu map: records, --by gpu/node/job against the truth, job diagnosis, usage errors" +
          (", Wireshark fields" if plugin else ""))


if __name__ == "__main__":
    main()
