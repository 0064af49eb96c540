// SPDX-License-Identifier: GPL-2.0-or-later
// Sorting by a dense key (engine/include/rdmatel/dense_sort.h) gives what std::stable_sort gives:
// keys counted (frames and ids numbered densely), keys far apart (compared instead), keys
// already in order, and none.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <utility>
#include <vector>

#include "rdmatel/dense_sort.h"

namespace rdmatel {
namespace {

using Entry = std::pair<uint64_t, uint32_t>;  // key, the order it came in

std::vector<Entry> shuffled_keys(size_t n, uint64_t key_range, uint64_t stride) {
  std::mt19937_64 rng(7);
  std::vector<Entry> v;
  for (size_t i = 0; i < n; ++i) v.emplace_back(1 + (rng() % key_range) * stride, uint32_t(i));
  return v;
}

void expect_as_stable_sort(std::vector<Entry> v) {
  auto key = [](const Entry& e) { return e.first; };
  std::vector<Entry> expected = v;
  std::stable_sort(expected.begin(), expected.end(), [](const Entry& a, const Entry& b) { return a.first < b.first; });
  stable_sort_by_dense_key(v, key);
  EXPECT_EQ(v, expected);
}

TEST(DenseSort, DenseKeysAreCountedInTheOrderTheyCame) {
  const auto v = shuffled_keys(50000, 20000, 1);
  EXPECT_FALSE(dense_key_starts(v.begin(), v.end(), [](const Entry& e) { return e.first; }).empty());
  expect_as_stable_sort(v);
}

TEST(DenseSort, KeysFarApartAreCompared) {
  // A few entries with keys beyond what counting may spend memory on.
  const auto v = shuffled_keys(1000, 1000, uint64_t(1) << 30);
  EXPECT_TRUE(dense_key_starts(v.begin(), v.end(), [](const Entry& e) { return e.first; }).empty());
  expect_as_stable_sort(v);
}

TEST(DenseSort, SortedEmptyAndSingle) {
  std::vector<Entry> sorted;
  for (uint32_t i = 0; i < 100; ++i) sorted.emplace_back(i / 3, i);
  expect_as_stable_sort(sorted);
  expect_as_stable_sort({});
  expect_as_stable_sort({{5, 0}});
  expect_as_stable_sort({{0, 0}, {0, 1}, {3, 2}, {0, 3}});  // key 0 (a frame unknown) first
}

}  // namespace
}  // namespace rdmatel
