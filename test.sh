#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Installs what is missing, builds everything (engine, CLI, Wireshark plugin, generator, tests)
# and runs every test: unit tests, and integration tests with the real tshark and the plugin.
set -euo pipefail
cd "$(dirname "$0")"
scripts/install-deps.sh --test
cmake -S . -B build/test -DCMAKE_BUILD_TYPE=RelWithDebInfo -DRDMATEL_BUILD_TESTS=ON "$@"
cmake --build build/test -j"$(nproc)"
ctest --test-dir build/test --output-on-failure -j"$(nproc)"
