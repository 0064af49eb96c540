// SPDX-License-Identifier: GPL-2.0-or-later
// The pool open messages and I/O entries live in (engine/src/util/stable_pool.h): objects keep
// their addresses and their numbers as the pool grows past its first block and over several huge
// page blocks, each is made value-initialised, and every one is destroyed with the pool.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "engine/src/util/huge_pages.h"
#include "engine/src/util/stable_pool.h"

namespace rdmatel {
namespace {

struct Counted {
  static inline int alive = 0;
  uint64_t value;  // value-initialised: 0
  char pad[200];   // about a message's size: blocks of a few thousand
  Counted() : value() { ++alive; }
  ~Counted() { --alive; }
};

TEST(StablePool, KeepsAddressesAndNumbersAcrossBlocks) {
  {
    StablePool<Counted> pool;
    // Past the first (heap) block and over three huge-page blocks.
    const size_t n = 3 * huge_pages::kHugePage / sizeof(Counted) + 100;
    std::vector<Counted*> made;
    for (size_t i = 0; i < n; ++i) {
      Counted& c = pool.emplace_back();
      ASSERT_EQ(c.value, 0u);
      c.value = i * 3 + 1;
      made.push_back(&c);
    }
    EXPECT_EQ(pool.size(), n);
    EXPECT_EQ(Counted::alive, int(n));
    for (size_t i = 0; i < n; ++i) {
      ASSERT_EQ(&pool[i], made[i]) << i;
      ASSERT_EQ(pool[i].value, i * 3 + 1) << i;
    }
  }
  EXPECT_EQ(Counted::alive, 0);
}

TEST(HugePages, MapsAlignedZeroedMemory) {
  const size_t bytes = huge_pages::kHugePage + 12345;
  auto* p = static_cast<unsigned char*>(huge_pages::map(bytes));
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % huge_pages::kHugePage, 0u);
  for (size_t i = 0; i < bytes; i += 4096) ASSERT_EQ(p[i], 0) << i;
  p[bytes - 1] = 1;  // the whole length is writable
  huge_pages::unmap(p, bytes);
}

}  // namespace
}  // namespace rdmatel
