// SPDX-License-Identifier: GPL-2.0-or-later
// A fast non-cryptographic hash of a byte string (duplicate detection, hash tables).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "rdmatel/types.h"

namespace rdmatel {

inline uint64_t hash_bytes(const uint8_t* p, size_t n) {
  uint64_t h = 0x9E3779B97F4A7C15ULL ^ (n * 0xC2B2AE3D27D4EB4FULL);
  while (n >= 8) {
    uint64_t w;
    std::memcpy(&w, p, 8);
    h = hash_mix(h ^ w) + 0x165667B19E3779F9ULL;
    p += 8;
    n -= 8;
  }
  uint64_t tail = 0;
  std::memcpy(&tail, p, n);
  return hash_mix(h ^ tail ^ (uint64_t(n) << 56));
}

}  // namespace rdmatel
