// SPDX-License-Identifier: GPL-2.0-or-later
// The set of PSNs a message has seen: duplicates, gaps filled later, wrap, bounded memory.
#include <gtest/gtest.h>

#include <set>

#include "engine/metrics/messages/message_state.h"

namespace rdmatel::messages {
namespace {

TEST(PsnBitmap, DuplicatesAndGapsAcrossTheWrap) {
  PsnBitmap b;
  EXPECT_FALSE(b.mark(0xFFFFFE));
  EXPECT_FALSE(b.mark(0xFFFFFF));
  EXPECT_FALSE(b.mark(2));  // 0 and 1 lost
  EXPECT_TRUE(b.mark(0xFFFFFF));
  EXPECT_EQ(b.distinct(), 3u);
  EXPECT_FALSE(b.mark(0));  // resent
  EXPECT_FALSE(b.mark(1));
  EXPECT_TRUE(b.mark(2));
  EXPECT_EQ(b.distinct(), 5u);
  std::set<uint32_t> seen;
  b.for_each([&](uint32_t p) { seen.insert(p); });
  EXPECT_EQ(seen, (std::set<uint32_t>{0xFFFFFE, 0xFFFFFF, 0, 1, 2}));
}

TEST(PsnBitmap, OlderThanTheFirstSeen) {
  PsnBitmap b;
  b.mark(100);
  b.mark(101);
  EXPECT_FALSE(b.mark(98));  // the FIRST, resent after its MIDDLEs
  EXPECT_FALSE(b.mark(99));
  EXPECT_TRUE(b.mark(98));
  EXPECT_EQ(b.distinct(), 4u);
}

TEST(PsnBitmap, FarApartPsnsCostNothing) {
  PsnBitmap b;
  for (uint32_t i = 0; i < 100000; ++i) EXPECT_FALSE(b.mark(i * 2 % (1u << 21)));
  EXPECT_EQ(b.distinct(), 100000u);  // counted even past the tracked ranges
}

}  // namespace
}  // namespace rdmatel::messages
