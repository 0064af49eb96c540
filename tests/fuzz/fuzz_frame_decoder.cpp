// SPDX-License-Identifier: GPL-2.0-or-later
// libFuzzer target: The frame decoder, every link type.
#include "tests/fuzz/fuzz_entries.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return rdmatel::fuzz::fuzz_frame_decoder(data, size);
}
