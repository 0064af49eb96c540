#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Starts rdmatel-analyzer under Xvfb on an NVMe-oF + RDMA WRITE capture, walks every view
# (--screenshot-dir: each tab in turn, grabbed as drawn, then the settings dialog) and checks a
# PNG of each was saved and is not blank.
#
#   tests/gui/analyzer_screenshots.sh --analyzer BIN [--synth rdmatel-synth] [--capture FILE] [--out DIR]
#
# Exit 0 when every view was saved, 1 otherwise, 77 when Xvfb is missing or no X server starts.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
analyzer=""
synth=""
capture=""
out="$repo/tests/artifacts/analyzer"
while (($#)); do
  case "$1" in
    --analyzer) analyzer="$2"; shift ;;
    --synth) synth="$2"; shift ;;
    --capture) capture="$2"; shift ;;
    --out) out="$2"; shift ;;
    *) echo "usage: $0 --analyzer BIN [--synth BIN] [--capture FILE] [--out DIR]" >&2; exit 2 ;;
  esac
  shift
done
skip() { echo "SKIP: $*" >&2; exit 77; }
for tool in Xvfb xwininfo; do
  command -v "$tool" >/dev/null || skip "$tool is not installed (scripts/install-deps.sh --test installs it)"
done
[[ -x "$analyzer" ]] || { echo "no rdmatel-analyzer: build first or pass --analyzer" >&2; exit 2; }

work="$(mktemp -d /tmp/rdmatel_analyzer_gui.XXXXXX)"
xvfb_pid=""
app_pid=""
cleanup() {
  [[ -n "$app_pid" ]] && kill "$app_pid" 2>/dev/null || true
  [[ -n "$xvfb_pid" ]] && kill "$xvfb_pid" 2>/dev/null || true
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
mkdir -p "$out"
rm -f "$out"/[0-9][0-9]-*.png

# Two seconds of NVMe-oF and RDMA WRITE flows through two leaves, storage 2 slow (300 µs more per
# data access: the diagnosis has a finding): the trends and the flows
# throughput get a shape. Without the generator, the committed sample.
if [[ -z "$capture" ]]; then
  if [[ -x "$synth" ]]; then
    capture="$work/mixed_2s_slow_storage.pcapng"
    "$synth" --scenario mixed --duration-s 2 --ios 600 --flows 4 --messages 40 --slow-storage 2=300 --seed 7 \
      --out "$capture" >/dev/null
  else
    capture="$repo/samples/mixed.pcapng"
  fi
fi

# An X server of our own on a free display (-noreset: see tests/gui/screenshot.sh).
display=""
for n in $(seq 141 190); do
  [[ -e /tmp/.X11-unix/X$n || -e /tmp/.X$n-lock ]] && continue
  Xvfb ":$n" -screen 0 1600x1000x24 -nolisten tcp -ac -noreset >"$work/xvfb.log" 2>&1 &
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

mkdir -p "$work/run"
chmod 700 "$work/run"
started=$SECONDS
# From the capture's folder, so that the window names the file only (the images go in the README).
out="$(cd "$out" && pwd)"
analyzer="$(cd "$(dirname "$analyzer")" && pwd)/$(basename "$analyzer")"
(cd "$(dirname "$capture")" &&
  exec env DISPLAY="$display" QT_QPA_PLATFORM=xcb XDG_RUNTIME_DIR="$work/run" HOME="$work" LC_ALL=C.UTF-8 \
    "$analyzer" --screenshot-dir "$out" "$(basename "$capture")") >"$work/analyzer.log" 2>&1 &
app_pid=$!
# The window must appear on the X server (not only render off screen).
seen=""
for _ in $(seq 300); do
  if DISPLAY="$display" xwininfo -root -tree 2>/dev/null | grep -q '"rdmatel-analyzer'; then seen=1; break; fi
  kill -0 "$app_pid" 2>/dev/null || break
  sleep 0.1
done
status=0
wait "$app_pid" || status=$?
app_pid=""
cat "$work/analyzer.log"
failures=0
if [[ -z "$seen" ]]; then
  echo "FAIL: the rdmatel-analyzer window never appeared on $display" >&2
  failures=$((failures + 1))
fi
if ((status != 0)); then
  echo "FAIL: rdmatel-analyzer --screenshot-dir exited with $status" >&2
  failures=$((failures + 1))
fi
# Every view, in tab order, then the settings dialog.
for view in overview hosts storage pairs trends flows topology congestion settings; do
  file="$(ls "$out"/[0-9][0-9]-"$view".png 2>/dev/null | head -1 || true)"
  if [[ -z "$file" ]]; then
    echo "FAIL: no screenshot of the $view view" >&2
    failures=$((failures + 1))
    continue
  fi
  # A blank grab is a few hundred bytes of one colour; a drawn view is tens of kilobytes.
  size=$(stat -c %s "$file")
  if ((size < 8000)); then
    echo "FAIL: $file is only $size bytes: the view looks empty" >&2
    failures=$((failures + 1))
  fi
done
echo "analyzer screenshots in $out after $((SECONDS - started)) s"
((failures == 0)) || exit 1
echo "OK: every view of rdmatel-analyzer was drawn and saved"
