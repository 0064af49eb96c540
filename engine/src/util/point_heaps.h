// SPDX-License-Identifier: GPL-2.0-or-later
// Min-heaps of observation points by a key (how far each has come), one heap per group (a clock
// component, say), each point in at most one. What settles results asks "which point is furthest
// behind?" after every step; with hundreds of busy points a scan of them all was most of the
// time (4,000 points: 83 % of it). A point's key changes as it advances: re-keying it is a
// few steps down its heap.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "rdmatel/types.h"

namespace rdmatel {

class PointHeaps {
 public:
  /// Puts point `p` in heap `group` with `key` (moving it from the heap it was in).
  void set(PointId p, uint32_t group, int64_t key) {
    if (p >= where_.size()) where_.resize(size_t(p) + 1);
    Where& w = where_[p];
    if (w.group != group && w.group != kNone) erase(p);
    if (w.group == kNone) {
      if (group >= heaps_.size()) heaps_.resize(size_t(group) + 1);
      std::vector<Item>& h = heaps_[group];
      w = {group, uint32_t(h.size())};
      h.push_back({key, p});
      up(h, w.index);
      return;
    }
    std::vector<Item>& h = heaps_[group];
    const int64_t old = h[w.index].key;
    h[w.index].key = key;
    if (key < old)
      up(h, w.index);
    else if (key > old)
      down(h, w.index);
  }
  /// Takes point `p` out of its heap (if it is in one).
  void erase(PointId p) {
    if (p >= where_.size() || where_[p].group == kNone) return;
    const Where w = where_[p];
    std::vector<Item>& h = heaps_[w.group];
    where_[p].group = kNone;
    const Item last = h.back();
    h.pop_back();
    if (w.index == h.size()) return;
    h[w.index] = last;
    where_[last.point].index = w.index;
    up(h, w.index);
    down(h, where_[last.point].index);
  }
  bool contains(PointId p) const { return p < where_.size() && where_[p].group != kNone; }
  size_t size(uint32_t group) const { return group < heaps_.size() ? heaps_[group].size() : 0; }
  /// The least key in heap `group` (not empty).
  int64_t top_key(uint32_t group) const { return heaps_[group].front().key; }
  /// The point of least key in heap `group` (not empty).
  PointId top(uint32_t group) const { return heaps_[group].front().point; }
  /// The point of least key in heap `group` that `accept`s, kNoPoint when none: the heap is
  /// visited in key order (best first, its candidates in `scratch`), so each point passed over
  /// costs a step or two, not the whole heap.
  template <typename F>
  PointId least_where(uint32_t group, F&& accept, std::vector<uint32_t>& scratch) const {
    if (group >= heaps_.size() || heaps_[group].empty()) return kNoPoint;
    const std::vector<Item>& h = heaps_[group];
    auto later = [&](uint32_t a, uint32_t b) { return h[a].key > h[b].key; };
    scratch.assign(1, 0);
    while (!scratch.empty()) {
      std::pop_heap(scratch.begin(), scratch.end(), later);
      const uint32_t i = scratch.back();
      scratch.pop_back();
      if (accept(h[i].point)) return h[i].point;
      for (uint32_t c = 2 * i + 1; c <= 2 * i + 2 && c < h.size(); ++c) {
        scratch.push_back(c);
        std::push_heap(scratch.begin(), scratch.end(), later);
      }
    }
    return kNoPoint;
  }
  void clear() {
    for (std::vector<Item>& h : heaps_)
      for (const Item& i : h) where_[i.point].group = kNone;
    heaps_.clear();
  }

 private:
  struct Item {
    int64_t key;
    PointId point;
  };
  struct Where {
    uint32_t group = kNone;
    uint32_t index = 0;
  };
  static constexpr uint32_t kNone = UINT32_MAX;

  void up(std::vector<Item>& h, uint32_t i) {
    const Item x = h[i];
    while (i > 0) {
      const uint32_t parent = (i - 1) / 2;
      if (h[parent].key <= x.key) break;
      place(h, i, h[parent]);
      i = parent;
    }
    place(h, i, x);
  }
  void down(std::vector<Item>& h, uint32_t i) {
    const Item x = h[i];
    const uint32_t n = uint32_t(h.size());
    for (;;) {
      uint32_t child = 2 * i + 1;
      if (child >= n) break;
      if (child + 1 < n && h[child + 1].key < h[child].key) ++child;
      if (x.key <= h[child].key) break;
      place(h, i, h[child]);
      i = child;
    }
    place(h, i, x);
  }
  void place(std::vector<Item>& h, uint32_t i, const Item& x) {
    h[i] = x;
    where_[x.point].index = i;
  }

  std::vector<std::vector<Item>> heaps_;  ///< by group
  std::vector<Where> where_;              ///< by point
};

}  // namespace rdmatel
