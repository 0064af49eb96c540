// SPDX-License-Identifier: GPL-2.0-or-later
// Spike alerts on hand-made series: the baseline is the median of the calm periods before, a
// spike needs the factor, the excess and (when the baseline varies) the robust deviations; a
// period is judged once a record `lag` periods later comes, and state does not grow with time.
#include <gtest/gtest.h>

#include "engine/metrics/alerts/spike_detector.h"

namespace rdmatel::alerts {
namespace {

// Three samples of `v` in `period` (min_samples is 3).
void period_of(SpikeDetector& d, int64_t period, double v, std::vector<Spike>& out) {
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(d.add("host a", period, v, out));
}

TEST(SpikeDetector, SpikeAgainstCalmBaseline) {
  SpikeDetector d(SpikeRule{}, 2);
  std::vector<Spike> out;
  for (int64_t p = 0; p < 5; ++p) period_of(d, p, 100, out);
  period_of(d, 5, 400, out);  // 400 >= 3 x 100 and 300 >= 50 above; the baseline does not vary
  period_of(d, 6, 100, out);
  period_of(d, 7, 100, out);
  period_of(d, 8, 100, out);  // closes period 5 (8 - 2 > 5)
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].period, 5);
  EXPECT_EQ(out[0].value, 400);
  EXPECT_EQ(out[0].baseline, 100);
  d.finish(out);
  EXPECT_EQ(out.size(), 1u);
}

TEST(SpikeDetector, NeedsFactorExcessAndHistory) {
  SpikeDetector d(SpikeRule{}, 2);
  std::vector<Spike> out;
  period_of(d, 0, 10, out);
  period_of(d, 1, 10, out);
  period_of(d, 2, 100, out);  // only 2 periods of history: not judged against them
  for (int64_t p = 3; p < 6; ++p) period_of(d, p, 10, out);
  period_of(d, 6, 40, out);  // 4 x the median 10, but 30 < 50 above it
  d.finish(out);
  EXPECT_TRUE(out.empty());
}

TEST(SpikeDetector, LateRecordsAreLeftOutAndStateStaysSmall) {
  SpikeDetector d(SpikeRule{}, 2);
  std::vector<Spike> out;
  for (int64_t p = 0; p < 1000; ++p) period_of(d, p, 100, out);
  EXPECT_FALSE(d.add("host a", 10, 5000, out));  // period 10 was judged long ago
  EXPECT_TRUE(d.add("host a", 998, 100, out));    // within the lag: still open
  EXPECT_TRUE(out.empty());
}

}  // namespace
}  // namespace rdmatel::alerts
