#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The Wireshark GUI's cost of loading a capture, without and with the rdmatel plugin: wall and CPU
# seconds and peak memory of `wireshark -r CAPTURE` under Xvfb until it has read the file (without
# the plugin: the default profile; with it: the RDMA-Telemetry profile's columns and colours, then
# the default profile, where the plugin measures on its engine thread; and, for comparison, without
# the plugin and nine custom columns of Wireshark's own fields).
#   bench/gui_load.sh [CAPTURE]     default: a generated nvme-large capture (2.2 M packets)
# "Loaded" is when the process has read the whole file and then used no CPU for 3 s (Wireshark
# reads the file, dissects every frame for the packet list, then idles); CPU seconds are user + sys from
# /proc/PID/stat, peak memory is VmHWM, loaded memory VmRSS once loaded (what the open capture
# keeps). Needs Xvfb and a build (RDMATEL_BUILD=DIR, default
# build/test). Run it twice on a busy machine and read the second run. RDMATEL_GUI_DEBUG=1 prints
# the CPU and bytes read each second.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${RDMATEL_BUILD:-build/test}
[[ -x $build/cli/rdmatel ]] || build=build
plugin=$(ls "$build"/plugin/*/epan/rdmatel.so | head -1)
synth=$build/samples/synth/rdmatel-synth
command -v Xvfb >/dev/null || { echo "gui_load: Xvfb is not installed (scripts/install-deps.sh --test)" >&2; exit 77; }
command -v wireshark >/dev/null || { echo "gui_load: wireshark is not installed" >&2; exit 77; }
work=$(mktemp -d /tmp/rdmatel_guiload_XXXXXX)
chmod 755 "$work"
xvfb=""
cleanup() {
  [[ -n $xvfb ]] && kill "$xvfb" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

# shellcheck source=bench/capture.sh
source bench/capture.sh
bench_capture "${1:-}"

# Wireshark as an unprivileged user with a private HOME: one with the plugin and the profile.
mkdir -p "$work/with/.local/lib/wireshark/plugins/4.0/epan" "$work/with/.config/wireshark/profiles" "$work/without"
cp "$plugin" "$work/with/.local/lib/wireshark/plugins/4.0/epan/"
cp -r profiles/RDMA-Telemetry "$work/with/.config/wireshark/profiles/"
# A control without the plugin: the RDMA-Telemetry profile's layout with nine custom columns of
# Wireshark's own fields in place of rdmatel's, for what custom columns cost Wireshark itself.
mkdir -p "$work/without/.config/wireshark/profiles/Columns"
{
  echo "gui.column.format:"
  echo '  "No.", "%m", "Time", "%t", "Point", "%Cus:frame.cap_len:0:R", "Source", "%s", "Destination", "%d",'
  echo '  "Protocol", "%p", "Length", "%L", "Opcode", "%Cus:infiniband.bth.opcode:0:R",'
  echo '  "QP", "%Cus:infiniband.bth.destqp:0:R", "PSN", "%Cus:infiniband.bth.psn:0:R",'
  echo '  "AckReq", "%Cus:infiniband.bth.a:0:R", "ECN", "%Cus:ip.dsfield.ecn:0:R", "TTL", "%Cus:ip.ttl:0:R",'
  echo '  "IP ID", "%Cus:ip.id:0:R", "UDP length", "%Cus:udp.length:0:R", "Info", "%i"'
} >"$work/without/.config/wireshark/profiles/Columns/preferences"
chmod -R a+rX "$work"
# Wireshark writes its personal folders on start (a dialog waits for OK when it cannot).
chmod -R a+rwX "$work/with" "$work/without"
for n in $(seq 90 140); do
  [[ -e /tmp/.X$n-lock ]] && continue
  Xvfb ":$n" -screen 0 1600x900x24 -nolisten tcp >/dev/null 2>&1 &
  xvfb=$!
  display=":$n"
  sleep 1
  kill -0 "$xvfb" 2>/dev/null && break
  xvfb=""
done
[[ -n $xvfb ]] || { echo "gui_load: no X server started" >&2; exit 77; }
as_user=()
if [[ $(id -u) -eq 0 ]]; then as_user=(setpriv --reuid=65534 --regid=65534 --clear-groups --); fi

cpu_of() {  # utime + stime of PID, in clock ticks
  awk '{print $14 + $15}' "/proc/$1/stat" 2>/dev/null || echo ""
}
load() {  # label home profile-args...
  local label=$1 home=$2; shift 2
  local start ticks last idle=0 hz peak loaded busy_until
  hz=$(getconf CLK_TCK)
  start=$(date +%s.%N)
  DISPLAY=$display "${as_user[@]}" env HOME="$home" XDG_CONFIG_HOME="$home/.config" \
    wireshark "$@" -r "$capture" >/dev/null 2>&1 &
  local pid=$!
  sleep 1
  # The wireshark process itself (setpriv execs it, env too).
  last=$(cpu_of "$pid")
  busy_until=$(date +%s.%N)
  while kill -0 "$pid" 2>/dev/null; do
    sleep 1
    ticks=$(cpu_of "$pid")
    [[ -z $ticks ]] && break
    if [[ $ticks == "$last" ]]; then idle=$((idle + 1)); else idle=0; busy_until=$(date +%s.%N); fi
    last=$ticks
    read_bytes=$(awk '/^rchar/ {print $2}' "/proc/$pid/io" 2>/dev/null || echo 0)
    [[ -n ${RDMATEL_GUI_DEBUG:-} ]] && echo "  $label t+$SECONDS cpu=$ticks read=$read_bytes" >&2
    # Loaded: the whole file was read (a fresh HOME can keep Qt waiting on its caches before),
    # then no CPU for 3 s.
    [[ $read_bytes -ge $bytes && $idle -ge 3 ]] && break
  done
  peak=$(awk '/VmHWM/ {print $2}' "/proc/$pid/status" 2>/dev/null || echo 0)
  # What it holds once loaded, for as long as the capture stays open.
  loaded=$(awk '/VmRSS/ {print $2}' "/proc/$pid/status" 2>/dev/null || echo 0)
  kill "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  # Wall: until the last second it used CPU (1 s resolution).
  local wall
  wall=$(echo "$busy_until - $start" | bc -l)
  printf "| %-36s | %8.0f | %8.2f | %8.0f | %9.0f | %8.2f |\n" "$label" "$wall" "$(echo "$last / $hz" | bc -l)" \
    "$((peak / 1024))" "$((loaded / 1024))" "$(echo "$packets / ($last / $hz) / 1000000" | bc -l)"
  echo "$last" >"$work/$label.ticks"
  echo "$wall" >"$work/$label.wall"
}

echo "capture: $capture, $packets packets; $(nproc) cores"
echo
echo "| wireshark -r (until idle)            |   wall s |   cpu s | peak MB | loaded MB | M pkt/s |"
echo "|---|---:|---:|---:|---:|---:|"
load without "$work/without"
load without_columns "$work/without" -C Columns
load with "$work/with" -C RDMA-Telemetry
# The plugin under the default profile: no rdmatel column, colour or filter reads the frames as
# they load, so the plugin measures them on its engine thread.
load with_default "$work/with" -C Default
echo
ratio_of() { printf "%.2f" "$(echo "$(cat "$work/$1") / $(cat "$work/$2")" | bc -l)"; }
echo "| plugin cost: GUI load with / without | cpu | wall |"
echo "|---|---:|---:|"
echo "| the RDMA-Telemetry profile | $(ratio_of with.ticks without.ticks) | $(ratio_of with.wall without.wall) |"
echo "| the default profile | $(ratio_of with_default.ticks without.ticks) | $(ratio_of with_default.wall without.wall) |"
echo "| the RDMA-Telemetry profile / nine custom columns of Wireshark's fields without the plugin | $(ratio_of with.ticks without_columns.ticks) | $(ratio_of with.wall without_columns.wall) |"
