// SPDX-License-Identifier: GPL-2.0-or-later
#include "engine/src/core/clock.h"

#include <algorithm>
#include <cmath>

namespace rdmatel {

void ClockRelations::grow(PointId id) {
  if (id >= nodes_.size()) nodes_.resize(size_t(id) + 1);
}

void ClockRelations::attach(PointId child, PointId parent) {
  Node& c = nodes_[child];
  Node& p = nodes_[parent];
  c.prev_sibling = kNoPoint;
  c.next_sibling = p.first_child;
  if (p.first_child != kNoPoint) nodes_[p.first_child].prev_sibling = child;
  p.first_child = child;
}

void ClockRelations::detach(PointId child) {
  Node& c = nodes_[child];
  if (c.prev_sibling != kNoPoint)
    nodes_[c.prev_sibling].next_sibling = c.next_sibling;
  else
    nodes_[c.parent].first_child = c.next_sibling;
  if (c.next_sibling != kNoPoint) nodes_[c.next_sibling].prev_sibling = c.prev_sibling;
  c.prev_sibling = c.next_sibling = kNoPoint;
}

void ClockRelations::log_subtree(PointId top) {
  if (change_log_.empty()) change_log_.resize(kChangeLog);
  walk_.assign(1, top);
  size_t logged = 0;
  while (!walk_.empty()) {
    const PointId x = walk_.back();
    walk_.pop_back();
    if (++logged > kChangeLog) {  // more than a reader can find: every point, for all of them
      changes_ += kChangeLog + 1;
      return;
    }
    change_log_[changes_++ & (kChangeLog - 1)] = x;
    for (PointId c = nodes_[x].first_child; c != kNoPoint; c = nodes_[c].next_sibling) walk_.push_back(c);
  }
}

PointId ClockRelations::root(PointId id) const {
  if (id >= nodes_.size()) return id;
  while (nodes_[id].parent != kNoPoint) id = nodes_[id].parent;
  return id;
}

ClockRelations::Estimate ClockRelations::estimate_of(const Link& l) const {
  // The means move with every sample: what is reported is worked out from all of them.
  if (l.reported_n != l.all.n || l.reported_noise != noise_version_) {
    l.reported = compute(l);
    l.reported_n = l.all.n;
    l.reported_noise = noise_version_;
  }
  Estimate e = l.reported;
  e.samples = l.all.n;
  return e;
}

ClockRelations::Estimate ClockRelations::compute(const Link& l) const {
  Estimate e;
  // Two stamps out of order by n at a point: one of them strayed by n / 2 at least, and a
  // sample of two points is off by the sum of its two stamps' strays.
  auto noise_of = [&](PointId x) { return x < stamp_noise_.size() ? stamp_noise_[x] : 0; };
  e.noise = (noise_of(l.p) + noise_of(l.q)) / 2;
  // Each endpoint pair seen both ways brackets the offset: one direction travels p -> q (offset +
  // delay: its lowest difference is closest), the other q -> p (offset - delay: its highest is
  // closest). Which is which shows in the data: the direction whose lowest difference lies above
  // the other's highest travels p -> q.
  bool any = false;
  DurationNs down = 0, up = 0;  // the intersection of the brackets
  // The same by the directions' means: offset + mean delay one way, offset - mean delay the
  // other. Wider, but stamp noise that averages out (jitter) cannot move them past the offset.
  bool any_mean = false;
  double mean_down = 0, mean_up = 0;
  for (const PairRanges& pr : l.pairs) {
    if (!pr.way[0].n || !pr.way[1].n) continue;
    e.both_directions = true;
    const double m0 = pr.way[0].mean(), m1 = pr.way[1].mean();
    mean_down = any_mean ? std::max(mean_down, std::min(m0, m1)) : std::min(m0, m1);
    mean_up = any_mean ? std::min(mean_up, std::max(m0, m1)) : std::max(m0, m1);
    any_mean = true;
    const int fwd = pr.way[0].lo >= pr.way[1].hi ? 0 : pr.way[1].lo >= pr.way[0].hi ? 1 : -1;
    if (fwd < 0) {
      // Overlapping: stamp noise larger than the delays (jittered software stamps, two ports of
      // one switch), or a copy matched to the wrong one. It brackets nothing, but tells how
      // far the stamps stray.
      e.noise = std::max(e.noise, std::min(pr.way[1].hi - pr.way[0].lo, pr.way[0].hi - pr.way[1].lo));
      continue;
    }
    const DurationNs d = pr.way[1 - fwd].hi, u = pr.way[fwd].lo;
    down = any ? std::max(down, d) : d;
    up = any ? std::min(up, u) : u;
    any = true;
  }
  // With exact stamps every pair's bracket holds the offset, so no two pairs' disagree and no
  // pair's directions overlap. When they do, the stamps stray by more than the delays, and the
  // closest samples are the most strayed ones: a bracket drawn from them can be narrow and miss
  // the offset by most of the noise (two ports of one switch, ±250 ns of jitter: 75 ± 42 ns
  // against a true 0). The means' bracket holds it then.
  if ((e.noise > 0 || (any && down > up)) && any_mean) {
    if (mean_down > mean_up) std::swap(mean_down, mean_up);  // finite samples: they may just cross
    const auto lo = DurationNs(std::floor(mean_down)), hi = DurationNs(std::ceil(mean_up));
    e.offset = lo + (hi - lo) / 2;
    e.uncertainty = hi - e.offset;
    return e;
  }
  if (any) {
    e.offset = down + (up - down) / 2;
    e.uncertainty = (up - down) / 2;
    return e;
  }
  // No bracket: the middle of every sample (with one direction only, it still holds the delay).
  e.offset = l.all.lo + (l.all.hi - l.all.lo) / 2;
  e.uncertainty = (l.all.hi - l.all.lo) / 2;
  return e;
}

DurationNs ClockRelations::to_root(PointId id) const {
  __int128 off = 0;
  while (id < nodes_.size() && nodes_[id].parent != kNoPoint) {
    const Node& n = nodes_[id];
    const Link& l = links_[n.link];
    // t_q = t_p + offset: stepping from p to q adds -offset to reach q's clock... expressed as
    // t_parent = t_id + (offset when id is p and parent is q) or - offset the other way.
    DurationNs o = l.cached.offset;
    off += l.p == id ? o : -o;
    id = n.parent;
  }
  return within_span(off);
}

std::vector<ClockRelations::PairEstimate> ClockRelations::pairs() const {
  std::vector<PairEstimate> out;
  out.reserve(links_.size());
  for (const Link& l : links_) out.push_back(PairEstimate{l.p, l.q, estimate_of(l)});
  return out;
}

inline ClockRelations::PairRanges* ClockRelations::pair_ranges(Link& l, uint64_t pair) {
  // At most half the slots are taken: a probe run ends at an empty one.
  static_assert((kMaxPairsPerLink & (kMaxPairsPerLink - 1)) == 0 && kMaxPairsPerLink < kNoPair);
  constexpr size_t kMask = 2 * kMaxPairsPerLink - 1;
  for (size_t i = size_t(pair) & kMask;; i = (i + 1) & kMask) {
    const uint8_t s = l.pair_slot[i];
    if (s == kNoPair) {
      if (l.pairs.size() >= kMaxPairsPerLink) return nullptr;  // counted in `all` only
      l.pair_slot[i] = uint8_t(l.pairs.size());
      return &l.pairs.emplace_back(PairRanges{pair, {}});
    }
    if (l.pairs[s].pair == pair) return &l.pairs[s];
  }
}

void ClockRelations::add_sample(PointId p, TimeNs tp, PointId q, TimeNs tq, int direction, uint64_t pair) {
  if (p == q || p == kNoPoint || q == kNoPoint) return;
  direction = direction ? 1 : 0;
  if (p > q) {
    // Samples are t_q - t_p with p < q; the direction within the pair is the packet's own.
    std::swap(p, q);
    std::swap(tp, tq);
  }
  const DurationNs d = tq - tp;  // (within 64 bits: stamps lie within +-2^62)
  if (d > kMaxSample || d < -kMaxSample) return;  // before select_link: it relates the points
  const uint64_t key = uint64_t(p) << 32 | q;
  if (key != last_key_ && !select_link(p, q, key)) {
    ++samples_refused_;
    return;
  }
  Link& l = links_[last_link_];
  bool moved = l.all.add(d);
  if (PairRanges* pr = pair_ranges(l, pair)) moved |= pr->way[direction].add(d);
  if (moved) {
    const DurationNs before = l.cached.offset;
    l.cached = compute(l);
    if (l.in_tree && l.cached.offset != before) {
      ++version_;
      // The end of the link below the other moves, with everything below it.
      log_subtree(nodes_[l.p].parent == l.q && nodes_[l.p].link == last_link_ ? l.p : l.q);
    }
  }
}

bool ClockRelations::select_link(PointId p, PointId q, uint64_t key) {
  grow(q);
  if (links_.size() >= kMaxLinks && !link_index_.count(key) && root(p) == root(q)) return false;
  // try_emplace: emplace would allocate a node for every sample, to find the link is known.
  auto [it, inserted] = link_index_.try_emplace(key, uint32_t(links_.size()));
  last_key_ = key;
  last_link_ = it->second;
  // A link's first sample joins its points' components, which never split: only a new link
  // can relate two points that were not.
  if (!inserted) return true;
  Link& added = links_.emplace_back();
  added.p = p;
  added.q = q;
  std::fill(std::begin(added.pair_slot), std::end(added.pair_slot), kNoPair);
  PointId rp = root(p), rq = root(q);
  if (rp == rq) return true;
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
    if (next != kNoPoint) detach(cur);
    nodes_[cur].parent = prev;
    nodes_[cur].link = prev_link;
    if (prev != kNoPoint) attach(cur, prev);
    prev = cur;
    prev_link = next_link;
    cur = next;
  }
  // `prev` is the old root; sizes: the new root (small_end) carries the component's size.
  uint32_t small_size = nodes_[prev].size;
  nodes_[small_end].size = small_size;
  nodes_[small_end].parent = big_end;
  nodes_[small_end].link = last_link_;
  attach(small_end, big_end);
  nodes_[big_root].size += small_size;
  links_[last_link_].in_tree = true;
  ++version_;
  log_subtree(small_end);  // every point of the smaller component: a new root, new offsets
  return true;
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

void ClockRelations::note_stamp_noise(PointId p, DurationNs n) {
  if (p >= stamp_noise_.size()) stamp_noise_.resize(size_t(p) + 1, 0);
  if (n <= stamp_noise_[p]) return;
  stamp_noise_[p] = n;
  ++noise_version_;
}

std::optional<bool> ClockRelations::passes_first(PointId p, PointId q, uint64_t pair, int direction) const {
  const bool swapped = p > q;
  if (swapped) std::swap(p, q);
  auto it = link_index_.find(uint64_t(p) << 32 | q);
  if (it == link_index_.end()) return std::nullopt;
  direction = direction ? 1 : 0;
  for (const PairRanges& pr : links_[it->second].pairs) {
    if (pr.pair != pair) continue;
    const Range& mine = pr.way[direction];
    const Range& other = pr.way[1 - direction];
    if (!mine.n || !other.n || mine.mean() == other.mean()) return std::nullopt;
    const bool p_first = mine.mean() > other.mean();  // t_q - t_p larger: it travels p -> q
    return swapped ? !p_first : p_first;
  }
  return std::nullopt;
}

}  // namespace rdmatel
