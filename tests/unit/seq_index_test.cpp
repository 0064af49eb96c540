// SPDX-License-Identifier: GPL-2.0-or-later
// The index `paths` finds waiting packets with (engine/metrics/paths/seq_index.h): hashes that
// collide are told apart by the caller's key, erasing keeps every other entry findable, and a
// long run of inserts and erases agrees with std::map.
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <random>
#include <vector>

#include "engine/metrics/paths/seq_index.h"

namespace rdmatel::paths {
namespace {

// Keys by creation number, as the paths queue keeps them.
struct Keys {
  std::vector<uint64_t> by_seq;
  SeqIndex index;
  uint32_t find_or_add(uint64_t key, uint64_t hash, bool& added) {
    uint32_t s = index.find_or_add(hash, uint32_t(by_seq.size()), [&](uint32_t q) { return by_seq[q] == key; }, added);
    if (added) by_seq.push_back(key);
    return s;
  }
};

TEST(SeqIndex, CollidingHashesAreToldApartByTheKey) {
  Keys k;
  bool added;
  EXPECT_EQ(k.find_or_add(10, 7, added), 0u);
  EXPECT_TRUE(added);
  EXPECT_EQ(k.find_or_add(20, 7, added), 1u);  // same hash, another key: a new entry
  EXPECT_TRUE(added);
  EXPECT_EQ(k.find_or_add(10, 7, added), 0u);
  EXPECT_FALSE(added);
  EXPECT_EQ(k.find_or_add(20, 7, added), 1u);
  EXPECT_FALSE(added);
  EXPECT_EQ(k.index.size(), 2u);
}

TEST(SeqIndex, ErasingTheHeadOfAProbeRunKeepsTheRestFindable) {
  Keys k;
  bool added;
  for (uint64_t key = 0; key < 5; ++key) k.find_or_add(key, 3, added);  // one probe run
  k.index.erase(3, 0);
  k.index.erase(3, 2);
  EXPECT_EQ(k.index.size(), 3u);
  for (uint64_t key : {1, 3, 4}) {
    EXPECT_EQ(k.find_or_add(key, 3, added), uint32_t(key));
    EXPECT_FALSE(added);
  }
  EXPECT_EQ(k.find_or_add(0, 3, added), 5u);  // erased: added again as a new entry
  EXPECT_TRUE(added);
}

TEST(SeqIndex, AgreesWithAMapOverManyInsertsAndErases) {
  Keys k;
  std::map<uint64_t, uint32_t> model;  // key -> creation number
  std::mt19937_64 rng(42);
  for (int step = 0; step < 200000; ++step) {
    uint64_t key = rng() % 5000;
    uint64_t hash = key % 977 * 0x9E3779B97F4A7C15ULL;  // many keys share a hash
    if (rng() % 3 == 0) {
      auto it = model.find(key);
      if (it == model.end()) continue;
      k.index.erase(hash, it->second);
      model.erase(it);
      continue;
    }
    bool added;
    uint32_t s = k.find_or_add(key, hash, added);
    auto [it, fresh] = model.try_emplace(key, s);
    ASSERT_EQ(added, fresh);
    ASSERT_EQ(s, it->second);
    ASSERT_EQ(k.index.size(), model.size());
  }
}

}  // namespace
}  // namespace rdmatel::paths
