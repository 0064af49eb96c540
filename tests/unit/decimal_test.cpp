// SPDX-License-Identifier: GPL-2.0-or-later
// decimal::write against std::to_chars (the text the writers printed before): every value up to
// a million, every power of ten and its neighbours, the ends of the ranges, and a million values
// spread over every bit length.
#include <gtest/gtest.h>

#include <charconv>
#include <limits>
#include <random>
#include <string>

#include "engine/src/util/decimal.h"

namespace rdmatel {
namespace {

template <typename T>
std::string expected(T v) {
  char b[32];
  return std::string(b, std::to_chars(b, b + sizeof b, v).ptr);
}
template <typename T>
std::string written(T v) {
  char b[32];
  return std::string(b, decimal::write(b, v));
}

TEST(Decimal, EveryValueUpToAMillion) {
  for (uint64_t v = 0; v <= 1000000; ++v) ASSERT_EQ(written(v), expected(v)) << v;
}

TEST(Decimal, PowersOfTenTheirNeighboursAndTheEnds) {
  uint64_t p = 1;
  for (int k = 0; k < 20; ++k, p *= 10) {
    for (uint64_t v : {p - 1, p, p + 1, 2 * p - 1, 9 * p, 9 * p + 1}) {
      if (k == 19 && v < p) continue;  // wrapped past 2^64
      ASSERT_EQ(written(v), expected(v)) << v;
    }
  }
  for (uint64_t v : {std::numeric_limits<uint64_t>::max(), std::numeric_limits<uint64_t>::max() - 1,
                     uint64_t(1) << 63, (uint64_t(1) << 63) - 1, uint64_t(99999999), uint64_t(100000000),
                     uint64_t(9999999999999999), uint64_t(10000000000000000)})
    ASSERT_EQ(written(v), expected(v)) << v;
  for (int64_t v : {std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::min() + 1,
                    std::numeric_limits<int64_t>::max(), int64_t(-1), int64_t(0), int64_t(-100000000),
                    int64_t(-99999999), int64_t(-1795960800991558912)})
    ASSERT_EQ(written(v), expected(v)) << v;
}

TEST(Decimal, ValuesOfEveryBitLength) {
  std::mt19937_64 rng(20261206);
  for (int i = 0; i < 1000000; ++i) {
    const uint64_t v = rng() >> (rng() % 64);
    ASSERT_EQ(written(v), expected(v)) << v;
    const int64_t s = int64_t(rng()) >> (rng() % 64);
    ASSERT_EQ(written(s), expected(s)) << s;
  }
}

}  // namespace
}  // namespace rdmatel
