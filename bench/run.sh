#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Benchmarks rdmatel against tshark on the same capture and reports ratios.
#   bench/run.sh [CAPTURE]      default: a generated nvme-large capture (2.2 M packets)
# Needs a build (./test.sh or cmake --build build/test). Prints wall time, packets/s and peak
# memory for: the CLI (analyze, export messages); tshark dissecting every frame without and
# with the plugin (-z io,stat,0); tshark computing the rdmatel tables in one and two passes;
# then the ratios. Timings are wall-clock on a shared machine: run it twice and read the
# second run.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${RDMATEL_BUILD:-build/test}
[[ -x $build/cli/rdmatel ]] || build=build
cli=$build/cli/rdmatel
plugin=$(ls "$build"/plugin/*/epan/rdmatel.so | head -1)
synth=$build/samples/synth/rdmatel-synth
work=$(mktemp -d /tmp/rdmatel_bench_XXXXXX)
chmod 755 "$work"
trap 'rm -rf "$work"' EXIT

capture=${1:-}
if [[ -z $capture ]]; then
  capture=$work/nvme_large.pcapng
  echo "generating $capture (nvme-large) ..."
  "$synth" --scenario nvme-large --out "$capture" >/dev/null
else
  cp "$capture" "$work/" && capture=$work/$(basename "$capture")
fi
chmod 644 "$capture"
packets=$(capinfos -c -M "$capture" 2>/dev/null | awk -F: '/Number of packets/ {gsub(/[^0-9]/, "", $2); print $2}')
cat "$capture" >/dev/null  # page cache

# tshark as an unprivileged user (root's tshark ignores personal plugin folders).
mkdir -p "$work/with/.local/lib/wireshark/plugins/4.0/epan" "$work/without"
cp "$plugin" "$work/with/.local/lib/wireshark/plugins/4.0/epan/"
chmod -R a+rX "$work"
as_user=()
if [[ $(id -u) -eq 0 ]]; then as_user=(setpriv --reuid=65534 --regid=65534 --clear-groups --); fi

declare -A secs mem
run() {  # key label command...
  local key=$1 label=$2; shift 2
  /usr/bin/time -f "%e %M" -o "$work/time" "$@" >/dev/null 2>"$work/err" || { echo "$label failed:"; cat "$work/err"; exit 1; }
  local s m
  read -r s m <"$work/time"
  secs[$key]=$s
  mem[$key]=$m
  printf "%-26s %8.2f s %12.0f packets/s %8d MB peak\n" "$label" "$s" "$(echo "$packets / $s" | bc -l)" "$((m / 1024))"
}

if ! "${as_user[@]}" env HOME="$work/with" tshark -G plugins 2>/dev/null | grep -q rdmatel; then
  echo "bench: tshark does not load $plugin" >&2
  exit 1
fi
echo "capture: $capture, $packets packets"
run cli "rdmatel analyze" "$cli" analyze "$capture" --no-progress
run cli_msgs "rdmatel export messages" "$cli" export messages "$capture" --no-progress
# tshark dissects only when something needs it (a filter, a tap, printing): `tshark -q -r X`
# alone reads the file and nothing else. Every tshark run here has a tap, so every frame is
# dissected (no protocol tree unless a tap or filter asks for one).
run ts "tshark -z io,stat,0 (no plugin)" "${as_user[@]}" env HOME="$work/without" tshark -q -z io,stat,0 -r "$capture"
run ts_plugin "tshark -z io,stat,0 (plugin)" "${as_user[@]}" env HOME="$work/with" tshark -q -z io,stat,0 -r "$capture"
tables=(-z rdmatel,io,host -z rdmatel,msg,flow)
run ts_tables "tshark -z rdmatel tables" "${as_user[@]}" env HOME="$work/with" tshark -q "${tables[@]}" -r "$capture"
run ts2_tables "tshark -2 -z rdmatel tables" "${as_user[@]}" env HOME="$work/with" tshark -2 -q "${tables[@]}" -r "$capture"

ratio() { echo "scale=1; ${secs[$1]} / ${secs[$2]}" | bc -l; }
echo
echo "tshark dissecting (no plugin) / rdmatel analyze:       $(ratio ts cli)x"
echo "tshark -2 rdmatel tables / rdmatel analyze:             $(ratio ts2_tables cli)x"
echo "tshark rdmatel tables (one pass) / rdmatel analyze:     $(ratio ts_tables cli)x"
echo "plugin cost: tshark io,stat with / without plugin:      $(ratio ts_plugin ts)x"
