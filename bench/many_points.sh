#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# What many busy observation points cost: `rdmatel analyze --threads 1` on captures of the same
# 400,000 packets over 20 s spread over 4, 64, 1,000 and 4,000 points that all stay active
# (bench/many_points.py), cpu seconds and peak memory of each, and each against 4 points of the
# same layout.
#   bench/many_points.sh [CLI]   default: build/test/cli/rdmatel (RDMATEL_BUILD=DIR picks another)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${RDMATEL_BUILD:-build/test}
cli=${1:-$build/cli/rdmatel}
work=$(mktemp -d /tmp/rdmatel_points_XXXXXX)
trap 'rm -rf "$work"' EXIT
# Three ways the NVMe I/Os may lie over the points (bench/many_points.py's IO_POINTS): reads
# between one host and one storage server seen at the first two points; the same reads seen at
# every point, as along a path of that many hops; reads at every point of its own (as many homes
# of I/Os as points).
echo "| points | I/Os seen at | cpu s | peak MiB | cpu / 4 points |"
echo "|---:|---|---:|---:|---:|"
for layout in two every own; do
  base=
  for points in 4 64 1000 4000; do
    case $layout in
      two) io_points=2 ;;
      every) io_points=$points ;;
      own) io_points=0 ;;
    esac
    python3 bench/many_points.py "$points" 400000 "$work/p.pcapng" 20 "$io_points"
    /usr/bin/time -f "%U %S %M" -o "$work/time" "$cli" analyze --threads 1 -q "$work/p.pcapng" >/dev/null
    read -r user sys kb <"$work/time"
    cpu=$(echo "$user + $sys" | bc -l)
    [[ -n $base ]] || base=$cpu
    case $layout in
      two) seen="2 points" ;;
      every) seen="every point" ;;
      own) seen="its own point" ;;
    esac
    printf "| %d | %s | %.2f | %.0f | %.2f |\n" "$points" "$seen" "$cpu" "$((kb / 1024))" "$(echo "$cpu / $base" | bc -l)"
  done
done
