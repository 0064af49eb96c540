// SPDX-License-Identifier: GPL-2.0-or-later
// Blocks of memory on transparent huge pages, for state the engine reads at random long after
// writing it (stable_pool.h): with 4 KiB pages nearly every such read also misses the TLB and
// walks the page tables; one 2 MiB page needs one TLB entry. The kernel is asked (madvise), the
// default on Debian 12 ("madvise" mode); where it offers none the mapping is an ordinary one.
#pragma once

#include <sys/mman.h>

#include <cstddef>
#include <cstdint>
#include <new>

namespace rdmatel {

namespace huge_pages {

inline constexpr size_t kHugePage = size_t(2) << 20;

/// `bytes` (>= kHugePage) of zeroed memory aligned to 2 MiB, asked to be backed by huge pages.
/// Its length is rounded up to whole huge pages; free it with unmap(p, bytes).
inline void* map(size_t bytes) {
  const size_t length = (bytes + kHugePage - 1) & ~(kHugePage - 1);
  // Over-map by one huge page and trim both ends: mmap aligns to 4 KiB only.
  void* raw = mmap(nullptr, length + kHugePage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) throw std::bad_alloc();
  const uintptr_t start = reinterpret_cast<uintptr_t>(raw);
  const uintptr_t aligned = (start + kHugePage - 1) & ~uintptr_t(kHugePage - 1);
  if (aligned > start) munmap(raw, aligned - start);
  if (const size_t tail = start + length + kHugePage - (aligned + length)) munmap(reinterpret_cast<void*>(aligned + length), tail);
  void* p = reinterpret_cast<void*>(aligned);
  madvise(p, length, MADV_HUGEPAGE);  // a hint: without huge pages it is an ordinary mapping
  return p;
}

inline void unmap(void* p, size_t bytes) {
  munmap(p, (bytes + kHugePage - 1) & ~(kHugePage - 1));
}

}  // namespace huge_pages

}  // namespace rdmatel
