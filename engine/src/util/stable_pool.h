// SPDX-License-Identifier: GPL-2.0-or-later
// A growing pool of objects that never move (callers keep pointers and slot numbers to them),
// numbered in the order they were added. Objects live in blocks of 2 MiB on huge pages
// (huge_pages.h): the open messages and I/Os are read at random long after they were made
// (finalised a reorder window later), and spread over 4 KiB pages most such reads also missed
// the TLB. The first block is small, so a pool that stays small costs little.
#pragma once

#include <algorithm>
#include <cstddef>
#include <new>
#include <vector>

#include "engine/src/util/huge_pages.h"

namespace rdmatel {

template <typename T>
class StablePool {
 public:
  StablePool() = default;
  StablePool(const StablePool&) = delete;
  StablePool& operator=(const StablePool&) = delete;
  ~StablePool() {
    for (size_t i = 0; i < size_; ++i) (*this)[i].~T();
    for (size_t b = 0; b < blocks_.size(); ++b)
      if (b == 0) ::operator delete(blocks_[b]);
      else huge_pages::unmap(blocks_[b], huge_pages::kHugePage);
  }

  /// Adds a value-initialised object; it stays at its address until the pool is destroyed.
  T& emplace_back() {
    const Place at = place(size_);
    if (at.block == blocks_.size())
      blocks_.push_back(static_cast<T*>(at.block == 0 ? ::operator new(kFirst * sizeof(T))
                                                      : huge_pages::map(huge_pages::kHugePage)));
    T* p = ::new (static_cast<void*>(blocks_[at.block] + at.index)) T();
    ++size_;
    return *p;
  }
  T& operator[](size_t i) {
    const Place at = place(i);
    return blocks_[at.block][at.index];
  }
  size_t size() const { return size_; }

 private:
  // Block 0 (from the heap) holds kFirst objects; the others fill a huge page each.
  static_assert(sizeof(T) <= huge_pages::kHugePage && alignof(T) <= alignof(std::max_align_t));
  static constexpr size_t kFirst = std::max<size_t>(1, 16384 / sizeof(T));
  static constexpr size_t kPerBlock = huge_pages::kHugePage / sizeof(T);
  struct Place {
    size_t block, index;
  };
  static Place place(size_t i) {
    if (i < kFirst) return {0, i};
    return {1 + (i - kFirst) / kPerBlock, (i - kFirst) % kPerBlock};
  }

  std::vector<T*> blocks_;
  size_t size_ = 0;
};

}  // namespace rdmatel
