#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# What many busy observation points cost: `rdmatel analyze --threads 1` on captures of the same
# 400,000 packets over 20 s spread over 4, 64, 1,000 and 4,000 points that all stay active
# (bench/many_points.py), cpu seconds and peak memory of each, and each against 4 points.
#   bench/many_points.sh [CLI]   default: build/test/cli/rdmatel (RDMATEL_BUILD=DIR picks another)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${RDMATEL_BUILD:-build/test}
cli=${1:-$build/cli/rdmatel}
work=$(mktemp -d /tmp/rdmatel_points_XXXXXX)
trap 'rm -rf "$work"' EXIT
echo "| points | cpu s | peak MiB | cpu / 4 points |"
echo "|---:|---:|---:|---:|"
base=
for points in 4 64 1000 4000; do
  python3 bench/many_points.py "$points" 400000 "$work/p.pcapng"
  /usr/bin/time -f "%U %S %M" -o "$work/time" "$cli" analyze --threads 1 -q "$work/p.pcapng" >/dev/null
  read -r user sys kb <"$work/time"
  cpu=$(echo "$user + $sys" | bc -l)
  [[ -n $base ]] || base=$cpu
  printf "| %d | %.2f | %.0f | %.2f |\n" "$points" "$cpu" "$((kb / 1024))" "$(echo "$cpu / $base" | bc -l)"
done
