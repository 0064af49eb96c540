#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Installs what rdmatel needs on Debian 12 (Wireshark 4.0 development files, tshark, GoogleTest,
# Qt 6, ...). Idempotent: apt runs only when something is missing.
#   scripts/install-deps.sh          build and run
#   scripts/install-deps.sh --test   also what the test suite needs
set -euo pipefail

packages=(cmake g++ make pkg-config libglib2.0-dev wireshark-dev libwireshark-dev libwiretap-dev tshark libpcap-dev libcpp-httplib-dev)
# The analyzer (ui/): Qt 6 Widgets and Charts. Qt6Charts' CMake package needs Qt6OpenGL's, which
# qt6-base-dev only recommends; qt6-qpa-plugins has the xcb and offscreen platforms.
packages+=(qt6-base-dev qt6-charts-dev libqt6opengl6-dev qt6-qpa-plugins)
if [[ "${1:-}" == "--test" ]]; then
  packages+=(python3 libgtest-dev libgmock-dev nlohmann-json3-dev)
  # Live mode and its outputs against real servers (tests labelled "servers").
  packages+=(prometheus clickhouse-server clickhouse-client)
  # The GUI test: the real Wireshark under a virtual X server, driven and photographed.
  packages+=(wireshark-qt xvfb xauth imagemagick xdotool)
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]} == 0)); then
  exit 0
fi

echo "rdmatel: installing ${missing[*]}" >&2
sudo=""
if [[ "$(id -u)" -ne 0 ]]; then
  sudo="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -q
$sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
