// SPDX-License-Identifier: GPL-2.0-or-later
// The plugin's running percentiles (the -z I/O tables' p50 and p99) after every sample against
// the nearest rank of the samples sorted here, and beyond the exact range against the engine's
// histogram estimate it then shows.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "plugin/running_percentile.h"

namespace rdmatel::plugin {
namespace {

DurationNs nearest_rank(std::vector<DurationNs> v, double p) {
  std::sort(v.begin(), v.end());
  size_t rank = size_t(std::ceil(p / 100.0 * double(v.size())));
  rank = std::clamp<size_t>(rank, 1, v.size());
  return v[rank - 1];
}

TEST(RunningPercentile, NearestRankAfterEverySample) {
  std::mt19937_64 rng(7);
  for (double p : {50.0, 99.0, 1.0, 100.0}) {
    RunningPercentile rp(p);
    Distribution all;
    std::vector<DurationNs> seen;
    for (int i = 0; i < 3000; ++i) {
      // Duplicates, a heavy tail and values arriving in no order.
      const DurationNs v = i % 7 == 0 ? 5000 : DurationNs(rng() % 1000) * (i % 13 == 0 ? 1000 : 1);
      seen.push_back(v);
      all.add(v);
      rp.add(v, all);
      ASSERT_EQ(rp.value(), nearest_rank(seen, p)) << "p" << p << " after " << seen.size();
    }
    EXPECT_EQ(rp.value(), all.percentile(p));
  }
}

TEST(RunningPercentile, NoSampleIsZeroAndOneSampleIsIt) {
  RunningPercentile rp(99);
  Distribution all;
  EXPECT_EQ(rp.value(), 0);
  all.add(42);
  rp.add(42, all);
  EXPECT_EQ(rp.value(), 42);
}

// Beyond 65,536 samples the engine's Distribution is a histogram: the running value is its
// estimate, refreshed every 1,024 samples (and the heaps are gone).
TEST(RunningPercentile, BeyondTheExactRangeFollowsTheHistogram) {
  RunningPercentile rp(99);
  Distribution all;
  const uint64_t n = RunningPercentile::kExactSamples + 3 * RunningPercentile::kRefreshEvery + 1;
  for (uint64_t i = 0; i < n; ++i) {
    const DurationNs v = DurationNs((i * 7919) % 100000);
    all.add(v);
    rp.add(v, all);
  }
  EXPECT_EQ(rp.count(), n);
  EXPECT_EQ(rp.value(), all.percentile(99));  // n - 1 is a multiple of kRefreshEvery past the range
}

}  // namespace
}  // namespace rdmatel::plugin
