// SPDX-License-Identifier: GPL-2.0-or-later
// The diagnosis's peer rule (docs/metrics.md, "Diagnosis") on hand-worked numbers: a value stands
// out only when its excess over the peer median is big in absolute terms, a material share of the
// scope's IOL1, at least a factor over the median and, with enough peers, far outside their spread.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "engine/metrics/diagnosis/peer_comparison.h"

namespace rdmatel::diagnosis {
namespace {

constexpr double kUs = 1000;

TEST(PeerComparison, Median) {
  EXPECT_EQ(median({}), 0);
  EXPECT_EQ(median({7}), 7);
  EXPECT_EQ(median({9, 1, 5}), 5);
  EXPECT_EQ(median({4, 1, 3, 2}), 2.5);  // (2 + 3) / 2
}

TEST(PeerComparison, MedianWithoutOneIsTheMedianOfTheOthers) {
  // By hand: {1, 2, 2, 5, 8} without 2 -> {1, 2, 5, 8}: 3.5; without 8 -> {1, 2, 2, 5}: 2;
  // without 1 -> {2, 2, 5, 8}: 3.5; out of range: all five, 2.
  const std::vector<double> sorted{1, 2, 2, 5, 8};
  EXPECT_EQ(median_without(sorted, 1), 3.5);
  EXPECT_EQ(median_without(sorted, 4), 2);
  EXPECT_EQ(median_without(sorted, 0), 3.5);
  EXPECT_EQ(median_without(sorted, 5), 2);
  EXPECT_EQ(median_without({7}, 0), 0);  // no one left
  // Against the list built without it, for every element of lists of 1 to 40 values.
  for (size_t n = 1; n <= 40; ++n) {
    std::vector<double> v;
    for (size_t i = 0; i < n; ++i) v.push_back(double((i * 37) % 11) + 0.25 * double(i % 3));
    std::sort(v.begin(), v.end());
    for (size_t skip = 0; skip < n; ++skip) {
      std::vector<double> others = v;
      others.erase(others.begin() + long(skip));
      EXPECT_EQ(median_without(v, skip), median(others)) << n << " " << skip;
    }
  }
}

TEST(PeerComparison, NoPeersNoVerdict) {
  Comparison c = compare_to_peers(900 * kUs, 1000 * kUs, {}, PeerRule{});
  EXPECT_FALSE(c.stands_out);
  EXPECT_EQ(c.peers, 0u);
}

TEST(PeerComparison, SlowStorageAgainstTwoPeers) {
  // Peers 100 and 110 µs: median 105; 500 - 105 = 395 µs excess >= 50 µs, >= 25 % of 600 µs
  // (150 µs), 500 >= 2 x 105; two peers are too few for the spread test.
  Comparison c = compare_to_peers(500 * kUs, 600 * kUs, {100 * kUs, 110 * kUs}, PeerRule{});
  EXPECT_TRUE(c.stands_out);
  EXPECT_EQ(c.peer_median, 105 * kUs);
  EXPECT_EQ(c.excess, 395 * kUs);
}

TEST(PeerComparison, EachTestCanSayNo) {
  const PeerRule rule;
  // Excess 40 µs < 50 µs, though three times the median.
  EXPECT_FALSE(compare_to_peers(60 * kUs, 100 * kUs, {20 * kUs}, rule).stands_out);
  // Excess 100 µs, but below 25 % of an IOL1 of 1000 µs (250 µs).
  EXPECT_FALSE(compare_to_peers(200 * kUs, 1000 * kUs, {100 * kUs}, rule).stands_out);
  // Excess 80 µs, material (IOL1 200 µs), but 180 < 2 x 100.
  EXPECT_FALSE(compare_to_peers(180 * kUs, 200 * kUs, {100 * kUs}, rule).stands_out);
  // All three pass: 210 >= 200, excess 110 >= 50 and >= 0.25 x 210.
  EXPECT_TRUE(compare_to_peers(210 * kUs, 210 * kUs, {100 * kUs}, rule).stands_out);
}

TEST(PeerComparison, SpreadOfManyPeers) {
  const PeerRule rule;
  // Peers 50, 100, 150, 200, 250: median 150, deviations 100, 50, 0, 50, 100 -> MAD 50;
  // 1.4826 x 50 = 74.13. Value 400: excess 250, z = 3.37 < 3.5: widely spread peers, no verdict.
  const std::vector<double> spread = {50 * kUs, 100 * kUs, 150 * kUs, 200 * kUs, 250 * kUs};
  EXPECT_FALSE(compare_to_peers(400 * kUs, 400 * kUs, spread, rule).stands_out);
  // Value 420: excess 270, z = 3.64 >= 3.5.
  EXPECT_TRUE(compare_to_peers(420 * kUs, 420 * kUs, spread, rule).stands_out);
  // Identical peers (MAD 0): the factor and excess decide.
  EXPECT_TRUE(compare_to_peers(300 * kUs, 300 * kUs, {100 * kUs, 100 * kUs, 100 * kUs, 100 * kUs}, rule).stands_out);
}

TEST(PeerComparison, FasterThanPeersNeverStandsOut) {
  Comparison c = compare_to_peers(10 * kUs, 100 * kUs, {300 * kUs, 310 * kUs}, PeerRule{});
  EXPECT_FALSE(c.stands_out);
  EXPECT_LT(c.excess, 0);
}

}  // namespace
}  // namespace rdmatel::diagnosis
