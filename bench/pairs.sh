#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A against B in alternating pairs of whole processes: on a shared machine one run varies by
# 10-40 % and the speed drifts over minutes, so each pair runs the two commands one after the
# other and takes their ratio; the median of the pairs is quoted with their range. For comparing
# two builds (a change's effect on time), or a command with and without something (the plugin).
#   bench/pairs.sh [-n PAIRS] 'COMMAND A' 'COMMAND B'     (default 5 pairs; output to /dev/null)
# Prints one table: A / B in cpu seconds (user + sys), wall seconds and peak memory, median
# (range). Instructions (bench/instructions.sh) are the exact measure of a code change; this is
# what it does to time.
# Sourced (bench/run.sh), it only defines cpu_wall, median_range and paired.

# command... : prints "cpu wall peak_kb" of one run (its output to /dev/null; stops on failure)
cpu_wall() {
  local t err
  t=$(mktemp) err=$(mktemp)
  /usr/bin/time -f "%U %S %e %M" -o "$t" "$@" >/dev/null 2>"$err" || {
    echo "failed: $*" >&2
    cat "$err" >&2
    rm -f "$t" "$err"
    exit 1
  }
  awk '{print $1 + $2, $3, $4}' "$t"
  rm -f "$t" "$err"
}

# numbers... : "median (min-max)"
median_range() {
  printf "%s\n" "$@" | sort -g | awk '{v[NR] = $1} END {
    m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
    printf "%.2f (%.2f-%.2f)", m, v[1], v[NR] }'
}

# numbers... : "median (min-max)", or "-" for none
median_or_none() { if (($#)); then median_range "$@"; else printf -- "-"; fi; }

# pairs label array_a array_b [memory]: one table row, A / B, cpu and wall (and peak memory with
# a fourth argument), each "median (range)" over `pairs` pairs ("-" where B took none: a command
# that sleeps uses no cpu).
paired() {
  local label=$1 cpu=() wall=() mem=() a b i
  local -n cmd_a=$2 cmd_b=$3
  for ((i = 0; i < pairs; ++i)); do
    read -r -a a < <(cpu_wall "${cmd_a[@]}")
    read -r -a b < <(cpu_wall "${cmd_b[@]}")
    [[ $(echo "${b[0]} > 0" | bc -l) == 1 ]] && cpu+=("$(echo "${a[0]} / ${b[0]}" | bc -l)")
    [[ $(echo "${b[1]} > 0" | bc -l) == 1 ]] && wall+=("$(echo "${a[1]} / ${b[1]}" | bc -l)")
    [[ $(echo "${b[2]} > 0" | bc -l) == 1 ]] && mem+=("$(echo "${a[2]} / ${b[2]}" | bc -l)")
  done
  local row="| $label | $(median_or_none "${cpu[@]}") | $(median_or_none "${wall[@]}") |"
  [[ -z ${4:-} ]] || row+=" $(median_or_none "${mem[@]}") |"
  echo "$row"
}

[[ ${BASH_SOURCE[0]} == "$0" ]] || return 0

set -euo pipefail
pairs=5
if [[ ${1:-} == -n ]]; then
  pairs=$2
  shift 2
fi
if [[ $# -ne 2 || ! $pairs =~ ^[1-9][0-9]*$ ]]; then
  echo "usage: bench/pairs.sh [-n PAIRS] 'COMMAND A' 'COMMAND B'" >&2
  exit 2
fi
command_a=(bash -c "$1") command_b=(bash -c "$2")
echo "A: $1"
echo "B: $2"
echo
echo "| $pairs alternating pairs | cpu, median (range) | wall, median (range) | peak memory, median (range) |"
echo "|---|---:|---:|---:|"
paired "A / B" command_a command_b memory
