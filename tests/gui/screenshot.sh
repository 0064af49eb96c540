#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Runs the real Wireshark GUI (Qt, 4.0) under Xvfb with the freshly built plugin and the
# RDMA-Telemetry profile on an NVMe-oF capture, opens the per-host NVMe latency dialog
# (Statistics menu) and the I/O graphs, and saves screenshots (PNG) in tests/artifacts/gui/.
#
#   tests/gui/screenshot.sh [--plugin rdmatel.so] [--synth rdmatel-synth] [--capture FILE.pcapng]
#                           [--profile DIR] [--out DIR]
#
# Exit 0 when both windows appeared with their titles and were saved, 1 otherwise (the CTest
# test "gui" runs it), 77 when Xvfb, wireshark, xdotool or ImageMagick's import is missing or no
# X server can be started. Wireshark ignores personal plugins when run as root: as root, the GUI
# runs as nobody.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
plugin=""
synth=""
capture=""
profile="$repo/profiles/RDMA-Telemetry"
out="$repo/tests/artifacts/gui"
while (($#)); do
  case "$1" in
    --plugin) plugin="$2"; shift ;;
    --synth) synth="$2"; shift ;;
    --capture) capture="$2"; shift ;;
    --profile) profile="$2"; shift ;;
    --out) out="$2"; shift ;;
    *) echo "usage: $0 [--plugin SO] [--synth BIN] [--capture PCAPNG] [--profile DIR] [--out DIR]" >&2; exit 2 ;;
  esac
  shift
done

skip() { echo "SKIP: $*" >&2; exit 77; }
for tool in Xvfb wireshark xdotool import xwininfo; do
  command -v "$tool" >/dev/null || skip "$tool is not installed (scripts/install-deps.sh --test installs it)"
done
newest() { ls -t "$@" 2>/dev/null | head -1 || true; }
[[ -n "$plugin" ]] || plugin="$(newest "$repo"/build/*/plugin/4.0/epan/rdmatel.so)"
[[ -n "$synth" ]] || synth="$(newest "$repo"/build/*/samples/synth/rdmatel-synth)"
[[ -f "$plugin" ]] || { echo "no rdmatel.so: build first or pass --plugin" >&2; exit 2; }

work="$(mktemp -d /tmp/rdmatel_gui.XXXXXX)"
xvfb_pid=""
ws_pid=""
cleanup() {
  [[ -n "$ws_pid" ]] && kill "$ws_pid" 2>/dev/null || true
  [[ -n "$xvfb_pid" ]] && kill "$xvfb_pid" 2>/dev/null || true
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
mkdir -p "$out"

# A private HOME: the plugin in the personal plugin folder, the profile in the profiles folder.
home="$work/home"
mkdir -p "$home/.local/lib/wireshark/plugins/4.0/epan" "$home/.config/wireshark/profiles" "$home/run"
cp "$plugin" "$home/.local/lib/wireshark/plugins/4.0/epan/"
cp -r "$profile" "$home/.config/wireshark/profiles/RDMA-Telemetry"
# The capture: 20 s of NVMe-oF traffic at two points, so that the I/O graph has a shape (the
# small sample under a sanitizer, which makes Wireshark several times slower).
if [[ -z "$capture" ]]; then
  if [[ -x "$synth" && -z "${RDMATEL_TSHARK_PRELOAD:-}" ]]; then
    capture="$home/nvme_20s.pcapng"
    "$synth" --scenario nvme-2point --duration-s 20 --ios 2000 --seed 7 --snaplen 256 --out "$capture" >/dev/null
  else
    capture="$repo/samples/nvme_2point.pcapng"
  fi
fi
cp "$capture" "$home/" 2>/dev/null || true
capture="$home/$(basename "$capture")"
name="$(basename "$capture")"
as_user=()
if [[ "$(id -u)" -eq 0 ]]; then
  chown -R 65534:65534 "$work"
  as_user=(setpriv --reuid=65534 --regid=65534 --clear-groups --)
fi
chmod 700 "$home/run"

# An X server of our own on a free display.
display=""
for n in $(seq 90 140); do
  [[ -e /tmp/.X11-unix/X$n || -e /tmp/.X$n-lock ]] && continue
  # -noreset: by default Xvfb resets when its last client leaves, and a Wireshark started just
  # after the previous one was stopped can find the display unreachable for that moment.
  Xvfb ":$n" -screen 0 1920x1080x24 -nolisten tcp -ac -noreset >"$work/xvfb.log" 2>&1 &
  xvfb_pid=$!
  for _ in $(seq 50); do
    if DISPLAY=":$n" xwininfo -root >/dev/null 2>&1; then display=":$n"; break; fi
    kill -0 "$xvfb_pid" 2>/dev/null || break
    sleep 0.1
  done
  [[ -n "$display" ]] && break
  kill "$xvfb_pid" 2>/dev/null || true
  xvfb_pid=""
done
[[ -n "$display" ]] || skip "no X server could be started (Xvfb)"
export DISPLAY="$display"

# Windows whose title matches $1 (extended regex), one id per line.
windows() { xdotool search --onlyvisible --name "$1" 2>/dev/null || true; }
# Waits up to $2 s for a window titled like $1; prints its id.
wait_window() {
  local id=""
  for _ in $(seq $(($2 * 5))); do
    id="$(windows "$1" | head -1)"
    [[ -n "$id" ]] && { echo "$id"; return 0; }
    sleep 0.2
  done
  return 1
}
# Waits until Wireshark has used no CPU for 2 s (dissection, retap and drawing are done).
wait_idle() {
  local last="" now quiet=0
  for _ in $(seq 300); do
    now="$(awk '{print $14 + $15}' "/proc/$ws_pid/stat" 2>/dev/null || echo gone)"
    if [[ "$now" == "$last" ]]; then quiet=$((quiet + 1)); else quiet=0; fi
    ((quiet >= 8)) && return 0
    last="$now"
    sleep 0.25
  done
}
# A sanitizer-built plugin needs its runtime loaded first (scripts/ci-sanitize.sh sets
# RDMATEL_TSHARK_PRELOAD); extcap helpers are not needed to read a file and must not inherit it.
preload=()
if [[ -n "${RDMATEL_TSHARK_PRELOAD:-}" ]]; then
  mkdir -p "$home/no-extcap"
  [[ "$(id -u)" -eq 0 ]] && chown 65534:65534 "$home/no-extcap"
  preload=(LD_PRELOAD="$RDMATEL_TSHARK_PRELOAD" ASAN_OPTIONS="${RDMATEL_TSHARK_ASAN_OPTIONS:-detect_leaks=0}"
           WIRESHARK_EXTCAP_DIR="$home/no-extcap")
fi
start_wireshark() {
  # The X server must still answer (it may not have survived: say so rather than blame Wireshark).
  local tries
  for tries in $(seq 50); do
    xwininfo -root >/dev/null 2>&1 && break
    sleep 0.1
  done
  xwininfo -root >/dev/null 2>&1 || { echo "FAIL: the X server $display stopped answering: $(tail -3 "$work/xvfb.log")" >&2; return 1; }
  "${as_user[@]}" env HOME="$home" DISPLAY="$display" XDG_RUNTIME_DIR="$home/run" LC_ALL=C.UTF-8 "${preload[@]}" \
    wireshark -C RDMA-Telemetry --disable-protocol rpcordma -r "$capture" "$@" >>"$work/wireshark.log" 2>&1 &
  ws_pid=$!
  main="$(wait_window "^$name\$" 120)" || { echo "FAIL: the Wireshark main window did not appear" >&2; return 1; }
  echo "main window after $((SECONDS - started)) s"
  xdotool windowsize "$main" 1600 900 windowmove "$main" 0 0
  wait_idle
  # A message box at start (titled just "Wireshark") means something in the profile or the
  # plugin was refused, e.g. a colouring rule that does not compile.
  local box
  box="$(windows '^Wireshark$' | head -1)"
  if [[ -n "$box" ]]; then
    import -window "$box" "$out/startup-message.png" 2>/dev/null || true
    echo "FAIL: Wireshark showed a message at start (see $out/startup-message.png)" >&2
    return 1
  fi
}
stop_wireshark() {
  kill "$ws_pid" 2>/dev/null || true
  wait "$ws_pid" 2>/dev/null || true
  ws_pid=""
}
# Screenshot of one window, and of the whole screen.
shoot() {
  local id="$1" file="$2"
  xdotool windowraise "$id" 2>/dev/null || true
  sleep 0.5
  import -window "$id" "$out/$file.png"
  import -window root "$out/$file-screen.png"
  echo "saved $out/$file.png"
}

failures=0
started=$SECONDS

# 1. Statistics > RDMA Telemetry · NVMe latency per host. Wireshark's GUI opens only two-part
# -z names (rdmatel,srt) from its command line, so the dialog is opened from the Statistics menu
# with the keyboard: Alt+S, Down to the entry, Return. The entry's position depends on the other
# dissectors' entries; the first guess is Wireshark 4.0.17 on Debian 12, then every position is
# tried, closing whatever else opened, until the dialog's title shows up.
title="RDMA Telemetry · NVMe latency per host · "
if start_wireshark; then
  stats=""
  for downs in 11 $(seq 1 45); do
    before="$(windows . | sort)"
    xdotool windowfocus --sync "$main" 2>/dev/null || true
    xdotool mousemove --window "$main" 700 500 key Escape key alt+s
    sleep 0.4
    for _ in $(seq "$downs"); do xdotool key Down; done
    xdotool key Return
    if stats="$(wait_window "$title" 4)"; then
      echo "opened Statistics > ${title% · } with $downs x Down"
      break
    fi
    # Close what the wrong entry opened (a dialog, a submenu), and any menu.
    for w in $(comm -13 <(echo "$before") <(windows . | sort)); do
      [[ "$w" == "$main" ]] && continue
      xdotool windowfocus "$w" key Escape 2>/dev/null || true
    done
    xdotool key Escape key Escape
    sleep 0.5
  done
  if [[ -n "$stats" ]]; then
    xdotool windowsize "$stats" 1610 200 windowmove "$stats" 10 640
    wait_idle
    shoot "$stats" stats-per-host
    xdotool windowfocus "$stats" key Escape 2>/dev/null || true
  else
    echo "FAIL: the NVMe latency per host dialog did not open" >&2
    failures=$((failures + 1))
  fi

  # 3. The "RDMA Telemetry" menu (the last of the menu bar): its first entry applies
  # rdmatel.slow; then only slow I/Os are listed, in the profile's "slow" colour (#fffa82) and
  # none in the colour of plain UDP (#daeeff).
  sleep 0.5
  xdotool windowfocus --sync "$main" 2>/dev/null || true
  xdotool mousemove --window "$main" 700 500 key Escape key alt+s
  for _ in 1 2 3 4 5; do xdotool key Right; sleep 0.3; done
  sleep 1
  import -window root "$out/rdmatel-menu-screen.png"
  xdotool key Return
  sleep 1
  wait_idle
  shoot "$main" main-slow-ios
  colours="$(convert "$out/main-slow-ios.png" -format %c histogram:info:- 2>/dev/null | tr 'a-f' 'A-F')"
  if ! grep -q "#FFFA82" <<<"$colours" || grep -q "#DAEEFF" <<<"$colours"; then
    echo "FAIL: after RDMA Telemetry > Slow I/Os and messages, the packet list is not the slow frames" >&2
    failures=$((failures + 1))
  fi

  # 4. Statistics > Conversations (the fourth entry): the profile opens it on the RDMATEL tab,
  # one row per queue pair (IP QP N <-> IP QP N) of the slow frames shown.
  xdotool windowfocus --sync "$main" 2>/dev/null || true
  xdotool mousemove --window "$main" 700 500 key Escape key alt+s key Down Down Down Return
  if conv="$(wait_window "Conversations · $name" 20)"; then
    xdotool windowsize "$conv" 1500 500 windowmove "$conv" 10 400
    wait_idle
    shoot "$conv" conversations
  else
    echo "FAIL: Statistics > Conversations did not open" >&2
    failures=$((failures + 1))
  fi
  stop_wireshark
else
  failures=$((failures + 1))
fi

# 2. The I/O graphs of the profile (RTT, IOL1, DAL average and maximum per second).
if start_wireshark -z io,stat; then
  if graph="$(wait_window "I/O Graphs · $name" 60)"; then
    xdotool windowsize "$graph" 1300 760 windowmove "$graph" 300 120
    wait_idle
    shoot "$graph" io-graph
  else
    echo "FAIL: the I/O graph did not open" >&2
    failures=$((failures + 1))
  fi
  stop_wireshark
else
  failures=$((failures + 1))
fi

# Wireshark reports what it refused (a colouring rule or a UAT row of the profile, a dissector
# bug in the plugin, ...) on stderr. Known noise: Wireshark's own RPCoRDMA dissector bug on
# short-captured RDMA packets, the wireless probe, Qt's runtime-directory check.
complaints="$(grep -E "WARNING|CRITICAL|ERROR|Could not|Can't|invalid" "$work/wireshark.log" |
  grep -vE "protocol RPCoRDMA|nl80211|QStandardPaths" || true)"
if [[ -n "$complaints" ]]; then
  echo "FAIL: Wireshark complained:" >&2
  head -10 <<<"$complaints" >&2
  failures=$((failures + 1))
fi
if ((failures)); then
  echo "FAIL: $failures GUI checks failed; Wireshark said: $(grep -v "Dissector bug" "$work/wireshark.log" | tail -5)" >&2
  exit 1
fi
echo "OK: screenshots in $out ($((SECONDS - started)) s)"
