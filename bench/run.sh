#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The performance suite, one table: packets/s and MB/s of each stage of rdmatel and of tshark on
# the same capture, with peak memory and ratios.
#   bench/run.sh [CAPTURE|full|all]  default: a generated nvme-large capture (2.2 M packets,
#                               387 MB, header-snapped); full: the same traffic with whole frames;
#                               all: both, one table after the other
# Needs a build (./test.sh or cmake --build build/test; RDMATEL_BUILD=DIR picks another). Rows:
#   * rdmatel-bench stages, timed inside the process: a bare loop over the mapped pcapng touching
#     each BTH, the fast reader, reader + decoder, the whole engine (no output), and the engine as
#     the Wireshark plugin runs it (frame notes, every record and note kept by frame);
#   * each CLI command as a whole process (analyze, export KIND), on two threads (their default on
#     two cores) and, for analyze and two exports, on one (--threads 1); analyze of the capture
#     gzipped (read by libwiretap, ahead on its own thread with two threads), on two and one;
#   * tshark dissecting every frame (-z io,stat,0) without and with the plugin, in one pass (where
#     nothing reads rdmatel's results, so the plugin does not measure) and in two (where it
#     measures every frame of the first pass), and the plugin's tables in one and two passes.
# Packets/s and MB/s are per cpu second (user + sys), steadier than wall time on a shared
# machine; run it twice and read the second run. Peak memory is the largest resident set (GNU
# time). RDMATEL_BENCH_TSHARK=0 leaves the tshark rows out (they take minutes).
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ ${1:-} == all ]]; then
  bench/run.sh
  echo
  exec bench/run.sh full
fi
build=${RDMATEL_BUILD:-build/test}
[[ -x $build/cli/rdmatel ]] || build=build
cli=$build/cli/rdmatel
bench=$build/bench/rdmatel-bench
plugin=$(ls "$build"/plugin/*/epan/rdmatel.so | head -1)
synth=$build/samples/synth/rdmatel-synth
work=$(mktemp -d /tmp/rdmatel_bench_XXXXXX)
chmod 755 "$work"
trap 'rm -rf "$work"' EXIT

# shellcheck source=bench/capture.sh
source bench/capture.sh
bench_capture "${1:-}"
cat "$capture" >/dev/null  # page cache

# tshark as an unprivileged user (root's tshark ignores personal plugin folders).
mkdir -p "$work/with/.local/lib/wireshark/plugins/4.0/epan" "$work/without"
cp "$plugin" "$work/with/.local/lib/wireshark/plugins/4.0/epan/"
chmod -R a+rX "$work"
as_user=()
if [[ $(id -u) -eq 0 ]]; then as_user=(setpriv --reuid=65534 --regid=65534 --clear-groups --); fi
if ! "${as_user[@]}" env HOME="$work/with" tshark -G plugins 2>/dev/null | grep -q rdmatel; then
  echo "bench: tshark does not load $plugin" >&2
  exit 1
fi

declare -A secs walls
# Rates are per cpu second (user + sys): every run is one thread, so that is the speed of one
# core, and it does not count the time the process waited for a core on a busy machine.
row() {  # label wall cpu peak_kb
  local cpu=$3
  [[ $(echo "$cpu > 0" | bc -l) == 1 ]] || cpu=0.01  # a tiny capture: below the clock's resolution
  printf "| %-40s | %7.2f | %7.2f | %7.2f | %7.0f | %6d |\n" "$1" "$2" "$3" \
    "$(echo "$packets / $cpu / 1000000" | bc -l)" "$(echo "$bytes / $cpu / 1000000" | bc -l)" "$(($4 / 1024))"
}
# A whole process: wall and cpu seconds and peak memory from GNU time.
run() {  # key label command...
  local key=$1 label=$2; shift 2
  /usr/bin/time -f "%e %U %S %M" -o "$work/time" "$@" >/dev/null 2>"$work/err" || { echo "$label failed:"; cat "$work/err"; exit 1; }
  local wall user sys kb
  read -r wall user sys kb <"$work/time"
  secs[$key]=$(echo "$user + $sys" | bc -l)
  walls[$key]=$wall
  row "$label" "$wall" "${secs[$key]}" "$kb"
}
# An rdmatel-bench stage: wall seconds as it measures them itself (no process start), cpu
# seconds of the whole process.
stage() {  # key label stage
  local key=$1 label=$2
  /usr/bin/time -f "%U %S %M" -o "$work/time" "$bench" "$capture" "$3" >"$work/out" 2>"$work/err" || { echo "$label failed:"; cat "$work/err"; exit 1; }
  local s user sys kb
  s=$(awk '{ for (i = 1; i < NF; ++i) if ($(i + 1) == "s") { print $i; exit } }' "$work/out")
  read -r user sys kb <"$work/time"
  secs[$key]=$(echo "$user + $sys" | bc -l)
  row "$label" "$s" "${secs[$key]}" "$kb"
}

echo "capture: $capture, $packets packets, $((bytes / 1000000)) MB; $(nproc) cores: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
echo
echo "| run                                      |  wall s |   cpu s | M pkt/s |   MB/s | peak MiB |"
echo "|---|---:|---:|---:|---:|---:|"
stage bare "bare loop over the mapping (touch BTH)" bare
stage reader "fast reader" reader
stage decoder "fast reader + decoder" decoder
stage engine "engine (no output)" engine
stage plugin_engine "engine as the plugin runs it" plugin-engine
# The CLI rows run on two threads (analyze's and export's default on two cores); the --threads 1
# rows are the same commands on one, for the wall-time ratios below.
run analyze "rdmatel analyze" "$cli" analyze "$capture" --no-progress
run analyze_1 "rdmatel analyze --threads 1" "$cli" analyze "$capture" --no-progress --threads 1
for kind in io messages flows congestion alerts diagnosis; do
  run "export_$kind" "rdmatel export $kind" "$cli" export "$kind" "$capture" --no-progress
done
run export_io_1 "rdmatel export io --threads 1" "$cli" export io "$capture" --no-progress --threads 1
run export_messages_1 "rdmatel export messages --threads 1" "$cli" export messages "$capture" --no-progress --threads 1
# An export runs only the components its kind needs; --all-components runs every one (same records).
run export_io_all_1 "rdmatel export io --threads 1 --all-components" "$cli" export io "$capture" --no-progress \
  --threads 1 --all-components
run export_csv "rdmatel export messages --format csv" "$cli" export messages "$capture" --no-progress --format csv
# A compressed capture is read by libwiretap, whose decompression costs about as much as the
# measurement: on two threads it is read ahead on a thread of its own.
gzip -1 -c "$capture" >"$work/capture.pcapng.gz"
run analyze_gz "rdmatel analyze, the capture gzipped" "$cli" analyze "$work/capture.pcapng.gz" --no-progress
run analyze_gz_1 "rdmatel analyze --threads 1, gzipped" "$cli" analyze "$work/capture.pcapng.gz" --no-progress --threads 1
# a / b, or "-" where b is below the clock's resolution (a tiny capture).
divide() { if [[ $(echo "$2 > 0" | bc -l) == 1 ]]; then printf "%.2f" "$(echo "$1 / $2" | bc -l)"; else printf -- "-"; fi; }
ratio() { divide "${secs[$1]}" "${secs[$2]}"; }
wall_ratio() { divide "${walls[$1]}" "${walls[$2]}"; }
threads_rows() {
  # (export io needs no component of the second thread: it runs on one either way.)
  echo "| wall, 2 threads / 1: analyze, export messages | $(wall_ratio analyze analyze_1), $(wall_ratio export_messages export_messages_1) |"
  echo "| cpu, 2 threads / 1: analyze, export messages | $(ratio analyze analyze_1), $(ratio export_messages export_messages_1) |"
  echo "| wall, 2 threads / 1: analyze of the gzipped capture (read ahead) | $(wall_ratio analyze_gz analyze_gz_1) |"
}
if [[ ${RDMATEL_BENCH_TSHARK:-1} != 0 ]]; then
  # tshark dissects only when something needs it (a filter, a tap, printing): `tshark -q -r X`
  # alone reads the file and nothing else. Every tshark run here has a tap, so every frame is
  # dissected (no protocol tree unless a tap or filter asks for one).
  run ts "tshark -z io,stat,0 (no plugin)" "${as_user[@]}" env HOME="$work/without" tshark -q -z io,stat,0 -r "$capture"
  # One pass where nothing reads rdmatel's results: the plugin does not run its engine.
  run ts_plugin "tshark -z io,stat,0 (plugin, not measuring)" "${as_user[@]}" env HOME="$work/with" tshark -q -z io,stat,0 -r "$capture"
  # Two passes: the plugin measures every frame of the first (the second may read any result),
  # on its engine thread, since the first pass reads nothing; the last row on tshark's thread.
  run ts2 "tshark -2 -z io,stat,0 (no plugin)" "${as_user[@]}" env HOME="$work/without" tshark -2 -q -z io,stat,0 -r "$capture"
  run ts2_plugin "tshark -2 -z io,stat,0 (plugin)" "${as_user[@]}" env HOME="$work/with" tshark -2 -q -z io,stat,0 -r "$capture"
  run ts2_plugin_1 "the same, rdmatel.engine_thread:FALSE" "${as_user[@]}" env HOME="$work/with" tshark \
    -o rdmatel.engine_thread:FALSE -2 -q -z io,stat,0 -r "$capture"
  tables=(-z rdmatel,io,host -z rdmatel,msg,flow)
  run ts_tables "tshark -z rdmatel tables (one pass)" "${as_user[@]}" env HOME="$work/with" tshark -q "${tables[@]}" -r "$capture"
  run ts2_tables "tshark -2 -z rdmatel tables" "${as_user[@]}" env HOME="$work/with" tshark -2 -q "${tables[@]}" -r "$capture"
fi

echo
echo "| ratio (cpu) | x |"
echo "|---|---:|"
if [[ ${RDMATEL_BENCH_TSHARK:-1} != 0 ]]; then
  echo "| plugin cost, tshark -2 with / without the plugin | $(ratio ts2_plugin ts2) |"
  echo "| the same in wall time (engine thread on, off) | $(wall_ratio ts2_plugin ts2), $(wall_ratio ts2_plugin_1 ts2) |"
  echo "| tshark -2 rdmatel tables / tshark -2 without the plugin (wall) | $(ratio ts2_tables ts2) ($(wall_ratio ts2_tables ts2)) |"
  echo "| tshark one pass, rdmatel tables / without the plugin | $(ratio ts_tables ts) |"
  echo "| tshark one pass, nothing reads rdmatel (engine not run) / without the plugin | $(ratio ts_plugin ts) |"
  echo "| tshark dissecting (no plugin) / rdmatel analyze | $(ratio ts analyze) |"
  echo "| tshark dissecting (no plugin) / rdmatel export io | $(ratio ts export_io) |"
  echo "| tshark rdmatel tables, one pass / rdmatel analyze | $(ratio ts_tables analyze) |"
  echo "| tshark -2 rdmatel tables / rdmatel analyze | $(ratio ts2_tables analyze) |"
fi
echo "| the plugin's engine / the engine alone | $(ratio plugin_engine engine) |"
echo "| rdmatel analyze / engine alone | $(ratio analyze engine) |"
echo "| engine / reader + decoder | $(ratio engine decoder) |"
echo "| rdmatel analyze / bare loop | $(ratio analyze bare) |"
echo "| export io, the components it needs / every component (one thread) | $(ratio export_io_1 export_io_all_1) |"
threads_rows

# The plugin's cost in alternating pairs (bench/pairs.sh: each pair's ratio, the median of the
# pairs and their range). RDMATEL_BENCH_PAIRS=N pairs (default 3; 0 leaves them out).
pairs=${RDMATEL_BENCH_PAIRS:-3}
# shellcheck source=bench/pairs.sh
source bench/pairs.sh
if [[ ${RDMATEL_BENCH_TSHARK:-1} != 0 && $pairs -gt 0 ]]; then
  echo
  echo "| plugin cost, $pairs alternating pairs: with / without | cpu, median (range) | wall, median (range) |"
  echo "|---|---:|---:|"
  tshark_with=("${as_user[@]}" env HOME="$work/with" tshark -q -r "$capture")
  tshark_without=("${as_user[@]}" env HOME="$work/without" tshark -q -r "$capture")
  with2=("${tshark_with[@]}" -2 -z io,stat,0) without2=("${tshark_without[@]}" -2 -z io,stat,0)
  paired "tshark -2 -z io,stat,0 (the plugin measures every frame)" with2 without2
  tables2=("${tshark_with[@]}" -2 "${tables[@]}")
  paired "tshark -2 rdmatel tables / tshark -2 -z io,stat,0 without the plugin" tables2 without2
  with1=("${tshark_with[@]}" -z io,stat,0) without1=("${tshark_without[@]}" -z io,stat,0)
  tables1=("${tshark_with[@]}" "${tables[@]}")
  paired "tshark rdmatel tables, one pass / tshark -z io,stat,0 without the plugin" tables1 without1
  paired "tshark -z io,stat,0, one pass (nothing reads rdmatel: not measured)" with1 without1
fi
# Instructions per packet (callgrind): the same for the same binary and capture whatever the
# machine is doing, unlike the cpu seconds above. RDMATEL_BENCH_INSTRUCTIONS=0 leaves it out.
if [[ ${RDMATEL_BENCH_INSTRUCTIONS:-1} != 0 ]] && command -v valgrind >/dev/null; then
  echo
  bench/instructions.sh "$capture" "$bench"
fi
