// SPDX-License-Identifier: GPL-2.0-or-later
// libFuzzer target: The whole engine on a stream of frames (input format in fuzz_entries.h).
#include "tests/fuzz/fuzz_entries.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return rdmatel::fuzz::fuzz_engine(data, size);
}
