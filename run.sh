#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Installs what is missing, builds rdmatel and analyzes a shipped sample capture.
#   ./run.sh                  the I/O quality report of samples/nvme_2point.pcapng
#   ./run.sh CAPTURE... [OPTIONS]   the same for your captures (options: rdmatel --help)
set -euo pipefail
cd "$(dirname "$0")"
scripts/install-deps.sh
cmake -S . -B build/release -DCMAKE_BUILD_TYPE=Release -DRDMATEL_BUILD_TESTS=OFF >/dev/null
cmake --build build/release --target rdmatel -j"$(nproc)" >/dev/null
if (($# == 0)); then
  set -- samples/nvme_2point.pcapng
fi
exec build/release/cli/rdmatel analyze "$@"
