# SPDX-License-Identifier: GPL-2.0-or-later
"""The "RDMA-Telemetry" configuration profile loads in Wireshark 4.0 without a warning and every
filter in it works:

* tshark -C RDMA-Telemetry reads a capture silently and prints the profile's custom columns;
* the preferences Wireshark reports are the profile's (columns, slow thresholds);
* every colouring rule, filter button, saved filter, filter macro and I/O graph filter and field
  compiles; the rdmatel colouring rules and buttons match frames of the lossy NVMe sample;
* the I/O graph table has the 4.0 fields with values the GUI knows.
(The GUI itself is exercised by tests/gui/screenshot.sh.)
"""
import csv
import io
import os
import re
import shutil
import sys

from rdmatel_testlib import Tshark, fail_if

plugin, profile_dir, capture = sys.argv[1], sys.argv[2], sys.argv[3]
NAME = "RDMA-Telemetry"
problems = []


def lines(name):
    with open(os.path.join(profile_dir, name), encoding="utf-8") as f:
        text = f.read()
    if not text.startswith("# SPDX-License-Identifier: GPL-2.0-or-later"):
        problems.append(f"{name}: no SPDX line")
    return [l for l in text.splitlines() if l.strip() and not l.startswith("#")]


def uat_rows(name):
    """UAT files: comma-separated double-quoted fields, \\x22 for a quote."""
    rows = []
    for line in lines(name):
        fields = next(csv.reader(io.StringIO(line), skipinitialspace=True))
        rows.append([f.replace("\\x22", '"') for f in fields])
    return rows


ts = Tshark(plugin)
try:
    dst = os.path.join(ts.home, ".config", "wireshark", "profiles", NAME)
    shutil.copytree(profile_dir, dst)
    for root, dirs, files in os.walk(os.path.join(ts.home, ".config")):
        os.chmod(root, 0o755)
        for f in files:
            os.chmod(os.path.join(root, f), 0o644)
    cap = ts.stage(capture)

    p = ts.run("-C", NAME, "-r", cap, "-2")
    if p.stderr.strip():
        problems.append(f"tshark -C {NAME} printed: {p.stderr.strip()[:500]}")
    out = p.stdout.splitlines()
    if not out or not any("leafA-gpu" in l for l in out) or not any(" completion " in l for l in out):
        problems.append(f"tshark -C {NAME}: the Point and Stage columns are missing: {out[:3]}")

    # heuristic_protos turns off heuristics that misfire on NVMe-oF payloads (Wireshark 4.0's
    # RPC-over-RDMA one reports "Dissector bug" on header-snapped captures in the GUI): every line
    # names a heuristic this Wireshark has (tshark refuses an unknown name) and turns it off.
    for line in lines("heuristic_protos"):
        name, _, state = line.strip().partition(",")
        p = ts.run("--disable-heuristic", name, "-r", cap, "-c", "1", check=False)
        if state != "0" or p.returncode != 0 or "No such" in p.stderr:
            problems.append(f"heuristic_protos {line.strip()!r}: not a heuristic to turn off ({p.stderr.strip()[:200]})")

    prefs = ts.run("-G", "currentprefs", "-C", NAME).stdout
    for want in ('"%Cus:rdmatel.point:0:R"', '"%Cus:rdmatel.rtt:0:R"', '"%Cus:rdmatel.iol:0:R"', '"%Cus:rdmatel.msg.fct_multi:0:R"',
                 "\nrdmatel.slow_rtt: 50", "\nrdmatel.slow_iol1: 500", "\nrdmatel.slow_fct: 100"):
        if want not in prefs:
            problems.append(f"tshark -G currentprefs -C {NAME} lacks {want.strip()}")

    # Column widths (recent) follow the columns (preferences) one for one; Wireshark 4.0 matches
    # a custom column's width by its field alone ("%Cus:FIELD").
    prefs_text = open(os.path.join(profile_dir, "preferences"), encoding="utf-8").read()
    formats = re.findall(r'^\t"[^"]*", "([^"]+)"', prefs_text.split("gui.column.format:")[1].split("\n\n")[0], re.M)
    widths = [l for l in lines("recent") if l.startswith("column.width:")]
    pairs = [x.strip().strip('"') for x in widths[0].split(":", 1)[1].split(",")] if widths else []
    want = [re.sub(r"^(%Cus:[^:]+):.*$", r"\1", f) for f in formats]
    if pairs[0::2] != want or not all(w.isdigit() and 40 <= int(w) <= 600 for w in pairs[1::2]):
        problems.append(f"recent column.width {pairs} does not follow the columns {formats}")

    # Filters are gathered first and counted in one tshark run (-z io,stat,0,F1,F2,...).
    filters = []
    checks = []  # (filter, what to do with its frame count)

    def count(display_filter, then=None):
        filters.append(display_filter)
        if then:
            checks.append((display_filter, then))

    def run_counts():
        args = ["-C", NAME, "-r", cap, "-2", "-q", "-z", "io,stat,0," + ",".join(filters)]
        p = ts.run(*args, check=False)
        if p.returncode != 0:  # find the culprit
            for f in filters:
                q = ts.run("-C", NAME, "-r", cap, "-c", "1", "-Y", f, check=False)
                if q.returncode != 0:
                    problems.append(f"filter {f!r} does not work: {q.stderr.strip()[:300]}")
            return {}
        row = [l for l in p.stdout.splitlines() if "<>" in l][-1]
        frames = [int(c) for c in row.split("|")[2:-1:2]]
        return dict(zip(filters, frames))

    # Colouring rules: @name@filter@[bg][fg]; rdmatel's must each colour something here, and a
    # light background must be told apart from every one of Wireshark's default rules (the
    # message-completion colour once was UDP's).
    defaults = []
    for line in open("/usr/share/wireshark/colorfilters", encoding="utf-8"):
        m = re.match(r"@([^@]+)@[^@]+@\[(\d+),(\d+),(\d+)\]", line)
        if m:
            defaults.append((m.group(1), [int(c) >> 8 for c in m.groups()[1:]]))
    for line in lines("colorfilters"):
        m = re.fullmatch(r"@([^@]+)@([^@]+)@\[(\d+),(\d+),(\d+)\]\[.*", line)
        if not m or "rdmatel" not in m.group(2):
            continue
        bg = [int(c) >> 8 for c in m.groups()[2:5]]
        if sum(bg) / 3 < 128:
            continue  # a dark alarm background, like Wireshark's own error rules
        for name, other in defaults:
            if sum((a - b) ** 2 for a, b in zip(bg, other)) ** 0.5 < 40:
                problems.append(f"colorfilters: {m.group(1)!r} looks like Wireshark's {name!r} ({bg} vs {other})")
    must_match = {"RDMA NAK", "NVMe incomplete I/O", "NVMe error status", "RDMA retransmission",
                  "Slow NVMe I/O or RDMA message", "NVMe I/O latencies", "RDMA message completion"}
    seen = set()
    for line in lines("colorfilters"):
        m = re.fullmatch(r"@([^@]+)@([^@]+)@\[(\d+),(\d+),(\d+)\]\[(\d+),(\d+),(\d+)\]", line)
        if not m or any(int(c) > 65535 for c in m.groups()[2:]):
            problems.append(f"colorfilters: bad rule {line}")
            continue
        if "rdmatel" in m.group(2):
            seen.add(m.group(1))
            if m.group(1) in must_match:
                count(m.group(2), lambda n, name=m.group(1): n or problems.append(
                    f"colorfilters: rule {name!r} colours nothing in {capture}"))
            else:
                count(m.group(2))
    if not must_match <= seen:
        problems.append(f"colorfilters: rules missing: {must_match - seen}")

    buttons = uat_rows("dfilter_buttons")
    for row in buttons:
        if len(row) != 4 or row[0] not in ("TRUE", "FALSE"):
            problems.append(f"dfilter_buttons: bad row {row}")
        else:
            count(row[2], lambda n, label=row[1]: n or problems.append(
                f"dfilter_buttons: {label!r} shows nothing in {capture}"))
    labels = {r[1] for r in buttons}
    for want in ("Slow I/Os", "Lost packets"):
        if want not in labels:
            problems.append(f"dfilter_buttons: no {want!r} button")
    if not any(l.startswith("Host ") for l in labels) or not any(l.startswith("Storage ") for l in labels):
        problems.append("dfilter_buttons: no one-host / one-storage button")

    for line in lines("dfilters"):
        m = re.fullmatch(r'"([^"]+)"\s+(.+)', line)
        if not m:
            problems.append(f"dfilters: bad line {line}")
        else:
            count(m.group(2))

    for row in uat_rows("dfilter_macros"):
        if len(row) != 2:
            problems.append(f"dfilter_macros: bad row {row}")
    macros = [("${rdmatel_host:10.1.0.1}", "rdmatel.io.host == 10.1.0.1"),
              ("${rdmatel_storage:10.2.0.1}", "rdmatel.io.storage == 10.2.0.1"),
              ("${rdmatel_slower:rtt;50}", "rdmatel.rtt > 50")]
    for macro, expansion in macros:
        count(macro)
        count(expansion)

    styles = {"Line", "Impulse", "Bar", "Stacked Bar", "Dot", "Square", "Diamond", "Cross", "Plus", "Circle"}
    yaxes = {"Packets", "Bytes", "Bits", "SUM(Y Field)", "COUNT FRAMES(Y Field)", "COUNT FIELDS(Y Field)",
             "MAX(Y Field)", "MIN(Y Field)", "AVG(Y Field)", "LOAD(Y Field)"}
    graphs = uat_rows("io_graphs")
    for row in graphs:
        if (len(row) != 9 or row[0] not in ("TRUE", "FALSE") or not re.fullmatch(r"#[0-9a-f]{6}", row[3])
                or row[4] not in styles or row[5] not in yaxes or row[7] != "None" or row[8] != "1"):
            problems.append(f"io_graphs: bad row {row}")
            continue
        if row[2]:
            count(row[2])
        if row[6]:
            count(row[6])  # the Y field must exist
    for series in ("rdmatel.ecn_ce", "rdmatel.cnp", "rdmatel.pfc.quanta > 0"):
        if not any(r[2] == series and r[5] == "Packets" for r in graphs):
            problems.append(f"io_graphs: no congestion series {series!r}")
    for metric in ("rtt", "dal", "iol1", "iol2", "iol", "fet"):
        for agg in ("AVG", "MAX"):
            if not any(r[6] == f"rdmatel.{metric}" and r[5] == f"{agg}(Y Field)" for r in graphs):
                problems.append(f"io_graphs: no {agg} graph of rdmatel.{metric}")

    counts = run_counts()
    if counts:
        for f, then in checks:
            then(counts[f])
        for macro, expansion in macros:
            if counts[macro] != counts[expansion] or not counts[macro]:
                problems.append(f"{macro} matches {counts[macro]} frames, {expansion} {counts[expansion]}")

    # The IPv6 macros, on the IPv6 sample next to the capture.
    cap6 = ts.stage(os.path.join(os.path.dirname(capture), "nvme_midstream.pcapng"))
    pairs6 = [("${rdmatel_host6:fd00:1::1}", "rdmatel.io.host6 == fd00:1::1"),
              ("${rdmatel_storage6:fd00:2::2}", "rdmatel.io.storage6 == fd00:2::2")]
    p = ts.run("-C", NAME, "-r", cap6, "-2", "-q", "-z", "io,stat,0," + ",".join(f for pair in pairs6 for f in pair),
               check=False)
    row = [l for l in p.stdout.splitlines() if "<>" in l]
    frames6 = [int(c) for c in row[-1].split("|")[2:-1:2]] if p.returncode == 0 and row else []
    if len(frames6) != 4 or frames6[0] != frames6[1] or frames6[2] != frames6[3] or not frames6[0] or not frames6[2]:
        problems.append(f"IPv6 macros on nvme_midstream: frames {frames6} ({p.stderr.strip()[:300]})")
finally:
    ts.close()

fail_if(problems, f"problems with the {NAME} profile")
print(f"OK: the {NAME} profile loads silently; every rule, button, filter, macro and graph works")
