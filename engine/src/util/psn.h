// SPDX-License-Identifier: GPL-2.0-or-later
// 24-bit packet sequence number arithmetic (InfiniBand PSNs wrap at 2^24).
#pragma once

#include <cstdint>

namespace rdmatel::psn {

inline constexpr uint32_t kMask = 0xFFFFFF;
inline constexpr int32_t kHalf = 1 << 23;

/// a + n, wrapped.
constexpr uint32_t add(uint32_t a, int64_t n) { return uint32_t((int64_t(a) + n) & kMask); }

/// Signed distance b - a in (-2^23, 2^23]: positive when b is newer than a.
constexpr int32_t distance(uint32_t a, uint32_t b) {
  int32_t d = int32_t((b - a) & kMask);
  return d > kHalf ? d - (1 << 24) : d;
}

/// True when b is strictly newer than a (serial-number comparison).
constexpr bool newer(uint32_t b, uint32_t a) { return distance(a, b) > 0 && distance(a, b) < kHalf; }

/// True when x lies in the wrapped interval [first, last].
constexpr bool in_range(uint32_t x, uint32_t first, uint32_t last) {
  return ((x - first) & kMask) <= ((last - first) & kMask);
}

}  // namespace rdmatel::psn
