// SPDX-License-Identifier: GPL-2.0-or-later
// 24-bit PSN serial arithmetic, worked by hand at the wrap.
#include <gtest/gtest.h>

#include "engine/src/util/psn.h"

namespace rdmatel {
namespace {

TEST(Psn, AddWraps) {
  EXPECT_EQ(psn::add(0xFFFFFE, 3), 1u);
  EXPECT_EQ(psn::add(0, -1), 0xFFFFFFu);
}

TEST(Psn, DistanceAcrossWrap) {
  EXPECT_EQ(psn::distance(0xFFFFFF, 0), 1);
  EXPECT_EQ(psn::distance(0, 0xFFFFFF), -1);
  EXPECT_EQ(psn::distance(5, 5), 0);
  EXPECT_EQ(psn::distance(0xFFFFF0, 0x10), 0x20);
}

TEST(Psn, NewerIsSerialComparison) {
  EXPECT_TRUE(psn::newer(0, 0xFFFFFF));
  EXPECT_FALSE(psn::newer(0xFFFFFF, 0));
  EXPECT_FALSE(psn::newer(7, 7));
  EXPECT_TRUE(psn::newer(0x7FFFFF, 0));   // 2^23 - 1 ahead
  EXPECT_FALSE(psn::newer(0x800000, 0));  // exactly half way is not newer
}

TEST(Psn, InRangeAcrossWrap) {
  EXPECT_TRUE(psn::in_range(0xFFFFFF, 0xFFFFFE, 2));
  EXPECT_TRUE(psn::in_range(1, 0xFFFFFE, 2));
  EXPECT_FALSE(psn::in_range(3, 0xFFFFFE, 2));
  EXPECT_FALSE(psn::in_range(0xFFFFFD, 0xFFFFFE, 2));
}

}  // namespace
}  // namespace rdmatel
