// SPDX-License-Identifier: GPL-2.0-or-later
// The queue `paths` keeps its waiting packets in (engine/metrics/paths/seq_ring.h): elements are
// found by creation number across growth and wrap-around, and agree with a std::deque over a
// long run of pushes and pops; and the filter in front of its late-copy watch
// (engine/metrics/paths/tag_filter.h) never says absent for a tag it holds.
#include <gtest/gtest.h>

#include <cstdint>
#include <deque>
#include <random>
#include <set>
#include <vector>

#include "engine/metrics/paths/seq_ring.h"
#include "engine/metrics/paths/tag_filter.h"

namespace rdmatel::paths {
namespace {

TEST(SeqRing, FindsElementsByCreationNumberAcrossGrowth) {
  SeqRing<uint64_t> ring;
  for (uint64_t i = 0; i < 5000; ++i) ring.push_back() = i * 7;  // grows from 1024 slots
  EXPECT_EQ(ring.size(), 5000u);
  EXPECT_EQ(ring.front_seq(), 0u);
  EXPECT_EQ(ring.end_seq(), 5000u);
  for (uint32_t s = 0; s < 5000; ++s) EXPECT_EQ(ring[s], uint64_t(s) * 7);
  for (int i = 0; i < 3000; ++i) ring.pop_front();
  EXPECT_EQ(ring.front_seq(), 3000u);
  EXPECT_EQ(ring.front(), 3000u * 7);
  for (uint64_t i = 5000; i < 9000; ++i) ring.push_back() = i * 7;  // wraps, then grows again
  for (uint32_t s = 3000; s < 9000; ++s) ASSERT_EQ(ring[s], uint64_t(s) * 7);
}

TEST(SeqRing, CreationNumbersWrapModulo2To32) {
  SeqRing<uint32_t> ring;
  // Creation numbers go on from where they were (as after finish() clears the queue).
  for (uint32_t i = 0; i < 100; ++i) ring.push_back() = i;
  for (int i = 0; i < 100; ++i) ring.pop_front();
  ring.clear();
  EXPECT_TRUE(ring.empty());
  EXPECT_EQ(ring.front_seq(), 100u);
  EXPECT_EQ(ring.push_back() = 42, 42u);
  EXPECT_EQ(ring[100], 42u);
}

TEST(SeqRing, AgreesWithADequeOverManyPushesAndPops) {
  SeqRing<std::vector<int>> ring;  // elements with storage of their own, reused by later pushes
  std::deque<std::vector<int>> model;
  uint32_t front = 0;
  std::mt19937_64 rng(7);
  for (int step = 0; step < 200000; ++step) {
    if (rng() % 5 < 3) {
      std::vector<int>& v = ring.push_back();
      v.assign(1 + rng() % 3, step);  // the caller sets what it reads
      model.push_back(v);
    } else if (!model.empty()) {
      ASSERT_EQ(ring.front(), model.front());
      ring.pop_front();
      model.pop_front();
      ++front;
    }
    ASSERT_EQ(ring.size(), model.size());
    ASSERT_EQ(ring.front_seq(), front);
    if (!model.empty()) {
      const size_t i = rng() % model.size();
      ASSERT_EQ(ring[front + uint32_t(i)], model[i]);
    }
  }
}

TEST(TagFilter, HoldsWhatWasAddedUntilEveryCopyIsRemoved) {
  TagFilter f;
  const uint32_t a = 0x80001234u, b = a + 4096;  // same low bits: one count
  EXPECT_FALSE(f.may_hold(a));
  f.add(a);
  f.add(b);
  EXPECT_TRUE(f.may_hold(a));
  EXPECT_TRUE(f.may_hold(b));
  EXPECT_FALSE(f.may_hold(a + 1));
  f.remove(a);
  EXPECT_TRUE(f.may_hold(b));  // b is still there
  f.remove(b);
  EXPECT_FALSE(f.may_hold(a));
  f.add(a);
  f.clear();
  EXPECT_FALSE(f.may_hold(a));
}

TEST(TagFilter, NeverMissesAHeldTag) {
  TagFilter f;
  std::multiset<uint32_t> held;
  std::mt19937_64 rng(11);
  for (int step = 0; step < 100000; ++step) {
    const uint32_t tag = uint32_t(rng()) | 0x80000000u;
    if (rng() % 2 || held.empty()) {
      f.add(tag);
      held.insert(tag);
    } else {
      auto it = held.begin();
      f.remove(*it);
      held.erase(it);
    }
    if (held.empty()) continue;
    for (uint32_t t : {*held.begin(), *held.rbegin()}) {
      ASSERT_TRUE(f.may_hold(t));
    }
  }
}

}  // namespace
}  // namespace rdmatel::paths
