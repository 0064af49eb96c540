// SPDX-License-Identifier: GPL-2.0-or-later
// Time inside the engine is integer nanoseconds since the Unix epoch; µs only at the edges.
#pragma once

#include <cstdint>
#include <limits>

namespace rdmatel {

using TimeNs = int64_t;
using DurationNs = int64_t;

inline constexpr DurationNs kNsPerUs = 1000;
inline constexpr DurationNs kNsPerMs = 1000 * 1000;
inline constexpr DurationNs kNsPerSec = 1000 * 1000 * 1000;

/// seconds + nanoseconds as ns since the epoch, saturated to the int64 range (corrupt or odd
/// records carry any number of seconds).
inline TimeNs saturating_ns(int64_t secs, int64_t nsecs) {
  constexpr int64_t kMaxSecs = std::numeric_limits<int64_t>::max() / kNsPerSec - 1;
  if (secs > kMaxSecs) return std::numeric_limits<int64_t>::max();
  if (secs < -kMaxSecs) return std::numeric_limits<int64_t>::min();
  return secs * kNsPerSec + nsecs;
}

/// Nanoseconds to microseconds as reported to users (double, exact to the ns for < 2^53 ns).
inline double ns_to_us(DurationNs ns) { return double(ns) / 1000.0; }

}  // namespace rdmatel
