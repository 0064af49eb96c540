// SPDX-License-Identifier: GPL-2.0-or-later
// The messages plugin's ring (engine/metrics/messages/ring.h) against the std::deque it
// replaces: pushes at the back, pops at the front, inserts and erases inside, compaction, growth
// while wrapped around.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <deque>
#include <random>
#include <utility>

#include "engine/metrics/messages/ring.h"

namespace rdmatel::messages {
namespace {

void expect_same(const Ring<uint64_t>& ring, const std::deque<uint64_t>& model, int step) {
  ASSERT_EQ(ring.size(), model.size()) << step;
  ASSERT_EQ(ring.empty(), model.empty()) << step;
  for (size_t i = 0; i < model.size(); ++i) ASSERT_EQ(ring[i], model[i]) << step << " at " << i;
  if (!model.empty()) {
    ASSERT_EQ(ring.front(), model.front()) << step;
    ASSERT_EQ(ring.back(), model.back()) << step;
  }
}

TEST(Ring, AgreesWithADeque) {
  Ring<uint64_t> ring;
  std::deque<uint64_t> model;
  std::mt19937 rng(5);
  for (int step = 0; step < 50000; ++step) {
    const uint32_t r = rng() % 100;
    const uint64_t x = rng();
    if (r < 45 || model.empty()) {
      ring.push_back(x);
      model.push_back(x);
    } else if (r < 80) {
      ring.pop_front();
      model.pop_front();
    } else if (r < 86) {
      const size_t at = rng() % (model.size() + 1);
      ring.insert(at, x);
      model.insert(model.begin() + long(at), x);
    } else if (r < 92) {
      const size_t at = rng() % model.size();
      ring.erase(at);
      model.erase(model.begin() + long(at));
    } else if (r < 93) {
      ring.erase_if([](uint64_t v) { return v % 3 == 0; });
      model.erase(std::remove_if(model.begin(), model.end(), [](uint64_t v) { return v % 3 == 0; }), model.end());
    } else if (r < 94) {
      ring.pop_back();
      model.pop_back();
    } else if (r < 95 && step % 7 == 0) {
      ring.clear();
      model.clear();
    } else {
      ring.back() = x;
      model.back() = x;
    }
    expect_same(ring, model, step);
  }
}

TEST(Ring, MovedFromIsEmpty) {
  Ring<uint64_t> a;
  for (uint64_t i = 0; i < 20; ++i) a.push_back(i);
  a.pop_front();
  Ring<uint64_t> b = std::move(a);
  EXPECT_TRUE(a.empty());  // NOLINT(bugprone-use-after-move): the moved-from state is defined
  ASSERT_EQ(b.size(), 19u);
  EXPECT_EQ(b.front(), 1u);
  EXPECT_EQ(b.back(), 19u);
  a.push_back(7);
  EXPECT_EQ(a.front(), 7u);
}

}  // namespace
}  // namespace rdmatel::messages
