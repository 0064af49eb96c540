// SPDX-License-Identifier: GPL-2.0-or-later
#include "engine/metrics/paths/copy_matcher.h"

#include <algorithm>
#include <limits>

namespace rdmatel::paths {
namespace {

// Sums of stamps, offsets, slacks and delays, in 128 bits: a hostile file's reach the ends of 64
// bits, and the sums of two or three of them beyond (fuzz_engine).
using Wide = __int128;
DurationNs narrow(Wide v) {
  return DurationNs(std::clamp<Wide>(v, std::numeric_limits<DurationNs>::min(), std::numeric_limits<DurationNs>::max()));
}

size_t index_of(std::span<const PointId> order, PointId p) {
  auto it = std::find(order.begin(), order.end(), p);
  return it == order.end() ? order.size() : size_t(it - order.begin());
}

// std::stable_sort, without its temporary buffer (an allocation on every call) for the handful
// of elements sorted here at a time: an insertion sort, stable too, so the order is the same.
template <typename It, typename Less>
void stable_sort_small(It first, It last, Less less) {
  if (last - first > 32) return std::stable_sort(first, last, less);
  if (last - first < 2) return;
  for (It i = first + 1; i != last; ++i) {
    auto x = std::move(*i);
    It j = i;
    for (; j != first && less(x, *(j - 1)); --j) *j = std::move(*(j - 1));
    *j = std::move(x);
  }
}

// A packet's first sightings: one per point, a path's few points inline.
using FirstSightings = SmallVector<Sighting, PathVotes::kMaxPoints>;

// The first sighting at each point (sightings of a point come in its stamp order, but take the
// least reference stamp anyway), in reference-stamp order.
void first_sightings(std::span<const Sighting> sightings, FirstSightings& first) {
  for (const Sighting& s : sightings) {
    auto it = std::find_if(first.begin(), first.end(), [&](const Sighting& f) { return f.point == s.point; });
    if (it == first.end()) first.push_back(s);
    else if (s.ref < it->ref) *it = s;
  }
  stable_sort_small(first.begin(), first.end(), [](const Sighting& a, const Sighting& b) { return a.ref < b.ref; });
}

// One point's sightings of one identity in the order they passed it. Copies further apart than
// kBurst (a resend: a round trip at least) by stamp order; a burst of copies closer than that
// (identical ACKs sent back to back) by frame number: they belong to one flow, which a capturing
// NIC hands to one receive queue, so a point records them in the order they passed, while
// software stamps stray by more than such copies are apart (four repeated ACKs 150-350 ns apart,
// stamped +-250 ns). Not frame numbers alone: ring files given together are merged by stamp, and
// their frames keep a point's order only within each file.
constexpr DurationNs kBurst = 2000;
template <typename T, typename Get>
void capture_order(std::vector<T>& v, Get get) {
  stable_sort_small(v.begin(), v.end(), [&](const T& a, const T& b) { return get(a).ts < get(b).ts; });
  for (size_t i = 0; i < v.size();) {
    size_t j = i + 1;
    while (j < v.size() && get(v[j]).ts - get(v[j - 1]).ts < kBurst) ++j;
    stable_sort_small(v.begin() + long(i), v.begin() + long(j),
                      [&](const T& a, const T& b) { return get(a).frame < get(b).frame; });
    i = j;
  }
}

}  // namespace

// As many sightings here as copies last seen at the point before: every copy went on, and
// packets of one flow do not overtake each other on a link, so they pair in each point's own
// order (capture_order): no two clocks are compared. The copies may be closer together than the
// hop's delay varies (a responder's ACK repeated back to back, 100 ns apart, across 800 ns of
// delays: matching each by its nearest delay could cross them), or than the stamps' noise (one
// copy seen at two ports of a switch 300 ns apart, stamped +-250 ns, second port first). False
// (nothing matched) when the copies were not all last seen at one earlier point.
bool CopyMatcher::match_in_order(std::span<const Sighting> here, std::span<const PointId> order) {
  const std::span<Copy> copies = this->copies();
  // Only where every copy so far was last seen at one same earlier point (a copy that stopped
  // further back could be any of them: the greedy match decides then).
  if (copies.empty() || copies.size() != here.size()) return false;
  const PointId from = copies.front().back().point;
  for (const Copy& c : copies)
    if (c.back().point != from) return false;
  const PointId p = here.front().point;
  if (index_of(order, from) >= index_of(order, p)) return false;
  in_order_.resize(copies.size());
  for (size_t c = 0; c < copies.size(); ++c) in_order_[c] = c;
  capture_order(in_order_, [&](size_t c) -> const Sighting& { return copies[c].back(); });
  arrived_.assign(here.begin(), here.end());
  capture_order(arrived_, [](const Sighting& x) -> const Sighting& { return x; });
  for (size_t k = 0; k < arrived_.size(); ++k) copies[in_order_[k]].push_back(arrived_[k]);
  return true;
}

void learn_order(std::vector<PointId>& order, std::span<const Sighting> sightings) {
  FirstSightings first;
  first_sightings(sightings, first);
  size_t pos = 0;  // where the next new point goes: after the last known point of this packet
  bool any_known = false;
  for (const Sighting& s : first) {
    size_t i = index_of(order, s.point);
    if (i < order.size()) {
      if (!any_known || i >= pos) pos = i + 1;  // a known point earlier than expected keeps its place
      any_known = true;
      continue;
    }
    if (!any_known) {
      // Before every known point of this packet: find the first of them and go just before it.
      size_t next = order.size();
      for (const Sighting& t : first) {
        size_t j = index_of(order, t.point);
        if (j < order.size()) {
          next = j;
          break;
        }
      }
      pos = next;
    }
    order.insert(order.begin() + long(pos), s.point);
    ++pos;
    any_known = true;
  }
}

bool PathVotes::add(std::span<const Sighting> sightings) {
  FirstSightings first;
  first_sightings(sightings, first);
  if (first.size() < 2) return false;
  size_t idx[kMaxPoints];
  size_t n = 0;
  for (const Sighting& f : first) {
    size_t i = index_of({points_.begin(), points_.size()}, f.point);
    if (i == points_.size()) {
      if (points_.size() == kMaxPoints) continue;
      points_.push_back(f.point);
    }
    if (n < kMaxPoints) idx[n++] = i;
  }
  for (size_t a = 0; a < n; ++a)
    for (size_t b = a + 1; b < n; ++b)
      if (before_[idx[a]][idx[b]] < UINT16_MAX) ++before_[idx[a]][idx[b]];
  ++voters_;
  return true;
}

std::vector<PointId> PathVotes::order() const {
  const size_t n = points_.size();
  struct Wins {
    size_t wins, point;  ///< point: its first-seen index
  } wins[kMaxPoints];
  for (size_t a = 0; a < n; ++a) {
    size_t w = 0;
    for (size_t b = 0; b < n; ++b)
      if (b != a && before_[a][b] > before_[b][a]) ++w;
    wins[a] = Wins{w, a};
  }
  stable_sort_small(wins, wins + n, [](const Wins& x, const Wins& y) { return x.wins > y.wins; });
  std::vector<PointId> out;
  out.reserve(n);
  for (size_t i = 0; i < n; ++i) out.push_back(points_[wins[i].point]);
  return out;
}

DurationNs pair_slack(std::span<const Sighting> all, const Sighting& a, const Sighting& b) {
  if (a.point == b.point) return 0;
  auto up = [&](PointId p) -> const Sighting* {
    for (const Sighting& x : all)
      if (x.point == p) return &x;
    return nullptr;
  };
  // The chains are short (a handful of points); bounded walks all the same.
  const size_t limit = all.size() + 1;
  const Sighting* x = &a;
  for (size_t i = 0; x && i < limit; ++i, x = x->via == kNoPoint ? nullptr : up(x->via)) {
    const Sighting* y = &b;
    for (size_t j = 0; y && j < limit; ++j, y = y->via == kNoPoint ? nullptr : up(y->via))
      if (y->point == x->point) return narrow(Wide(a.slack) + b.slack - 2 * Wide(x->slack));  // their common ancestor
  }
  return narrow(Wide(a.slack) + b.slack);  // no common chain: each as uncertain as it is
}

// Whether sighting `s` can be the copy last seen as `prev`, and how well it fits: the same test
// and measure as the greedy match below (nullopt: it passed the earlier point after this one).
std::optional<DurationNs> fit(std::span<const Sighting> all, const Sighting& prev, const Sighting& s,
                              std::optional<DurationNs> d) {
  const Wide slack = pair_slack(all, s, prev), prev_ref = prev.ref, ref = s.ref;
  if (!d) {
    if (prev_ref > ref + slack) return std::nullopt;
    return narrow(std::max<Wide>(0, ref - prev_ref));  // the latest is the nearest
  }
  const Wide delay = *d, miss = prev_ref + delay - ref;
  if (miss > (delay < 0 ? -delay : delay) + slack) return std::nullopt;
  return narrow(miss < 0 ? -miss : miss);
}

// The copies last seen at the point just before `here`'s and the sightings here, both in the
// order they passed (capture_order), matched so that none overtakes another on the link: an
// order-preserving alignment with as many pairs as fit, then the smallest sum of squared misfits.
// A packet resent in bursts (a NAK repeated 5 to 8 times 100 ns apart, hundreds of times over
// 10 ms, some copies lost) pairs burst by burst; matched one sighting at a time, the nearest delay
// crossed copies of a burst and left one lost and one unmatched. Squared, not summed as they are:
// which copy of a burst was lost is told only by the delays, and a copy's delay strays from the
// usual by what the hop's queueing and the stamps' noise add, a few hundred ns; pairing a copy
// with the sighting of the one after the lost one leaves one delay far off, where the right
// pairs leave a few a little off. Summed as they are, misses of 765 and 66 ns beat 489 and 547:
// four identical ACKs (IPv6: no IP ID) within 2 us at a leaf's uplink, the second lost before the
// spine, gave the hop a delay of 3.26 us (truth 2.86 at most). Marks the sightings it placed;
// false when it did not run (no such copy, or too many to align).
bool CopyMatcher::align_with_previous(std::span<const Sighting> all, std::span<const Sighting> here,
                                      PointId prev_point, ExpectedDelayRef expected) {
  const std::span<Copy> copies = this->copies();
  std::vector<size_t>& cand = cand_;
  cand.clear();
  for (size_t c = 0; c < copies.size(); ++c)
    if (copies[c].back().point == prev_point) cand.push_back(c);
  const size_t n = cand.size(), m = here.size();
  constexpr size_t kMaxCells = size_t(1) << 18;  // beyond it (a storm of storms) the greedy match alone
  if (n == 0 || (n + 1) * (m + 1) > kMaxCells) return false;
  capture_order(cand, [&](size_t c) -> const Sighting& { return copies[c].back(); });
  std::vector<size_t>& idx = idx_;
  idx.resize(m);
  for (size_t k = 0; k < m; ++k) idx[k] = k;
  capture_order(idx, [&](size_t k) -> const Sighting& { return here[k]; });
  const std::optional<DurationNs> d = expected ? expected(prev_point, here.front().point) : std::nullopt;
  auto better = [](const Cell& x, const Cell& y) { return x.pairs != y.pairs ? x.pairs > y.pairs : x.misfit < y.misfit; };
  dp_.assign((n + 1) * (m + 1), Cell{});
  auto at = [&](size_t i, size_t j) -> Cell& { return dp_[i * (m + 1) + j]; };
  for (size_t i = 0; i <= n; ++i)
    for (size_t j = 0; j <= m; ++j) {
      if (i == 0 && j == 0) continue;
      Cell best;
      bool any = false;
      if (i > 0) best = at(i - 1, j), best.from = 1, any = true;
      if (j > 0) {
        Cell c = at(i, j - 1);
        c.from = 2;
        if (!any || better(c, best)) best = c, any = true;
      }
      if (i > 0 && j > 0)
        if (const std::optional<DurationNs> f = fit(all, copies[cand[i - 1]].back(), here[idx[j - 1]], d)) {
          Cell c = at(i - 1, j - 1);
          ++c.pairs;
          c.misfit += double(*f) * double(*f);
          c.from = 3;
          if (better(c, best)) best = c;
        }
      at(i, j) = best;
    }
  for (size_t i = n, j = m; i > 0 || j > 0;) {
    const uint8_t from = at(i, j).from;
    if (from == 3) {
      copies[cand[i - 1]].push_back(here[idx[j - 1]]);
      placed_[idx[j - 1]] = 1;
      --i, --j;
    } else if (from == 1) {
      --i;
    } else {
      --j;
    }
  }
  return true;
}

Copy& CopyMatcher::add_copy() {
  if (used_ == copies_.size()) copies_.emplace_back();
  Copy& c = copies_[used_++];
  c.clear();
  return c;
}

void CopyMatcher::trim() {
  // What one identity's thousands of copies (a storm of resends) needed is not kept for the run;
  // the usual few copies' buffers are. (A copy holds one sighting per point at most.)
  constexpr size_t kKeep = 256, kKeepCells = 4096;
  auto free_beyond = [](auto& v, size_t keep) {
    if (v.capacity() > keep) std::remove_reference_t<decltype(v)>().swap(v);
  };
  if (copies_.capacity() > kKeep) {
    copies_.resize(std::min(copies_.size(), kKeep));
    copies_.shrink_to_fit();
  }
  free_beyond(at_, kKeep);
  free_beyond(arrived_, kKeep);
  free_beyond(cand_, kKeep);
  free_beyond(idx_, kKeep);
  free_beyond(in_order_, kKeep);
  free_beyond(placed_, kKeep);
  free_beyond(dp_, kKeepCells);
}

std::span<const Copy> CopyMatcher::match(std::span<const Sighting> sightings, std::span<const PointId> order,
                                         ExpectedDelayRef expected) {
  trim();
  used_ = 0;
  std::vector<Sighting>& at = at_;
  for (PointId p : order) {
    at.clear();
    for (const Sighting& s : sightings)
      if (s.point == p) at.push_back(s);
    if (at.empty()) continue;
    stable_sort_small(at.begin(), at.end(), [](const Sighting& a, const Sighting& b) { return a.ts < b.ts; });
    if (match_in_order(at, order)) continue;
    const size_t here_pos = index_of(order, p);
    const PointId prev_point = here_pos > 0 ? order[here_pos - 1] : kNoPoint;
    placed_.assign(at.size(), 0);
    const bool aligned = prev_point != kNoPoint && align_with_previous(sightings, at, prev_point, expected);
    for (size_t k = 0; k < at.size(); ++k) {
      if (placed_[k]) continue;
      const Sighting& s = at[k];
      // Candidates: copies not seen here yet that passed their last point before this sighting.
      // A copy last seen at the point just before this one is preferred to one that stopped
      // earlier (lost, or missed by a point); among those last seen at the same point, the one
      // nearest the hop's usual delay, or else the latest.
      size_t best = used_, best_pos = 0;
      DurationNs best_miss = 0;
      for (size_t c = 0; c < used_; ++c) {
        const Sighting& prev = copies_[c].back();
        if (prev.point == p) continue;  // already seen here (points come in path order)
        if (aligned && prev.point == prev_point) continue;  // the alignment left it: lost before here
        const size_t pos = index_of(order, prev.point);
        std::optional<DurationNs> d = expected ? expected(prev.point, p) : std::nullopt;
        // Passed the earlier point after this one: not its copy (fit). That compares two points'
        // clocks, which may be apart by more than the hop (no offset estimated yet, or none at
        // all without NVMe traffic); where the hop's delay is known, it is on those same clocks:
        // not its copy when seen here earlier than that delay says by more than the delay itself
        // (with clocks that agree, the same test).
        const std::optional<DurationNs> f = fit(sightings, prev, s, d);
        if (!f) continue;
        const DurationNs miss = *f;
        if (best == used_ || pos > best_pos || (pos == best_pos && miss < best_miss)) {
          best = c;
          best_pos = pos;
          best_miss = miss;
        }
      }
      if (best == used_) add_copy().push_back(s);
      else copies_[best].push_back(s);
    }
  }
  return {copies_.data(), used_};
}

}  // namespace rdmatel::paths
