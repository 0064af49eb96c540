// SPDX-License-Identifier: GPL-2.0-or-later
#include "rdmatel/report.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace rdmatel {
namespace {
constexpr int kSubBuckets = 64;  // per power of two: relative error <= 1/64
// |bucket_of(v)| is at most that of 2^63 (the magnitude of INT64_MIN), plus the sub-buckets of
// the top power for positive values: an array index is bucket + kBucketBias.
constexpr int32_t kBucketBias = kSubBuckets + (63 - 6) * kSubBuckets;
constexpr size_t kBuckets = size_t(2 * kBucketBias + kSubBuckets);
}  // namespace

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
  __int128 v;  // the top buckets' midpoints lie beyond int64: computed wide, then saturated
  if (a < kSubBuckets) {
    v = a;
  } else {
    int e = int((a - kSubBuckets) / kSubBuckets) + 6;
    int64_t mant = (a - kSubBuckets) % kSubBuckets + kSubBuckets;
    int shift = e - 6;
    // Midpoint of the bucket [mant << shift, (mant + 1) << shift).
    v = (__int128(mant) << shift) + ((__int128(1) << shift) >> 1);
  }
  if (neg) v = -v;
  return DurationNs(std::clamp<__int128>(v, std::numeric_limits<DurationNs>::min(), std::numeric_limits<DurationNs>::max()));
}

void Distribution::count_in_histogram(DurationNs v) { ++histogram_[size_t(bucket_of(v) + kBucketBias)]; }

void Distribution::add(DurationNs v) {
  if (count_ == 0 || v < min_) min_ = v;
  if (count_ == 0 || v > max_) max_ = v;
  ++count_;
  sum_ += v;
  if (histogram_.empty()) {
    constexpr DurationNs kNarrowMin = std::numeric_limits<int32_t>::min(), kNarrowMax = std::numeric_limits<int32_t>::max();
    if (wide_.empty() && v >= kNarrowMin && v <= kNarrowMax) {
      narrow_.push_back(int32_t(v));
    } else {
      if (wide_.empty()) {
        wide_.assign(narrow_.begin(), narrow_.end());
        std::vector<int32_t>().swap(narrow_);
      }
      wide_.push_back(v);
    }
    if (count_ <= kExactLimit) return;
    histogram_.assign(kBuckets, 0);
    for (int32_t s : narrow_) count_in_histogram(s);
    for (DurationNs s : wide_) count_in_histogram(s);
    std::vector<int32_t>().swap(narrow_);
    std::vector<DurationNs>().swap(wide_);
    return;
  }
  count_in_histogram(v);
}

DurationNs Distribution::percentile(double p) const {
  if (count_ == 0) return 0;
  uint64_t rank = uint64_t(std::ceil(p / 100.0 * double(count_)));
  rank = std::clamp<uint64_t>(rank, 1, count_);
  if (histogram_.empty()) {
    // The exact rank-th sample: a selection per percentile asked (a report asks two or three)
    // costs less than sorting every distribution once; it leaves the samples partly ordered,
    // which the next selection profits from.
    auto select = [&](auto& v) {
      auto nth = v.begin() + long(rank - 1);
      std::nth_element(v.begin(), nth, v.end());
      return DurationNs(*nth);
    };
    return wide_.empty() ? select(narrow_) : select(wide_);
  }
  uint64_t seen = 0;
  for (size_t i = 0; i < histogram_.size(); ++i) {
    seen += histogram_[i];
    if (histogram_[i] && seen >= rank) return std::clamp(bucket_value(int32_t(i) - kBucketBias), min_, max_);
  }
  return max_;
}

}  // namespace rdmatel
