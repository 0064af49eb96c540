# SPDX-License-Identifier: GPL-2.0-or-later
"""The plugin's preferences in tshark, against ground truth (two-pass):

* the observation-point role table (UAT rdmatel_point_roles, given with -o uat:...): swapping
  the roles of the compute and storage points swaps IOL1 and IOL2 and negates RTT;
* "slow" thresholds (-o rdmatel.slow_rtt / slow_iol1 / slow_fct): exactly the I/Os and messages
  above them get rdmatel.slow and one "slow" expert info each (IOL with one point);
* the period preference is accepted; bad values are refused.
"""
import sys
from collections import defaultdict

from rdmatel_testlib import Tshark, fail, fail_if, load_truth, us

plugin, captures = sys.argv[1], sys.argv[2:]
problems = []
checked = defaultdict(int)


ts = Tshark(plugin)
try:
    for cap in captures:
        truth = load_truth(cap)
        ios, messages, points = truth["ios"], truth["messages"], truth["points"]
        roles = {p["name"]: p["role"] for p in points}

        # Slow thresholds, in one run: one expert info per slow I/O (on the frame that counts it)
        # and per slow message, rdmatel.slow on their metric frames.
        if len(points) == 1:
            slow = [io for io in ios if io.get("iol_us") is not None and io["complete"] and float(io["iol_us"]) > 100]
            opts = ["-o", "rdmatel.slow_iol1:100"]
        else:
            slow = [io for io in ios if io.get("rtt_us") is not None and float(io["rtt_us"]) > 25]
            opts = ["-o", "rdmatel.slow_rtt:25"]
        rows = ts.fields(cap, ["frame.number", "rdmatel.slow_io", "rdmatel.slow_message", "rdmatel.io.stage"],
                         "rdmatel.slow", extra=opts + ["-o", "rdmatel.slow_fct:5"])
        slow_io = {int(r["frame.number"]) for r in rows if r["rdmatel.slow_io"]}
        slow_msg = {int(r["frame.number"]) for r in rows if r["rdmatel.slow_message"]}
        io_frames = {int(r["frame.number"]) for r in rows if r["rdmatel.io.stage"]} - slow_msg
        want = {io["rsp_frame"] for io in slow}
        if slow_io != want:
            problems.append(f"{cap}: {opts[1]}: slow_io on frames {sorted(slow_io - want)[:10]} not in truth, "
                            f"missing {sorted(want - slow_io)[:10]}")
        want_frames = (want | {io["cmd_frame"] for io in slow}) - slow_msg
        if io_frames != want_frames:
            problems.append(f"{cap}: {opts[1]}: rdmatel.slow on {len(io_frames)} I/O frames, truth {len(want_frames)}")
        checked["slow I/Os"] += len(want)
        want = {m["last_frame"] for m in messages if float(m["fct_us"]) > 5}
        if slow_msg != want:
            problems.append(f"{cap}: slow_fct:5: slow_message on {len(slow_msg)} frames, truth {len(want)} messages "
                            f"(extra {sorted(slow_msg - want)[:10]}, missing {sorted(want - slow_msg)[:10]})")
        checked["slow messages"] += len(want)

        # Roles from the UAT: swap compute and storage. The compute-side completion is then the
        # storage-side one: the I/O's IOL1 is the truth's IOL2 and vice versa, RTT changes sign.
        if sorted(roles.values()) == ["compute", "storage"]:
            swapped = {name: ("storage" if role == "compute" else "compute") for name, role in roles.items()}
            opts = []
            for name, role in swapped.items():
                opts += ["-o", f'uat:rdmatel_point_roles:"{name}","{role}"']
            rows = ts.fields(cap, ["rdmatel.point", "rdmatel.point_role", "rdmatel.io.stage", "rdmatel.iol1",
                                   "rdmatel.iol2", "rdmatel.rtt", "rdmatel.slow"], None, extra=opts)
            bad = [r for r in rows if r["rdmatel.point_role"] != swapped.get(r["rdmatel.point"])]
            if bad:
                problems.append(f"{cap}: point {bad[0]['rdmatel.point']} has role {bad[0]['rdmatel.point_role']}, "
                                f"configured {swapped.get(bad[0]['rdmatel.point'])}")
            if any(r["rdmatel.slow"] for r in rows):
                problems.append(f"{cap}: rdmatel.slow without any threshold set")
            got = sorted((us(r["rdmatel.iol1"]), us(r["rdmatel.iol2"]), us(r["rdmatel.rtt"])) for r in rows
                         if r["rdmatel.io.stage"] == "completion" and r["rdmatel.iol1"] and r["rdmatel.iol2"])
            want = sorted((us(io["iol2_us"]), us(io["iol1_us"]), -us(io["rtt_us"])) for io in ios
                          if io.get("iol1_us") is not None and io.get("iol2_us") is not None)
            if got != want:
                problems.append(f"{cap}: swapped roles: {len(got)} (IOL1, IOL2, RTT) triples differ from truth's "
                                f"(IOL2, IOL1, -RTT) ({len(want)})")
            checked["role swaps"] += 1

    # The period is a preference; a bad value is refused with tshark's own message.
    cap = captures[0]
    ts.run("-r", ts.stage(cap), "-q", "-o", "rdmatel.period:500")  # fails the test if refused
    p = ts.run("-r", ts.stage(cap), "-q", "-o", 'uat:rdmatel_point_roles:"x","bogus"', check=False)
    if p.returncode == 0 or "bogus" not in p.stderr:
        problems.append(f"a bad role was accepted: exit {p.returncode}: {p.stderr}")
    # Every field says what it is (Wireshark shows the description in the packet details and
    # the filter dialog); expert items (FT_NONE) have their text in the expert info instead.
    undescribed = [cols[2] for cols in (l.split("\t") for l in ts.run("-G", "fields").stdout.splitlines())
                   if len(cols) >= 8 and cols[0] == "F" and cols[2].startswith("rdmatel.") and cols[3] != "FT_NONE"
                   and not cols[7].strip()]
    if undescribed:
        problems.append(f"fields without a description: {undescribed}")
finally:
    ts.close()

fail_if(problems, "problems with preferences", shown=50)
for what in ("slow I/Os", "slow messages", "role swaps"):
    if not checked[what]:
        fail(f"nothing checked for {what}")
print("OK: " + ", ".join(f"{k} {v}" for k, v in sorted(checked.items())))
