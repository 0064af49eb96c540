// SPDX-License-Identifier: GPL-2.0-or-later
// Key flows and port polling (SPEC §7): the round-robin schedule of the seed's example (10
// points, 4 per period: 1-4, then 5-8, then 9, 10, 1, 2, ...), prefixes and key-flow rules.
#include <gtest/gtest.h>

#include <set>

#include "rdmatel/sampling.h"

namespace rdmatel {
namespace {

std::set<size_t> polled(int64_t k, size_t n, size_t points) {
  std::set<size_t> out;
  for (size_t p = 0; p < points; ++p)
    if (polled_in(p, k, n, points)) out.insert(p + 1);  // the SPEC counts points from 1
  return out;
}

TEST(Polling, TenPortsFourAtATime) {
  EXPECT_EQ(polled(0, 4, 10), (std::set<size_t>{1, 2, 3, 4}));
  EXPECT_EQ(polled(1, 4, 10), (std::set<size_t>{5, 6, 7, 8}));
  EXPECT_EQ(polled(2, 4, 10), (std::set<size_t>{9, 10, 1, 2}));
  EXPECT_EQ(polled(3, 4, 10), (std::set<size_t>{3, 4, 5, 6}));
  EXPECT_EQ(polled(4, 4, 10), (std::set<size_t>{7, 8, 9, 10}));
  EXPECT_EQ(polled(5, 4, 10), (std::set<size_t>{1, 2, 3, 4}));  // 5 periods cover 20 = 2 x 10 slots
}

TEST(Polling, EveryPointEquallyOften) {
  // Over P periods each point is polled exactly N times.
  for (size_t points : {1u, 3u, 7u, 10u})
    for (size_t n = 1; n <= points; ++n) {
      std::vector<int> times(points, 0);
      for (int64_t k = 0; k < int64_t(points); ++k)
        for (size_t p = 0; p < points; ++p) times[p] += polled_in(p, k, n, points);
      for (size_t p = 0; p < points; ++p) EXPECT_EQ(times[p], int(n)) << points << " points, " << n << " per period";
    }
}

TEST(Polling, NegativeAndHugePeriods) {
  EXPECT_EQ(polled(-1, 4, 10), polled(4, 4, 10));  // the sequence continues before period 0
  EXPECT_EQ(polled(1'795'960'800, 4, 10).size(), 4u);
  EXPECT_TRUE(polled_in(3, 7, 5, 5));  // N >= points: all of them
  EXPECT_FALSE(polled_in(0, 0, 0, 5));
}

TEST(KeyFlows, PrefixesAndDirections) {
  std::string error;
  auto r = KeyFlowRule::parse("10.1.0.0/16>10.2.0.1", error);
  ASSERT_TRUE(r) << error;
  IpAddress h, s, other;
  ASSERT_TRUE(IpAddress::parse("10.1.7.9", h));
  ASSERT_TRUE(IpAddress::parse("10.2.0.1", s));
  ASSERT_TRUE(IpAddress::parse("10.2.0.2", other));
  EXPECT_TRUE(r->matches(h, s));
  EXPECT_TRUE(r->matches(s, h));  // both directions of the queue pair
  EXPECT_FALSE(r->matches(h, other));
  auto any = KeyFlowRule::parse("fd00::/8", error);
  ASSERT_TRUE(any) << error;
  IpAddress v6;
  ASSERT_TRUE(IpAddress::parse("fd00::2:1", v6));
  EXPECT_TRUE(any->matches(v6, s));
  EXPECT_FALSE(any->matches(h, s));  // an IPv4 pair is not in an IPv6 prefix
  EXPECT_FALSE(KeyFlowRule::parse("10.1.0.0/33", error));
  EXPECT_FALSE(KeyFlowRule::parse("host>10.2.0.1", error));
}

}  // namespace
}  // namespace rdmatel
