// SPDX-License-Identifier: GPL-2.0-or-later
// Sorting by a dense key in linear time. Frames are numbered densely from 1, and so are record
// ids, so entries keyed by either sort by counting how many fall on each key and placing each
// after those of the keys before, in the order they came (stable). At the end of the plugin's
// first pass, comparison sorts of a few hundred thousand index entries cost more than the rest
// of the indexing.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

namespace rdmatel {

/// Where the entries of each key start in the sorted order (indexed by key), or nothing when
/// counting would take more memory than the entries themselves and the first 4 M keys (hand-
/// made numbers: a few entries with large keys), or the entries are too many for 32-bit counts:
/// the caller then compares.
template <typename It, typename KeyOf>
std::vector<uint32_t> dense_key_starts(It begin, It end, KeyOf key_of) {
  constexpr uint64_t kKeysCountedAnyway = uint64_t(1) << 22;  // 16 MiB of counts
  const size_t n = size_t(end - begin);
  uint64_t last = 0;
  for (It i = begin; i != end; ++i) last = std::max<uint64_t>(last, key_of(*i));
  if (last > 4 * uint64_t(n) + kKeysCountedAnyway || n >= UINT32_MAX) return {};
  std::vector<uint32_t> start(size_t(last) + 2, 0);
  for (It i = begin; i != end; ++i) ++start[size_t(key_of(*i)) + 1];
  for (size_t k = 1; k < start.size(); ++k) start[k] += start[k - 1];
  return start;
}

/// Sorts `items` by key, entries of one key in the order they came (as std::stable_sort).
template <typename T, typename KeyOf>
void stable_sort_by_dense_key(std::vector<T>& items, KeyOf key_of) {
  auto by_key = [&](const T& a, const T& b) { return key_of(a) < key_of(b); };
  if (std::is_sorted(items.begin(), items.end(), by_key)) return;
  std::vector<uint32_t> start = dense_key_starts(items.begin(), items.end(), key_of);
  if (start.empty()) {
    std::stable_sort(items.begin(), items.end(), by_key);
    return;
  }
  std::vector<T> sorted(items.size());
  for (const T& item : items) sorted[start[size_t(key_of(item))]++] = item;
  items.swap(sorted);
}

}  // namespace rdmatel
