// SPDX-License-Identifier: GPL-2.0-or-later
// The set of PSNs a message has seen: duplicates, gaps filled later, wrap, bounded memory.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>
#include <utility>
#include <vector>

#include "engine/metrics/messages/message_state.h"
#include "engine/src/util/psn.h"

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


// The sorted list of ranges PsnBitmap keeps, all in one vector, as it was before its newest
// range moved out of it: the reference the bitmap must agree with, call for call.
class ListBitmap {
 public:
  bool mark(uint32_t psn) {
    if (!has_base_) {
      has_base_ = true;
      base_ = psn;
    }
    int32_t off = psn::distance(base_, psn);
    if (off >= kMaxSpan || off <= -kMaxSpan) {
      ++distinct_;
      return false;
    }
    auto it = std::lower_bound(ranges_.begin(), ranges_.end(), off - 1,
                               [](const std::pair<int32_t, int32_t>& r, int32_t v) { return r.second < v; });
    if (it != ranges_.end() && it->first <= off && off <= it->second) return true;
    if (it != ranges_.end() && it->second == off - 1) {
      it->second = off;
      auto next = std::next(it);
      if (next != ranges_.end() && next->first == off + 1) {
        it->second = next->second;
        ranges_.erase(next);
      }
    } else if (it != ranges_.end() && it->first == off + 1) {
      it->first = off;
    } else if (ranges_.size() < kMaxRanges) {
      ranges_.insert(it, {off, off});
    }
    ++distinct_;
    return false;
  }
  void unmark(uint32_t psn) {
    if (!has_base_) return;
    int32_t off = psn::distance(base_, psn);
    auto it = std::lower_bound(ranges_.begin(), ranges_.end(), off,
                               [](const std::pair<int32_t, int32_t>& r, int32_t v) { return r.second < v; });
    if (it == ranges_.end() || it->first > off) return;
    --distinct_;
    if (it->first == off && it->second == off) ranges_.erase(it);
    else if (it->first == off) ++it->first;
    else if (it->second == off) --it->second;
    else {
      std::pair<int32_t, int32_t> upper{off + 1, it->second};
      it->second = off - 1;
      ranges_.insert(std::next(it), upper);
    }
  }
  uint32_t run_end(uint32_t psn) const {
    if (!has_base_) return psn;
    const int32_t off = psn::distance(base_, psn);
    auto it = std::lower_bound(ranges_.begin(), ranges_.end(), off,
                               [](const std::pair<int32_t, int32_t>& r, int32_t v) { return r.second < v; });
    if (it == ranges_.end() || it->first > off) return psn;
    return uint32_t((int64_t(base_) + it->second) & 0xFFFFFF);
  }
  uint32_t distinct() const { return distinct_; }
  std::vector<uint32_t> psns() const {
    std::vector<uint32_t> out;
    for (const auto& [lo, hi] : ranges_)
      for (int64_t o = lo; o <= hi; ++o) out.push_back(uint32_t((int64_t(base_) + o) & 0xFFFFFF));
    return out;
  }

 private:
  static constexpr int32_t kMaxSpan = 1 << 22;
  static constexpr size_t kMaxRanges = 256;
  bool has_base_ = false;
  uint32_t base_ = 0;
  std::vector<std::pair<int32_t, int32_t>> ranges_;
  uint32_t distinct_ = 0;
};

TEST(PsnBitmap, AgreesWithOneSortedList) {
  std::mt19937 rng(11);
  PsnBitmap b;
  for (int round = 0; round < 300; ++round) {
    ListBitmap model;
    b.clear();  // recycled, as messages are
    // Messages of every shape: in order, reordered, lossy, across the wrap, with far PSNs and
    // more gaps than are tracked.
    const uint32_t start = uint32_t(rng() % (1u << 24));
    const uint32_t span = 1 + rng() % (round % 3 == 0 ? 8 : 700);
    for (int step = 0; step < 1500; ++step) {
      const uint32_t r = rng() % 100;
      uint32_t psn = psn::add(start, int64_t(rng() % span) - (round % 5 == 0 ? 3 : 0));
      if (r < 40) psn = psn::add(start, step);  // the next in order
      if (r == 99) psn = psn::add(start, int64_t(1) << 23);  // too far to track
      if (r < 85) {
        ASSERT_EQ(b.mark(psn), model.mark(psn)) << round << " " << step;
      } else if (r < 92) {
        b.unmark(psn);
        model.unmark(psn);
      } else {
        ASSERT_EQ(b.run_end(psn), model.run_end(psn)) << round << " " << step;
      }
      ASSERT_EQ(b.distinct(), model.distinct()) << round << " " << step;
    }
    std::vector<uint32_t> seen;
    b.for_each([&](uint32_t p) { seen.push_back(p); });
    ASSERT_EQ(seen, model.psns()) << round;
  }
}

}  // namespace
}  // namespace rdmatel::messages
