// SPDX-License-Identifier: GPL-2.0-or-later
// FlatMap against std::map: insertions, lookups, erasures by backward shift and erase_if (a
// value changed in place and erased only when the callback says so), with keys that collide in
// the low bits so that probe runs wrap and get long.
#include <gtest/gtest.h>

#include <map>
#include <random>

#include "engine/src/util/flat_map.h"

namespace rdmatel {
namespace {

struct Crowded {  // every key in one of 8 home slots
  size_t operator()(uint64_t k) const noexcept { return k % 8; }
};

TEST(FlatMap, EraseIfChangesOrErasesInOneProbe) {
  FlatMap<uint64_t, uint64_t, Crowded> map;
  std::map<uint64_t, uint64_t> want;
  std::mt19937_64 rng(7);
  for (int step = 0; step < 20000; ++step) {
    const uint64_t k = rng() % 300;
    switch (rng() % 4) {
      case 0:
        map[k] += 3;
        want[k] += 3;
        break;
      case 1:
        EXPECT_EQ(map.erase(k), want.erase(k) == 1);
        break;
      default: {
        // Counts down; the key goes when it reaches zero (a list losing its last element).
        const bool present = want.count(k) == 1;
        EXPECT_EQ(map.erase_if(k, [](uint64_t& v) { return --v == 0; }), present);
        if (present && --want[k] == 0) want.erase(k);
      }
    }
    ASSERT_EQ(map.size(), want.size());
  }
  for (const auto& [k, v] : want) {
    const uint64_t* got = map.find(k);
    ASSERT_TRUE(got) << k;
    EXPECT_EQ(*got, v);
  }
  size_t seen = 0;
  map.for_each([&](uint64_t k, uint64_t v) {
    ++seen;
    EXPECT_EQ(want.at(k), v);
  });
  EXPECT_EQ(seen, want.size());
}

}  // namespace
}  // namespace rdmatel
