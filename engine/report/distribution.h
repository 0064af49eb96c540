// SPDX-License-Identifier: GPL-2.0-or-later
// A distribution of durations (ns): count, min, max, mean, percentiles. Exact (every sample
// kept) up to a limit, then a log-linear histogram with ~0.8% relative error, so memory stays
// bounded on captures of any size.
#pragma once

#include <cstdint>
#include <optional>
#include <unordered_map>
#include <vector>

#include "engine/util/time.h"

namespace rdmatel {

class Distribution {
 public:
  static constexpr size_t kExactLimit = 1 << 16;

  void add(DurationNs v);
  uint64_t count() const { return count_; }
  DurationNs min() const { return min_; }
  DurationNs max() const { return max_; }
  /// Mean in ns (double: exact enough for any realistic sum).
  double mean() const { return count_ ? double(sum_) / double(count_) : 0.0; }
  /// Nearest-rank percentile: the smallest sample with at least p% of samples at or below it.
  /// Exact while exact() holds.
  DurationNs percentile(double p) const;
  bool exact() const { return histogram_.empty(); }

 private:
  static int32_t bucket_of(DurationNs v);
  static DurationNs bucket_value(int32_t b);

  uint64_t count_ = 0;
  __int128 sum_ = 0;
  DurationNs min_ = 0, max_ = 0;
  mutable std::vector<DurationNs> samples_;
  mutable bool sorted_ = true;
  std::unordered_map<int32_t, uint64_t> histogram_;
};

}  // namespace rdmatel
