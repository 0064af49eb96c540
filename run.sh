#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Installs what is missing, builds rdmatel and analyzes a shipped sample capture.
#   ./run.sh                  the I/O quality report of samples/nvme_2point.pcapng
#   ./run.sh CAPTURE... [OPTIONS]   the same for your captures (options: rdmatel --help)
set -euo pipefail
cd "$(dirname "$0")"
scripts/install-deps.sh
mkdir -p build
if ! { cmake -S . -B build/release -DCMAKE_BUILD_TYPE=Release -DRDMATEL_BUILD_TESTS=OFF &&
       cmake --build build/release --target rdmatel rdmatel_plugin -j"$(nproc)"; } >build/release.log 2>&1; then
  tail -40 build/release.log
  echo "run.sh: the build failed (full log: build/release.log)" >&2
  exit 1
fi
if (($# == 0)); then
  set -- samples/nvme_2point.pcapng
fi
exec build/release/cli/rdmatel analyze "$@"
