#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Sanitizer CI job: builds everything with AddressSanitizer + UndefinedBehaviorSanitizer
# (-DRDMATEL_SANITIZE=ON: any report aborts) in its own build folder and runs the whole CTest
# suite: unit tests, fuzz regressions, integration tests with the real tshark loading the
# sanitized plugin (LD_PRELOAD of the ASan runtime, leaks off: tshark leaks by design) and the
# robustness tests (corruption, hostile captures).
#
#   scripts/ci-sanitize.sh [extra cmake arguments]
# Environment: BUILD_DIR (default build/sanitize), CTEST_ARGS (e.g. "-L unit" or "-LE robustness").
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
scripts/install-deps.sh --test
build=${BUILD_DIR:-build/sanitize}
# The Qt analyzer is left out: Qt under ASan is slow and reports its own leaks; its models run in
# the normal build (./test.sh).
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DRDMATEL_BUILD_TESTS=ON -DRDMATEL_SANITIZE=ON \
  -DRDMATEL_BUILD_ANALYZER=OFF "$@"
cmake --build "$build" -j"$(nproc)"
built=$(date +%s)

asan_lib=$(gcc -print-file-name=libasan.so)
if [[ ! -e $asan_lib ]]; then
  echo "ci-sanitize: gcc's libasan.so not found" >&2
  exit 2
fi
export RDMATEL_TSHARK_PRELOAD=$asan_lib
export RDMATEL_TSHARK_ASAN_OPTIONS="detect_leaks=0"
# Everything else (CLI, unit tests, the sample generator) runs with leak detection on.
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:check_initialization_order=1:strict_init_order=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
# shellcheck disable=SC2086
ctest --test-dir "$build" --output-on-failure -j"$(nproc)" ${CTEST_ARGS:-}
end=$(date +%s)
echo "ci-sanitize: passed (build $((built - start)) s, tests $((end - built)) s, total $((end - start)) s)"
