// SPDX-License-Identifier: GPL-2.0-or-later
#include "engine/src/core/clock.h"

#include <algorithm>

namespace rdmatel {

void ClockRelations::grow(PointId id) {
  if (id >= nodes_.size()) nodes_.resize(size_t(id) + 1);
}

PointId ClockRelations::root(PointId id) const {
  if (id >= nodes_.size()) return id;
  while (nodes_[id].parent != kNoPoint) id = nodes_[id].parent;
  return id;
}

ClockRelations::Estimate ClockRelations::estimate_of(const Link& l) {
  Estimate e;
  e.samples = l.n[0] + l.n[1];
  if (l.n[0] && l.n[1]) {
    e.both_directions = true;
    // One direction travels p -> q (differences offset + delay: its lowest is closest), the
    // other q -> p (offset - delay: its highest is closest). Which is which shows in the data:
    // the direction whose lowest difference lies above the other's highest travels p -> q.
    int fwd = l.lo[0] >= l.hi[1] ? 0 : l.lo[1] >= l.hi[0] ? 1 : -1;
    if (fwd >= 0) {
      DurationNs up = l.lo[fwd], down = l.hi[1 - fwd];
      e.offset = down + (up - down) / 2;
      e.uncertainty = (up - down) / 2;
      return e;
    }
    // Overlapping ranges (reordered samples, a copy matched to the wrong one): the middle of all.
    DurationNs lo = std::min(l.lo[0], l.lo[1]), hi = std::max(l.hi[0], l.hi[1]);
    e.offset = lo + (hi - lo) / 2;
    e.uncertainty = (hi - lo) / 2;
    return e;
  }
  int d = l.n[0] ? 0 : 1;
  e.offset = l.lo[d] + (l.hi[d] - l.lo[d]) / 2;
  e.uncertainty = (l.hi[d] - l.lo[d]) / 2;
  return e;
}

DurationNs ClockRelations::to_root(PointId id) const {
  DurationNs off = 0;
  while (id < nodes_.size() && nodes_[id].parent != kNoPoint) {
    const Node& n = nodes_[id];
    const Link& l = links_[n.link];
    // t_q = t_p + offset: stepping from p to q adds -offset to reach q's clock... expressed as
    // t_parent = t_id + (offset when id is p and parent is q) or - offset the other way.
    DurationNs o = estimate_of(l).offset;
    off += l.p == id ? o : -o;
    id = n.parent;
  }
  return off;
}

std::vector<ClockRelations::PairEstimate> ClockRelations::pairs() const {
  std::vector<PairEstimate> out;
  out.reserve(links_.size());
  for (const Link& l : links_) out.push_back(PairEstimate{l.p, l.q, estimate_of(l)});
  return out;
}

void ClockRelations::add_sample(PointId p, TimeNs tp, PointId q, TimeNs tq, int direction) {
  if (p == q || p == kNoPoint || q == kNoPoint) return;
  if (p > q) {
    std::swap(p, q);
    std::swap(tp, tq);
  }
  direction = direction ? 1 : 0;
  grow(q);
  uint64_t key = uint64_t(p) << 32 | q;
  auto [it, inserted] = link_index_.emplace(key, uint32_t(links_.size()));
  if (inserted) links_.push_back(Link{p, q});
  Link& l = links_[it->second];
  DurationNs d = tq - tp;
  if (l.n[direction] == 0) {
    l.lo[direction] = l.hi[direction] = d;
  } else {
    l.lo[direction] = std::min(l.lo[direction], d);
    l.hi[direction] = std::max(l.hi[direction], d);
  }
  ++l.n[direction];
  PointId rp = root(p), rq = root(q);
  if (rp == rq) return;
  // Union by size, along this link: the smaller component's root hangs below the larger's.
  // The link joins p and q themselves, so re-root the smaller tree at its end of the link.
  PointId small_end = nodes_[rp].size < nodes_[rq].size ? p : q;
  PointId big_end = small_end == p ? q : p;
  PointId big_root = small_end == p ? rq : rp;
  // Reverse the parent chain from small_end up to its root, so small_end becomes its root.
  PointId prev = kNoPoint, cur = small_end;
  uint32_t prev_link = 0;
  while (cur != kNoPoint) {
    PointId next = nodes_[cur].parent;
    uint32_t next_link = nodes_[cur].link;
    nodes_[cur].parent = prev;
    nodes_[cur].link = prev_link;
    prev = cur;
    prev_link = next_link;
    cur = next;
  }
  // `prev` is the old root; sizes: the new root (small_end) carries the component's size.
  uint32_t small_size = nodes_[prev].size;
  nodes_[small_end].size = small_size;
  nodes_[small_end].parent = big_end;
  nodes_[small_end].link = it->second;
  nodes_[big_root].size += small_size;
}

std::optional<ClockRelations::Estimate> ClockRelations::estimate(PointId p, PointId q) const {
  bool swapped = p > q;
  if (swapped) std::swap(p, q);
  auto it = link_index_.find(uint64_t(p) << 32 | q);
  if (it == link_index_.end()) return std::nullopt;
  Estimate e = estimate_of(links_[it->second]);
  if (swapped) e.offset = -e.offset;
  return e;
}

}  // namespace rdmatel
