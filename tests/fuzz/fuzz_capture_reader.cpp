// SPDX-License-Identifier: GPL-2.0-or-later
// libFuzzer target: The fast pcap/pcapng reader on whole files, then the engine.
#include "tests/fuzz/fuzz_entries.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return rdmatel::fuzz::fuzz_capture_reader(data, size);
}
