# SPDX-License-Identifier: GPL-2.0-or-later
"""Real captures (Linux soft-RoCE, nvmet-rdma, perftest, rping) against the facts Wireshark 4.0
recorded about them (captures/*.facts.json): command counts, and IOL1/IOL2 against Wireshark's
own nvme.cmd_latency at the compute and storage interfaces (the same quantity when nothing is
retransmitted)."""
import gzip
import json
import os
import shutil
import statistics
import sys

from rdmatel_testlib import SKIP, cli_io_records, fail_if, run_cli, scratch_dir

cli, capdir = sys.argv[1], sys.argv[2]
if not os.path.isdir(capdir):
    print(f"SKIP: no real captures at {capdir}")
    sys.exit(SKIP)

tmp = scratch_dir("rdmatel_real_")
problems = []


def unpack(name):
    dst = os.path.join(tmp, name.replace(".gz", ""))
    with gzip.open(os.path.join(capdir, name)) as src, open(dst, "wb") as out:
        shutil.copyfileobj(src, out)
    return dst


def facts(name):
    with open(os.path.join(capdir, name.replace(".pcapng.gz", ".facts.json"))) as f:
        return json.load(f)


# --- NVMe over soft-RoCE, two points, CM included ---
name = "nvme_a_noloss.pcapng.gz"
if os.path.exists(os.path.join(capdir, name)):
    fx = facts(name)
    cap = unpack(name)
    recs = cli_io_records(cli, cap)
    nv = fx["nvme_per_interface"]["leafA-gpu"]
    in_capsule = fx["multi_packet_SEND_messages_per_interface(SEND_FIRST)"]["leafA-gpu"]
    reads = sum(1 for r in recs if r["op"] == "read")
    writes = sum(1 for r in recs if r["op"] == "write")
    if reads != nv["io_cmd:read"]:
        problems.append(f"reads {reads}, Wireshark decoded {nv['io_cmd:read']}")
    # Wireshark 4.0 misses the in-capsule writes (SEND FIRST+LAST); rdmatel must count them.
    if writes != nv["io_cmd:write"] + in_capsule:
        problems.append(f"writes {writes}, want {nv['io_cmd:write']} + {in_capsule} in-capsule")
    if len(recs) != nv["commands_total"] + in_capsule:
        problems.append(f"{len(recs)} commands, want {nv['commands_total']} + {in_capsule}")
    incomplete = [r for r in recs if not r["complete"]]
    if len(incomplete) != nv["commands_total"] - nv["completions_total"]:
        problems.append(f"{len(incomplete)} incomplete, want {nv['commands_total'] - nv['completions_total']}")
    # nvme.cmd_latency covers the commands Wireshark decoded (single-packet SENDs: not the
    # in-capsule ones longer than the 4096-byte path MTU), fabrics commands apart.
    fabrics = {"connect", "property_get", "property_set"}
    multi_packet = lambda r: r["in_capsule"] and r["length"] + 64 > 4096
    chosen = [r for r in recs if r["complete"] and not multi_packet(r) and r["op"] not in fabrics]
    for key, iface in (("iol1_us", "leafA-gpu"), ("iol2_us", "leafB-stor")):
        ws = fx["nvme.cmd_latency"][iface]
        ms = [r[key] / 1000 for r in chosen]
        if len(ms) != ws["n"]:
            problems.append(f"{key}: {len(ms)} samples, Wireshark {ws['n']}")
            continue
        for label, mine in (("min_ms", min(ms)), ("max_ms", max(ms)), ("median_ms", statistics.median(ms))):
            if round(mine, 4) != ws[label]:
                problems.append(f"{key} {label}: {round(mine, 4)} vs Wireshark {ws[label]}")
    fab = fx["nvme.fabrics.cmd_latency"]["leafA-gpu"]
    fab_ms = [r["iol1_us"] / 1000 for r in recs if r["op"] in fabrics and not multi_packet(r)]
    if len(fab_ms) != fab["n"] or round(max(fab_ms), 4) != fab["max_ms"]:
        problems.append(f"fabrics latency: n={len(fab_ms)} max={max(fab_ms) if fab_ms else None} vs {fab}")
    out = run_cli(cli, "analyze", cap, "--no-progress").stdout
    if "leafA-gpu [compute" not in out or "leafB-stor [storage" not in out:
        problems.append("analyze did not infer leafA-gpu=compute, leafB-stor=storage:\n" + out[:600])

# --- perftest with 0.3 % loss: every NAK and every data packet accounted for, per point ---
name = "perftest_d_write_loss.pcapng.gz"
if os.path.exists(os.path.join(capdir, name)):
    fx = facts(name)
    cap = unpack(name)
    out = run_cli(cli, "export", "messages", cap, "--no-progress").stdout
    msgs = [json.loads(l) for l in out.splitlines() if l.strip()]
    for iface, ops in fx["bth_opcodes_per_interface"].items():
        data = sum(n for op, n in ops.items() if "WRITE" in op or "SEND" in op or "READ_RESPONSE" in op)
        mine = sum(m["packets"] for m in msgs if m["point"] == iface)
        if mine != data:
            problems.append(f"{iface}: {mine} data packets in messages, Wireshark counted {data}")
        naks = sum(m["naks"] for m in msgs if m["point"] == iface)
        if naks != fx["nak_count_per_interface"][iface]:
            problems.append(f"{iface}: {naks} NAKs attributed to messages, Wireshark saw {fx['nak_count_per_interface'][iface]}")
        partial = [m for m in msgs if m["point"] == iface and not m["complete"]]
        if partial:
            problems.append(f"{iface}: {len(partial)} messages not complete in a capture with whole messages")

# --- No NVMe in RDMA benchmarks: no false I/Os ---
for name in ("perftest_d_write_loss.pcapng.gz", "rping_e.pcapng.gz"):
    if os.path.exists(os.path.join(capdir, name)):
        cap = unpack(name)
        recs = cli_io_records(cli, cap)
        if recs:
            problems.append(f"{name}: {len(recs)} NVMe I/Os reported in a capture without NVMe")

# --- Captures without loss lose nothing between the points ---
# Every packet at both interfaces, no PSN went backwards, no NAK (Wireshark's counts): every
# copy seen at one point reached the other, however slowly (netem delays: 15 ms over the fabric
# link at times, beyond the 10 ms path timeout).
for name in ("nvme_a_noloss.pcapng.gz", "rping_e.pcapng.gz"):
    if not os.path.exists(os.path.join(capdir, name)):
        continue
    fx = facts(name)
    counts = {i["packets"] for i in fx["interfaces"].values()}
    if len(counts) != 1 or fx["nak_count"] or any(fx["psn_regressions_per_interface(go_back_n)"].values()):
        problems.append(f"{name}: its facts no longer say nothing was lost; this check needs another capture")
        continue
    cap = unpack(name)
    out = run_cli(cli, "export", "paths", cap, "--no-progress").stdout
    hops = [json.loads(l) for l in out.splitlines() if l.strip()]
    lost = sum(int(h["lost"]) for h in hops)
    crossed = sum(int(h["packets"]) for h in hops)
    if not hops or lost:
        problems.append(f"{name}: {lost} of {crossed} packets lost between the points in a capture without loss")

shutil.rmtree(tmp, ignore_errors=True)
fail_if(problems, "differences from the real captures' facts")
print("OK: real captures agree with Wireshark's facts")
