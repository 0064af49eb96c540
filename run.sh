#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Installs what is missing, builds rdmatel and analyzes a shipped sample capture.
#   ./run.sh                  the I/O quality report of samples/nvme_2point.pcapng
#   ./run.sh CAPTURE... [OPTIONS]   the same for your captures (options: rdmatel --help)
#   ./run.sh --analyzer [CAPTURE...]  the Qt analyzer (rdmatel-analyzer) on them instead
set -euo pipefail
cd "$(dirname "$0")"
scripts/install-deps.sh
mkdir -p build
targets=(rdmatel rdmatel_plugin)
analyzer=""
if [[ "${1:-}" == "--analyzer" ]]; then
  shift
  analyzer=1
  targets=(rdmatel-analyzer)
fi
# The first build takes a minute or two: say so, rather than sit silent (the log has the details).
if [[ -x build/release/cli/rdmatel ]]; then
  echo "run.sh: bringing the build up to date (build/release.log)" >&2
else
  echo "run.sh: building rdmatel and its Wireshark plugin, about 2 minutes on 2 cores (build/release.log)" >&2
fi
if ! { cmake -S . -B build/release -DCMAKE_BUILD_TYPE=Release -DRDMATEL_BUILD_TESTS=OFF &&
       cmake --build build/release --target "${targets[@]}" -j"$(nproc)"; } >build/release.log 2>&1; then
  tail -40 build/release.log
  echo "run.sh: the build failed (full log: build/release.log)" >&2
  exit 1
fi
if (($# == 0)); then
  set -- samples/nvme_2point.pcapng
fi
if [[ -n "$analyzer" ]]; then
  exec build/release/ui/rdmatel-analyzer "$@"
fi
exec build/release/cli/rdmatel analyze "$@"
