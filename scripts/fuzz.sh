#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Builds the libFuzzer targets (clang, ASan + UBSan) and runs each for SECONDS_PER_TARGET
# seconds, then prints the executions per target and in total.
#
#   scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]      (default 60 s, every target)
#
# Targets: frame_decoder nvme_capsule capture_reader engine (tests/fuzz/fuzz_entries.h).
# Seeds come from tests/fuzz/make_corpus.py (samples/*.pcapng and the real captures); the
# corpus grows in $CORPUS_DIR (default build/fuzz-corpus) from run to run. Crashes are written
# to $ARTIFACT_DIR/<target>/ (default build/fuzz-artifacts); the script then exits 1. Turn a
# crash into a regression test by copying it to tests/fuzz/regressions/<target>/ (the normal
# build's fuzz_replay_test replays every file there).
# Environment: BUILD_DIR (build/fuzz), CORPUS_DIR, ARTIFACT_DIR, PARALLEL (targets at once,
# default: number of cores), FUZZ_ARGS (extra libFuzzer flags).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
seconds=${1:-60}
shift || true
targets=("$@")
((${#targets[@]})) || targets=(frame_decoder nvme_capsule capture_reader engine)
build=${BUILD_DIR:-$root/build/fuzz}
corpus=${CORPUS_DIR:-$root/build/fuzz-corpus}
artifacts=${ARTIFACT_DIR:-$root/build/fuzz-artifacts}
parallel=${PARALLEL:-$(nproc)}

if ! command -v clang++ >/dev/null || ! ls /usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a >/dev/null 2>&1; then
  echo "fuzz.sh: installing clang and its libFuzzer runtime" >&2
  sudo=""; [[ $(id -u) -ne 0 ]] && sudo=sudo
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends clang libclang-rt-14-dev
fi

if [[ ! -f $build/CMakeCache.txt ]]; then
  CC=clang CXX=clang++ cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DRDMATEL_FUZZ=ON \
    -DRDMATEL_BUILD_PLUGIN=OFF -DRDMATEL_BUILD_CLI=OFF -DRDMATEL_BUILD_TESTS=OFF >/dev/null
fi
cmake --build "$build" -j"$(nproc)" --target rdmatel_fuzz_all >/dev/null

python3 "$root/tests/fuzz/make_corpus.py" --out "$corpus" >/dev/null

logs=$(mktemp -d /tmp/rdmatel_fuzz_XXXXXX)
run_one() {
  local t=$1
  mkdir -p "$corpus/$t" "$artifacts/$t"
  local seeds=()
  [[ -d $root/tests/fuzz/regressions/$t ]] && seeds+=("$root/tests/fuzz/regressions/$t")
  # -timeout: one input taking longer than 10 s is a hang; -rss_limit_mb: memory is bounded.
  "$build/tests/fuzz/fuzz_$t" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$artifacts/$t/" ${FUZZ_ARGS:-} \
    "$corpus/$t" "${seeds[@]}" >"$logs/$t.log" 2>&1 || echo "exit $?" >>"$logs/$t.status"
}
export -f run_one
export build corpus artifacts seconds logs root
printf '%s\n' "${targets[@]}" | xargs -P "$parallel" -I{} bash -c 'run_one {}'

total=0
failed=0
printf '%-16s %14s %10s %8s %s\n' target executions exec/s corpus findings
for t in "${targets[@]}"; do
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$logs/$t.log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$logs/$t.log" | tail -1)
  execs=${execs:-0}
  total=$((total + execs))
  size=$(find "$corpus/$t" -type f | wc -l)
  finding=$(grep -m1 -E "^SUMMARY|runtime error|fuzz invariant|ERROR: libFuzzer" "$logs/$t.log" || true)
  if [[ -n $finding || -f $logs/$t.status ]]; then
    failed=1
    finding="${finding:-$(cat "$logs/$t.status")} (log: $logs/$t.log, artifacts: $artifacts/$t/)"
  fi
  printf '%-16s %14s %10s %8s %s\n' "$t" "$execs" "${rate:-0}" "$size" "${finding:-none}"
done
printf '%-16s %14s\n' total "$total"
if ((failed)); then
  echo "fuzz.sh: findings above; logs kept in $logs" >&2
  exit 1
fi
rm -rf "$logs"
