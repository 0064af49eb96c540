# SPDX-License-Identifier: GPL-2.0-or-later
"""The plugin's tshark statistics (-z) against ground truth, two-pass (final records):

* rdmatel,io,host / storage / pair: per group the count of read and write I/Os and min, avg,
  max of DAL, DPL, RTT, IOL1, IOL2, IOL, as the engine's IoGroupStats defines them (reads and
  writes, complete or not; a metric over the I/Os that have it), from the truth file's `ios`;
  with and without a display filter (the filter applies to the frame that counts the I/O);
* rdmatel,msg,flow: per flow and point, messages, bytes, FCT min/avg/max, FET, NAKs, FNR as
  FlowStats defines them, from the truth file's `messages`; with and without a filter;
* rdmatel,srt: calls per NVMe command and min/max/avg response time (IOL1, or IOL with one point);
* conv,rdmatel / endpoints,rdmatel: packets and bytes per RDMA endpoint (IP + QPN) and queue
  pair against tshark's own decode of every RoCE packet (ip.dst + infiniband.bth.destqp), and
  the queue pairs against the truth's (host, host_qpn) <-> (storage, qpn).
"""
import math
import re
import sys
from collections import Counter, defaultdict

from rdmatel_stats import num, parse_simple_tables
from rdmatel_testlib import Tshark, fail, fail_if, load_truth, us

plugin, captures = sys.argv[1], sys.argv[2:]
IO_METRICS = ["dal_us", "dpl_us", "rtt_us", "iol1_us", "iol2_us", "iol_us"]  # IoMetric order
NVME_IO_FILTER = "rdmatel.iol > 100"
MSG_FILTER = "rdmatel.fct > 5"
problems = []
checked = Counter()


def same(got, want, abs_tol):
    if want is None:
        return math.isnan(got)
    return not math.isnan(got) and abs(got - want) <= abs_tol + 1e-9 * abs(want)


def io_groups(ios, key):
    """IoGroupStats of the read and write I/Os, grouped by key(io)."""
    groups = defaultdict(lambda: {"n": 0, **{m: [] for m in IO_METRICS}})
    for io in ios:
        if io["op"] not in ("read", "write") or io.get("admin"):
            continue
        g = groups[key(io)]
        g["n"] += 1
        for m in IO_METRICS:
            if io.get(m) is not None:
                g[m].append(us(io[m]))
    return groups


def check_io_table(cap, label, table, ios, key_columns, key):
    if table is None:
        problems.append(f"{cap}: {label}: table missing from tshark's output")
        return
    header, rows = table
    want = io_groups(ios, key)
    got = {}
    for r in rows:
        got[tuple(r[:key_columns])] = r
    for k in sorted(set(want) | set(got)):
        g, r = want.get(k), got.get(k)
        if g is None or r is None:
            if g is None and r is not None and int(r[key_columns]) == 0:
                continue
            problems.append(f"{cap}: {label}: row {k}: tshark {r}, truth {g and g['n']} I/Os")
            continue
        checked[label] += 1
        if int(r[key_columns]) != g["n"]:
            problems.append(f"{cap}: {label} {k}: {r[key_columns]} I/Os, truth {g['n']}")
        for mi, m in enumerate(IO_METRICS):
            vals = g[m]
            exp = (min(vals) / 1000, sum(vals) / len(vals) / 1000, max(vals) / 1000) if vals else (None,) * 3
            for ci, (what, tol) in enumerate([("min", 0.0), ("avg", 0.0005), ("max", 0.0)]):
                col = key_columns + 1 + 3 * mi + ci
                if not same(num(r[col]), exp[ci], tol):
                    problems.append(f"{cap}: {label} {k}: {header[col]} = {r[col]}, truth {exp[ci]}")


def flow_groups(messages):
    groups = defaultdict(lambda: {"n": 0, "bytes": 0, "fct": [], "timed_eff": 0, "timed_fct": 0, "naks": 0,
                                  "orig": 0})
    for m in messages:
        g = groups[(m["src"], m["dst"], f"0x{m['dst_qpn']:06x}", m["point"])]
        g["n"] += 1
        g["bytes"] += m["bytes"]
        fct = us(m["fct_us"])
        g["fct"].append(fct)
        if fct > 0:
            g["timed_eff"] += m["bytes"] - m["retrans_bytes"]
            g["timed_fct"] += fct
        g["naks"] += m["naks"]
        g["orig"] += m["packets"] - m["retrans_packets"]
    return groups


def check_flow_table(cap, label, table, messages):
    if table is None:
        problems.append(f"{cap}: {label}: table missing from tshark's output")
        return
    header, rows = table
    want = flow_groups(messages)
    got = {tuple(r[:4]): r for r in rows}
    for k in sorted(set(want) | set(got)):
        g, r = want.get(k), got.get(k)
        if g is None or r is None:
            if g is None and r is not None and int(r[4]) == 0:
                continue
            problems.append(f"{cap}: {label}: flow {k}: tshark {r}, truth {g and g['n']} messages")
            continue
        checked[label] += 1
        fet = g["timed_eff"] * 8e3 / g["timed_fct"] if g["timed_fct"] else None  # Mb/s (1000 bits per ns)
        fnr = g["naks"] / g["orig"] if g["orig"] else None
        expect = [(4, g["n"], 0), (5, g["bytes"], 0), (6, min(g["fct"]) / 1000, 0),
                  (7, sum(g["fct"]) / len(g["fct"]) / 1000, 0.0005), (8, max(g["fct"]) / 1000, 0),
                  (9, fet, 0.0005), (10, g["naks"], 0), (11, fnr, 5e-7)]
        for col, value, tol in expect:
            if not same(num(r[col]), value, tol):
                problems.append(f"{cap}: {label} {k}: {header[col]} = {r[col]}, truth {value}")


SRT_LINE = re.compile(r"^\s*(\d+)\s+(\S+)\s+(\d+)\s+(\d+)\.(\d{6})\s+(\d+)\.(\d{6})\s+(\d+)\.(\d{6})\s+(\d+)\.(\d{6})\s*$")
SRT_TABLES = {"rdmatel.io.admin==0 && rdmatel.io.opcode": "io", "rdmatel.io.admin==1 && rdmatel.io.opcode": "admin",
              "rdmatel.io.fctype": "fabrics"}


def check_srt(cap, out, ios):
    got = {}
    table = None
    for line in out.splitlines():
        if line.startswith("Filter: "):
            table = SRT_TABLES.get(line[len("Filter: "):])
            continue
        m = SRT_LINE.match(line)
        if m and table:
            secs = [int(m.group(i)) * 1_000_000 + int(m.group(i + 1)) for i in (4, 6, 8)]
            got[(table, m.group(2))] = (int(m.group(1)), int(m.group(3)), *secs)
    want = defaultdict(list)
    for io in ios:
        rt = io.get("iol1_us") if io.get("iol1_us") is not None else io.get("iol_us")
        if not io["complete"] or rt is None:
            continue
        table = "fabrics" if io["opcode"] == 0x7F else "admin" if io["admin"] else "io"
        want[(table, io["op"])].append(us(rt))
    for k in sorted(set(want) | set(got)):
        if k not in got or k not in want:
            problems.append(f"{cap}: srt {k}: tshark {got.get(k)}, truth {len(want.get(k, []))} calls")
            continue
        checked["srt"] += 1
        v = want[k]
        # tshark rounds each to the µs: min/max half up, avg = floor(sum / n) then half up.
        exp = (len(v), (min(v) + 500) // 1000, (max(v) + 500) // 1000, (sum(v) // len(v) + 500) // 1000)
        if got[k][1:5] != exp:
            problems.append(f"{cap}: srt {k}: calls/min/max/avg (µs) {got[k][1:5]}, truth {exp}")


ENDPOINT = r"(\S+ QP (?:0x[0-9a-f]{6}|\?))"
ENDPOINT_LINE = re.compile(r"^" + ENDPOINT + r"\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s*$")
SIZE = r"\d+ (?:bytes|kB|MB|GB)"
CONV_LINE = re.compile(r"^" + ENDPOINT + r"\s+<->\s+" + ENDPOINT + rf"\s+(\d+) {SIZE}\s+(\d+) {SIZE}\s+(\d+) {SIZE}\s")


def check_conversations(ts, cap, out, ios):
    endpoints, convs = {}, []
    for line in out.splitlines():
        m = ENDPOINT_LINE.match(line)
        if m:
            endpoints[m.group(1)] = tuple(int(x) for x in m.groups()[1:])  # pkts bytes tx txb rx rxb
            continue
        m = CONV_LINE.match(line)
        if m:
            convs.append((m.group(1), m.group(2), int(m.group(3)), int(m.group(4)), int(m.group(5))))
    # Wireshark's own decode of every RoCE packet.
    rows = ts.fields(cap, ["ip.src", "ip.dst", "ipv6.src", "ipv6.dst", "infiniband.bth.destqp", "frame.len"],
                     "infiniband.bth")
    rx = Counter()  # (dst ip, dst qpn) -> packets, bytes
    rx_bytes = Counter()
    flow = Counter()  # (src ip, dst ip, dst qpn) -> packets
    tx_by_ip = Counter()
    for r in rows:
        src = r["ip.src"] or r["ipv6.src"]
        dst = r["ip.dst"] or r["ipv6.dst"]
        qpn = int(r["infiniband.bth.destqp"], 0)
        rx[f"{dst} QP 0x{qpn:06x}"] += 1
        rx_bytes[f"{dst} QP 0x{qpn:06x}"] += int(r["frame.len"])
        flow[(src, dst, qpn)] += 1
        tx_by_ip[src] += 1
    if not rows:
        problems.append(f"{cap}: tshark decoded no RoCE packet")
    # Endpoints: received packets and bytes per (IP, QPN) exactly as tshark counts them.
    for ep, n in rx.items():
        got = endpoints.get(ep)
        if not got or got[4] != n or got[5] != rx_bytes[ep]:
            problems.append(f"{cap}: endpoint {ep}: rx {got and got[4:6]}, tshark {n} packets {rx_bytes[ep]} bytes")
        checked["endpoints"] += 1
    for ep, got in endpoints.items():
        if got[4] and ep not in rx:
            problems.append(f"{cap}: endpoint {ep} receives {got[4]} packets, tshark none")
    tx = Counter()
    for ep, got in endpoints.items():
        tx[ep.split(" QP ")[0]] += got[2]
    if tx != tx_by_ip:
        problems.append(f"{cap}: packets sent per IP {dict(tx)}, tshark {dict(tx_by_ip)}")
    # Queue pairs the truth knows: the host's QP sends what the storage's QP receives, and the
    # conversation between them holds both directions.
    pairs = {(io["host"], io["host_qpn"], io["storage"], io["qpn"]) for io in ios if io.get("host_qpn") is not None}
    conv_index = {}
    for a, b, to_a, to_b, total in convs:
        conv_index[(a, b)] = (to_b, to_a)  # "->" = frames A -> B
        conv_index[(b, a)] = (to_a, to_b)
    for host, hqp, storage, sqp in sorted(pairs):
        h, s = f"{host} QP 0x{hqp:06x}", f"{storage} QP 0x{sqp:06x}"
        want = (flow[(host, storage, sqp)], flow[(storage, host, hqp)])
        got = conv_index.get((h, s))
        if got != want:
            problems.append(f"{cap}: conversation {h} <-> {s}: frames (h->s, s->h) {got}, tshark {want}")
        if endpoints.get(h, (0, 0, -1))[2] != want[0]:
            problems.append(f"{cap}: endpoint {h} sent {endpoints.get(h, (0, 0, None))[2]}, tshark {want[0]}")
        checked["queue pairs"] += 1
    if sum(c[4] for c in convs) != len(rows):
        problems.append(f"{cap}: conversations hold {sum(c[4] for c in convs)} packets, tshark {len(rows)} RoCE packets")


ts = Tshark(plugin)
try:
    for cap in captures:
        truth = load_truth(cap)
        ios, messages = truth["ios"], truth["messages"]
        staged = ts.stage(cap)
        z = ["rdmatel,io,host", "rdmatel,io,storage", "rdmatel,io,pair", "rdmatel,msg,flow"]
        args = ["-r", staged, "-2", "-q"]
        for s in z + ["rdmatel,srt", "conv,rdmatel", "endpoints,rdmatel"]:
            args += ["-z", s]
        out = ts.run(*args).stdout
        t = parse_simple_tables(out)
        check_io_table(cap, "io,host", t.get("RDMA Telemetry · NVMe latency per host"), ios, 1, lambda io: (io["host"],))
        check_io_table(cap, "io,storage", t.get("RDMA Telemetry · NVMe latency per storage"), ios, 1,
                       lambda io: (io["storage"],))
        check_io_table(cap, "io,pair", t.get("RDMA Telemetry · NVMe latency per host-storage pair"), ios, 2,
                       lambda io: (io["host"], io["storage"]))
        check_flow_table(cap, "msg,flow", t.get("RDMA Telemetry · RDMA messages per flow"), messages)
        check_srt(cap, out, ios)
        check_conversations(ts, cap, out, ios)

        # The same with display filters: a table counts what its filter lets through, judged on
        # the frame that counts each record (the compute-side completion of an I/O, the frame that
        # completes a message).
        args = ["-r", staged, "-2", "-q"]
        for s in z[:3]:
            args += ["-z", f"{s},{NVME_IO_FILTER}"]
        args += ["-z", f"rdmatel,msg,flow,{MSG_FILTER}"]
        t = parse_simple_tables(ts.run(*args).stdout)
        slow = [io for io in ios if io.get("iol_us") is not None and io["complete"] and float(io["iol_us"]) > 100]
        long_msgs = [m for m in messages if float(m["fct_us"]) > 5]
        rw = [io for io in ios if io["op"] in ("read", "write")]
        if (rw and not 0 < len([io for io in slow if io in rw]) < len(rw)) or not 0 < len(long_msgs) < len(messages):
            problems.append(f"{cap}: the filters select {len(slow)} I/Os and {len(long_msgs)} messages: no proof")
        check_io_table(cap, "io,host filtered", t.get("RDMA Telemetry · NVMe latency per host"), slow, 1,
                       lambda io: (io["host"],))
        check_io_table(cap, "io,storage filtered", t.get("RDMA Telemetry · NVMe latency per storage"), slow, 1,
                       lambda io: (io["storage"],))
        check_io_table(cap, "io,pair filtered", t.get("RDMA Telemetry · NVMe latency per host-storage pair"), slow, 2,
                       lambda io: (io["host"], io["storage"]))
        check_flow_table(cap, "msg,flow filtered", t.get("RDMA Telemetry · RDMA messages per flow"), long_msgs)
finally:
    ts.close()

fail_if(problems, "differences between tshark's statistics and ground truth", shown=80)
for what in ("io,host", "io,pair", "msg,flow", "srt", "endpoints", "queue pairs", "io,host filtered",
             "msg,flow filtered"):
    if not checked[what]:
        fail(f"nothing checked for {what}")
print("OK: " + ", ".join(f"{k} {v}" for k, v in sorted(checked.items())) + f" rows match ground truth in "
      f"{len(captures)} captures")
