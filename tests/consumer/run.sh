#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Installs the engine from BUILD into a temporary prefix, builds tests/consumer against it and
# checks that it exports exactly what `rdmatel export io` exports.
#   tests/consumer/run.sh BUILD_DIR RDMATEL_CLI CAPTURE
set -euo pipefail
build=$1 cli=$2 capture=$3
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d /tmp/rdmatel_consumer_XXXXXX)
trap 'rm -rf "$work"' EXIT
cmake --install "$build" --component engine --prefix "$work/prefix" >/dev/null
cmake -S "$here" -B "$work/build" -DCMAKE_PREFIX_PATH="$work/prefix" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$work/build" -j"$(nproc)" >/dev/null
"$work/build/consumer" "$capture" > "$work/consumer.jsonl"
"$cli" export io "$capture" --no-progress -q > "$work/cli.jsonl"
if [[ ! -s $work/cli.jsonl ]]; then
  echo "FAIL: the CLI exported nothing: the comparison would prove nothing" >&2
  exit 1
fi
if ! cmp -s "$work/consumer.jsonl" "$work/cli.jsonl"; then
  echo "FAIL: the consumer's export differs from the CLI's:" >&2
  diff "$work/consumer.jsonl" "$work/cli.jsonl" | head -5 >&2
  exit 1
fi
ls "$work/prefix/include/rdmatel" | grep -q session.h
if ls "$work/prefix/include/rdmatel" | grep -v '\.h$'; then
  echo "FAIL: non-header files installed under include/rdmatel" >&2
  exit 1
fi
echo "OK: a consumer built against the installed engine exports the same $(wc -l < "$work/cli.jsonl") I/O records as the CLI"
