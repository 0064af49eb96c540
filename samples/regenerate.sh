#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Rebuilds the committed sample captures and their ground truth with rdmatel-synth, with
# the exact seeds and options below, then checks them with synth/check_truth.py.
#   samples/regenerate.sh [PATH/TO/rdmatel-synth]
# Without an argument the generator is built on its own in build/synth-standalone.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
synth="${1:-}"
if [[ -z "$synth" ]]; then
  build="$here/../build/synth-standalone"
  cmake -S "$here/synth" -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build "$build" -j"$(nproc)" >/dev/null
  synth="$build/rdmatel-synth"
fi
synth="$(cd "$(dirname "$synth")" && pwd)/$(basename "$synth")"
cd "$here"  # relative --out: the truth records the command line, keep it path-independent

"$synth" --scenario nvme-2point    --seed 11 --ios 100 --incomplete 0.02 --snaplen 384 --out nvme_2point.pcapng
"$synth" --scenario nvme-1point    --seed 11 --ios 100 --incomplete 0.02 --snaplen 384 --out nvme_1point.pcapng
"$synth" --scenario nvme-3point    --seed 11 --ios 70  --incomplete 0.03 --snaplen 384 --out nvme_3point.pcapng
"$synth" --scenario nvme-midstream --seed 12 --ios 120 --incomplete 0.02 --snaplen 384 --out nvme_midstream.pcapng
"$synth" --scenario write-flows    --seed 13 --snaplen 128 --out write_flows.pcapng
"$synth" --scenario mixed          --seed 14 --ios 50 --flows 4 --messages 10 --snaplen 320 --out mixed.pcapng

if command -v tshark >/dev/null; then
  python3 "$here/synth/check_truth.py" nvme_2point.pcapng nvme_1point.pcapng nvme_3point.pcapng \
    nvme_midstream.pcapng write_flows.pcapng mixed.pcapng
fi
