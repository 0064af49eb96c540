#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Instructions the engine executes per packet, counted by callgrind: repeatable to the last digit
# for the same binary and capture whatever else the machine is doing (wall time on a shared
# 2-core machine is not), so a change's effect is measured in one run each side.
#   bench/instructions.sh CAPTURE [RDMATEL_BENCH]     default: build/test/bench/rdmatel-bench
# Prints the total, instructions per packet, and the share of each part: reading, decoding, the
# core (reorder, flows, dispatch) and each component (inclusive of the records it emits and the
# record stages that read them). RDMATEL_CALLGRIND_OUT=FILE keeps the profile for
# callgrind_annotate.
set -euo pipefail
capture=$1
bench=${2:-build/test/bench/rdmatel-bench}
out=${RDMATEL_CALLGRIND_OUT:-$(mktemp /tmp/rdmatel_callgrind_XXXXXX)}
[[ -n ${RDMATEL_CALLGRIND_OUT:-} ]] || trap 'rm -f "$out"' EXIT
valgrind --tool=callgrind --callgrind-out-file="$out" "$bench" "$capture" engine >/dev/null 2>"$out.log" ||
  { cat "$out.log"; exit 1; }
rm -f "$out.log"
packets=$(capinfos -c -M "$capture" 2>/dev/null | awk -F: '/Number of packets/ {gsub(/[^0-9]/, "", $2); print $2}')
callgrind_annotate --inclusive=yes "$out" 2>/dev/null | awk -v packets="$packets" '
  function add(part, n) { if (!(part in seen)) order[++parts] = part; seen[part] = 1; sum[part] += n }
  /^-- (Auto|User)-annotated source/ { exit }
  /PROGRAM TOTALS/ { gsub(/,/, "", $1); total = $1 }
  # Each function once (its own line, not a caller or callee line).
  /^ *[0-9,]+ \( *[0-9.]+%\)  [^=>*]/ {
    n = $1; gsub(/,/, "", n)
    # Engine::push forwards to Impl::push, which the compiler may inline into it: the larger.
    if ($0 ~ /Engine::(Impl::)?push\(rdmatel::FrameIn const&\) \[/) { if (n + 0 > push + 0) push = n }
    else if ($0 ~ /Engine::Impl::finish\(\) \[/) fin = n
    # A function inlined in places is listed once more under the path of its header: count it once.
    else if ($0 ~ /decode_roce_frame\(/) { if (!done["decode"]++) add("decode", n) }
    else if ($0 ~ /FastCaptureReader::next\(/) { if (!done["read"]++) add("read", n) }
    else if (match($0, /rdmatel::[a-z_]+::[A-Za-z]+::(on_packet|on_advance|finish)\(/)) {
      split(substr($0, RSTART, RLENGTH), a, "::")
      key = a[2] SUBSEP a[4]
      if (!(key in done)) { done[key] = 1; add(a[2], n) }
    }
  }
  END {
    if (!total) { print "instructions.sh: no profile read" > "/dev/stderr"; exit 1 }
    comps = 0
    for (i = 1; i <= parts; ++i) if (order[i] != "read") comps += sum[order[i]]
    printf "%-12s %15s %9s %7s\n", "part", "instructions", "per pkt", "share"
    printf "%-12s %15.0f %9.0f %6.1f%%\n", "total", total, total / packets, 100
    core = push + fin - comps
    printf "%-12s %15.0f %9.0f %6.1f%%\n", "core", core, core / packets, 100 * core / total
    for (i = 1; i <= parts; ++i)
      printf "%-12s %15.0f %9.0f %6.1f%%\n", order[i], sum[order[i]], sum[order[i]] / packets, 100 * sum[order[i]] / total
    printf "(%d packets)\n", packets
  }'
