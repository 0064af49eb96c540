// SPDX-License-Identifier: GPL-2.0-or-later
#include "rdmatel/report.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace rdmatel {
namespace {
constexpr int kSubBuckets = 64;  // per power of two: relative error <= 1/64
}

int32_t Distribution::bucket_of(DurationNs v) {
  // Sign-magnitude: bucket 0 holds 0; positive buckets grow with v, negative mirror them.
  uint64_t m = v < 0 ? uint64_t(-(v + 1)) + 1 : uint64_t(v);
  if (m < kSubBuckets) return int32_t(v < 0 ? -int64_t(m) : int64_t(m));
  int e = 63 - __builtin_clzll(m);  // m in [2^e, 2^(e+1))
  int shift = e - 6;
  int32_t b = int32_t(kSubBuckets + (e - 6) * kSubBuckets + int((m >> shift) - kSubBuckets));
  return v < 0 ? -b : b;
}

DurationNs Distribution::bucket_value(int32_t b) {
  bool neg = b < 0;
  int64_t a = neg ? -int64_t(b) : b;
  DurationNs v;
  if (a < kSubBuckets) {
    v = a;
  } else {
    int e = int((a - kSubBuckets) / kSubBuckets) + 6;
    int64_t mant = (a - kSubBuckets) % kSubBuckets + kSubBuckets;
    int shift = e - 6;
    // Midpoint of the bucket [mant << shift, (mant + 1) << shift).
    v = (mant << shift) + ((int64_t(1) << shift) >> 1);
  }
  return neg ? -v : v;
}

void Distribution::add(DurationNs v) {
  if (count_ == 0 || v < min_) min_ = v;
  if (count_ == 0 || v > max_) max_ = v;
  ++count_;
  sum_ += v;
  if (histogram_.empty()) {
    samples_.push_back(v);
    sorted_ = false;
    if (samples_.size() <= kExactLimit) return;
    for (DurationNs s : samples_) ++histogram_[bucket_of(s)];
    samples_.clear();
    samples_.shrink_to_fit();
    return;
  }
  ++histogram_[bucket_of(v)];
}

DurationNs Distribution::percentile(double p) const {
  if (count_ == 0) return 0;
  uint64_t rank = uint64_t(std::ceil(p / 100.0 * double(count_)));
  rank = std::clamp<uint64_t>(rank, 1, count_);
  if (histogram_.empty()) {
    if (!sorted_) {
      std::sort(samples_.begin(), samples_.end());
      sorted_ = true;
    }
    return samples_[rank - 1];
  }
  std::map<int32_t, uint64_t> ordered(histogram_.begin(), histogram_.end());
  uint64_t seen = 0;
  for (auto [b, n] : ordered) {
    seen += n;
    if (seen >= rank) return std::clamp(bucket_value(b), min_, max_);
  }
  return max_;
}

}  // namespace rdmatel
