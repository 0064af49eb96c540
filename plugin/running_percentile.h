// SPDX-License-Identifier: GPL-2.0-or-later
// A percentile that is exact after every sample: Wireshark 4.0's statistics tables have no
// "draw" hook, so a row's cells must be right after each packet, and recomputing a percentile
// from all samples each time would cost O(n) per packet. Two heaps split the samples at the
// nearest rank ceil(p/100 * n), the engine's (Distribution::percentile) definition: the lower
// heap holds exactly that many, its top is the percentile. O(log n) per sample.
//
// Beyond kExactSamples the engine's Distribution itself switches to a fixed histogram (≤ 0.8 %
// error): then the heaps are freed (memory stays bounded) and value() reads the Distribution,
// refreshed every kRefreshEvery samples (a histogram query scans its buckets).
#pragma once

#include <cmath>
#include <cstdint>
#include <functional>
#include <queue>
#include <vector>

#include "rdmatel/report.h"

namespace rdmatel::plugin {

class RunningPercentile {
 public:
  static constexpr uint64_t kExactSamples = 65536;  // as Distribution's exact range
  static constexpr uint64_t kRefreshEvery = 1024;

  explicit RunningPercentile(double p = 50) : p_(p) {}

  /// Adds a sample; `all` is the Distribution that holds every sample of the same metric.
  void add(DurationNs v, const Distribution& all) {
    ++n_;
    if (n_ > kExactSamples) {
      if (!low_.empty() || !high_.empty()) {
        low_ = {};
        high_ = {};
      }
      if (n_ % kRefreshEvery == 1 || !estimate_) estimate_ = all.percentile(p_);
      return;
    }
    if (!low_.empty() && v > low_.top()) high_.push(v);
    else low_.push(v);
    const uint64_t rank = this->rank();
    while (low_.size() > rank) {
      high_.push(low_.top());
      low_.pop();
    }
    while (low_.size() < rank && !high_.empty()) {
      low_.push(high_.top());
      high_.pop();
    }
  }
  uint64_t count() const { return n_; }
  /// The percentile in ns (0 without samples).
  DurationNs value() const {
    if (n_ == 0) return 0;
    if (n_ > kExactSamples) return estimate_;
    return low_.top();
  }

 private:
  uint64_t rank() const {
    uint64_t r = uint64_t(std::ceil(p_ / 100.0 * double(n_)));
    return r < 1 ? 1 : r > n_ ? n_ : r;
  }
  double p_;
  uint64_t n_ = 0;
  DurationNs estimate_ = 0;
  std::priority_queue<DurationNs> low_;                                                  ///< max-heap: the rank smallest
  std::priority_queue<DurationNs, std::vector<DurationNs>, std::greater<DurationNs>> high_;  ///< min-heap: the rest
};

}  // namespace rdmatel::plugin
