#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Are two builds' outputs identical? Runs `rdmatel analyze` and every `export` kind of two CLI
# binaries on the same captures (the samples, generated captures of every capture condition, ring
# files, a file given twice, tiny limits) and compares standard output, standard error and exit
# status byte for byte. For work that must change no result (performance): a difference is a bug.
#   bench/same_outputs.sh OLD_CLI NEW_CLI [CAPTURE...]
# Captures are generated once into $RDMATEL_SAME_DIR (default /tmp/rdmatel_same) with the
# generator of $RDMATEL_BUILD (default build/test). Extra CAPTURE arguments (the real captures,
# say) are compared too. Prints one line per difference and a summary; exit 1 on any difference.
set -euo pipefail
cd "$(dirname "$0")/.."
old=$(realpath "$1") new=$(realpath "$2")
shift 2
build=${RDMATEL_BUILD:-build/test}
synth=$(realpath "$build/samples/synth/rdmatel-synth")
dir=${RDMATEL_SAME_DIR:-/tmp/rdmatel_same}
mkdir -p "$dir/gen"
out=$(mktemp -d /tmp/rdmatel_same_out_XXXXXX)  # one per run: several may run at once
trap 'rm -rf "$out"' EXIT

gen() {  # name synth-args...
  local name=$1
  shift
  [[ -s $dir/gen/$name.pcapng ]] || "$synth" "$@" --out "$dir/gen/$name.pcapng" >/dev/null
  rm -f "$dir/gen/$name.truth.json"
}
gen offsets3 --scenario nvme-3point --seed 301 --ios 400 --clock-offset spine1=5000000 --clock-offset leafB-stor=-1700000000 --loss 0.01 --jitter-ns 200
gen ipv6_snapped --scenario nvme-2point --seed 302 --ios 400 --ipv6 --vlan 2 --snaplen 128 --order blocks
gen mixed5 --scenario mixed --seed 303 --ios 300 --flows 6 --messages 12 --points 5 --routed --cross --loss 0.02 --snaplen 256
gen flows_wrap --scenario write-flows --seed 304 --flows 8 --messages 40 --psn-wrap --loss 0.01 --pcp 5 --vlan 1 --snaplen 128
gen midstream4 --scenario nvme-midstream --seed 305 --ios 500 --points 4 --clock-offset leafA-up=-2000000000 --incomplete 0.05
gen large --scenario nvme-large --seed 306 --ios 12000
gen jitter1 --scenario nvme-1point --seed 307 --ios 300 --jitter-ns 400 --loss 0.03
# dumpcap-like ring files (editcap names them ring_NNNNN_STAMP.pcapng)
compgen -G "$dir/gen/ring_*.pcapng" >/dev/null || editcap -c 4000 "$dir/gen/offsets3.pcapng" "$dir/gen/ring.pcapng" >/dev/null

captures=(samples/*.pcapng "$dir"/gen/{offsets3,ipv6_snapped,mixed5,flows_wrap,midstream4,large,jitter1}.pcapng "$@")
mapfile -t ring < <(ls "$dir"/gen/ring_*.pcapng | sort -r)  # files in reverse order
runs=0 diffs=0

compare() {  # label args...
  local label=$1
  shift
  local o=$out/old n=$out/new s1=0 s2=0
  "$old" "$@" --no-progress >"$o.out" 2>"$o.err" || s1=$?
  "$new" "$@" --no-progress >"$n.out" 2>"$n.err" || s2=$?
  ((++runs))
  if [[ $s1 != "$s2" ]] || ! cmp -s "$o.out" "$n.out" || ! cmp -s "$o.err" "$n.err"; then
    ((++diffs))
    echo "DIFFERENT: $label (exit $s1 / $s2)"
    diff "$o.out" "$n.out" | head -5 || true
    diff "$o.err" "$n.err" | head -5 || true
  fi
}

kinds=(io messages flows congestion paths offsets alerts diagnosis)
for c in "${captures[@]}"; do
  b=$(basename "$c")
  compare "$b analyze" analyze "$c"
  compare "$b analyze -1 offsets" analyze "$c" --threads 1 --estimate-offsets --alert 'rtt>30' --by gpu --gpu-map samples/gpu_map.csv
  for k in "${kinds[@]}"; do compare "$b export $k" export "$k" "$c" --threads 1; done
  compare "$b export io point-local" export io_points "$c" --point-local
  for k in "${kinds[@]}"; do compare "$b export $k csv" export "$k" "$c" --format csv --threads 1; done
  compare "$b export io point-local csv" export io_points "$c" --point-local --format csv
  for k in messages flows io diagnosis; do
    compare "$b export $k gpu" export "$k" "$c" --gpu-map samples/gpu_map.csv
    compare "$b export $k gpu csv" export "$k" "$c" --gpu-map samples/gpu_map.csv --format csv
  done
  compare "$b export alerts rules" export alerts "$c" --alert 'rtt>50' --alert 'fnr>0.001' --alert 'fct>20'
  compare "$b export paths offsets" export paths "$c" --estimate-offsets
  compare "$b analyze tiny limits" analyze "$c" --threads 1 --max-messages 50 --max-ios 40 --max-reorder-packets 500 --max-flows 12
done
compare "ring files reversed" analyze "${ring[@]}"
compare "ring files export io" export io "${ring[@]}" --threads 1
compare "file given twice" export messages samples/mixed.pcapng samples/mixed.pcapng
echo "$runs runs, $diffs different"
((diffs == 0))
