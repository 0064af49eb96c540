// SPDX-License-Identifier: GPL-2.0-or-later
// How the clocks of observation points relate, learned from packets seen at two points. No
// metric uses this (each is a difference of stamps of one point); it tells how long a result
// must wait for another point's copies when that point's clock runs seconds ahead or behind.
//
// Each sample is one packet's first stamps at two points. For packets travelling p -> q the
// difference t_q - t_p is offset + delay, the other way offset - delay, so the offset lies
// between the two directions' closest values (NTP's minimum-delay filter), with half their
// distance as uncertainty. Stamps that stray by more than the delays (jittered software stamps,
// two ports of one switch) show it: a pair's two directions overlap, or two pairs' brackets miss
// each other. The closest samples are then the most strayed ones, and the offset is bracketed by
// the directions' means instead (offset + mean delay one way, offset - mean delay the other),
// which noise that averages out cannot move past it.
//
// Which way a packet travels between two points is not known beforehand (that is what a wrong
// clock hides), but the two directions of one pair of endpoints always travel opposite ways. So
// samples are kept per pair of endpoints (`pair`) and orientation within it (`direction`); each
// pair that went both ways brackets the offset, and the brackets of every pair intersect. Hosts
// and storage servers behind both points (traffic crossing both ways) do not mix the directions.
// Related points form components (union-find); a point's offset to its component's root maps its
// stamps into the root's clock.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <unordered_map>
#include <vector>

#include "rdmatel/types.h"

namespace rdmatel {

class ClockRelations {
 public:
  /// One packet seen first at `p` with stamp `tp` and at `q` with `tq`. `pair` names its pair of
  /// endpoints (any value both directions share) and `direction` (0 or 1) its orientation within
  /// the pair: packets of one pair with different directions travel opposite ways.
  void add_sample(PointId p, TimeNs tp, PointId q, TimeNs tq, int direction, uint64_t pair = 0);
  /// Endpoint pairs kept per pair of points; samples of further pairs count only in the
  /// one-direction fallback (bounded state whatever the traffic).
  static constexpr size_t kMaxPairsPerLink = 64;
  /// Pairs of points sampled, beyond those that relate two points not related yet (a spanning
  /// forest: fewer than the points). Bounded state: a packet seen at K points samples K^2 / 2
  /// pairs, and a file of 3,000 points took 3.5 GB in them; a fabric's points, fully meshed,
  /// are far fewer (180 points: 16,110 pairs).
  static constexpr size_t kMaxLinks = 16384;
  /// Samples not kept because their pair of points was new and kMaxLinks were taken.
  uint64_t samples_refused() const { return samples_refused_; }

  bool related(PointId p, PointId q) const { return p == q || root(p) == root(q); }
  /// Maps a stamp of point `from` into the clock of point `to` (related points only).
  TimeNs map(TimeNs t, PointId from, PointId to) const {
    return within_span(__int128(t) + to_root(from) - to_root(to));
  }
  /// The point whose clock is its component's reference, and the offset that maps a point's
  /// stamps into it: t_root = t + to_root(id).
  PointId root(PointId id) const;
  DurationNs to_root(PointId id) const;
  /// A stamp worked out from others (mapped, offsets summed), taken back to the stamps' span.
  static TimeNs within_span(__int128 t) { return TimeNs(std::clamp<__int128>(t, -kSpan, kSpan)); }
  /// Changes whenever root() or to_root() of some point may have: what keeps points in a
  /// common clock's order (PointProgress) orders them again.
  uint64_t version() const { return version_; }
  /// The points whose root() or to_root() changed, in order (duplicates included): a union logs
  /// the smaller component's points, an offset change in a tree the points below that link.
  /// Calls f(id) for each since `seen` and moves `seen` to the latest; false, calling nothing,
  /// when more changed than the log keeps (then every point may have). Re-keying every point
  /// at every change was quadratic in the points: 20,000 that all saw the same packets, joined
  /// one at a time, took minutes.
  template <typename F>
  bool changes_since(uint64_t& seen, F&& f) const {
    if (changes_ - seen > kChangeLog) {
      seen = changes_;
      return false;
    }
    for (; seen < changes_; ++seen) f(change_log_[seen & (kChangeLog - 1)]);
    return true;
  }
  /// Moves `seen` past every change so far (a reader that re-keys every point instead).
  void skip_changes(uint64_t& seen) const { seen = changes_; }

  /// The estimate between two directly sampled points: t_q ≈ t_p + offset.
  struct Estimate {
    DurationNs offset = 0;
    DurationNs uncertainty = 0;
    uint64_t samples = 0;
    bool both_directions = false;
    /// How far the stamps are seen to stray: the most by which one endpoint pair's two directions
    /// overlap (with exact stamps they cannot: one way is offset + delay, the other offset -
    /// delay). Stamp noise moves the brackets' ends too, so a stated uncertainty is at least this.
    DurationNs noise = 0;
    /// How far the offset may be off: the bracket's half width, and at least the noise.
    DurationNs within() const { return uncertainty > noise ? uncertainty : noise; }
  };
  std::optional<Estimate> estimate(PointId p, PointId q) const;
  /// Every directly sampled pair of points (p < q), in the order first sampled.
  struct PairEstimate {
    PointId p, q;
    Estimate estimate;
  };
  std::vector<PairEstimate> pairs() const;

  /// Whether packets of the endpoint pair `pair` travelling `direction` pass p before q, from the
  /// samples alone, whatever the clocks: their differences t_q - t_p average offset + delay when
  /// they travel p -> q and offset - delay the other way, so the direction with the larger
  /// average travels p -> q. Jitter averages out, and the samples that stray furthest (a resend
  /// seen first at the later point, queueing) stray away from the other direction. nullopt when
  /// the pair was not sampled both ways between the two points.
  std::optional<bool> passes_first(PointId p, PointId q, uint64_t pair, int direction) const;

  /// Point `p`'s stamps were seen to stray by `n` (two packets of one flow stamped `n` out of
  /// their order there, closer than a resend can follow): each estimate with `p` then takes its
  /// stamps for noisy (Estimate::noise), although its brackets may not show it.
  void note_stamp_noise(PointId p, DurationNs n);

 private:
  // The engine clamps stamps to about +-2^62. A sample further apart than 2^61 ns (73 years) is
  // no clock's offset (a sniffer whose clock starts at 1970 is 1.8e18 ns behind one in 2026):
  // left out, which keeps every difference of two samples within 64 bits. Offsets summed along
  // a chain of points, and stamps mapped by them, are taken back to the stamps' span.
  static constexpr DurationNs kMaxSample = DurationNs(1) << 61;
  static constexpr TimeNs kSpan = TimeNs(1) << 62;

  /// The smallest and largest difference t_q - t_p of some samples.
  struct Range {
    DurationNs lo = 0, hi = 0;
    uint64_t n = 0;
    DurationNs base = 0;  ///< the first sample: the sum is of differences to it (exact in a double)
    double sum = 0;
    double mean() const { return double(base) + sum / double(n); }
    /// True when `d` moved lo or hi (the first sample does).
    bool add(DurationNs d) {
      if (n++ == 0) {
        lo = hi = base = d;  // (the sum of differences to it stays 0)
        return true;
      }
      sum += double(d - base);
      if (d < lo) {
        lo = d;
        return true;
      }
      if (d > hi) {
        hi = d;
        return true;
      }
      return false;
    }
  };
  struct PairRanges {
    uint64_t pair;
    Range way[2];  ///< by direction within the pair
  };
  struct Link {
    PointId p, q;  ///< p < q; samples are t_q - t_p
    Range all;     ///< every sample
    std::vector<PairRanges> pairs;
    /// pairs' index by endpoint pair, open addressing on the pair's low bits (kNoPair: empty):
    /// every sample finds its pair in a probe or two, where a search of up to kMaxPairsPerLink
    /// pairs took ten steps on a storage network's few dozen endpoint pairs.
    uint8_t pair_slot[2 * kMaxPairsPerLink];
    /// compute()'s result, worked out again only when a range's ends moved (rarely once the
    /// closest samples are in): to_root() reads it for every packet that waits. With noisy stamps
    /// the estimate follows the means, which this lags a little: waiting needs no better.
    Estimate cached;
    bool in_tree = false;  ///< a parent link of the components' trees: its offset is in to_root()
    /// compute()'s result for every sample so far (estimate() and pairs(): what is reported).
    mutable Estimate reported;
    mutable uint64_t reported_n = 0;
    mutable uint64_t reported_noise = 0;  ///< noise_version_ when `reported` was worked out
  };
  Estimate compute(const Link& l) const;
  Estimate estimate_of(const Link& l) const;
  void grow(PointId id);

  struct Node {
    PointId parent = kNoPoint;  ///< kNoPoint: a root
    uint32_t link = 0;          ///< the link to the parent
    uint32_t size = 1;
    /// Its children in the tree (a list through their siblings): the points an offset change
    /// of its link moves are it and those below.
    PointId first_child = kNoPoint, next_sibling = kNoPoint, prev_sibling = kNoPoint;
  };
  void attach(PointId child, PointId parent);
  void detach(PointId child);
  /// Logs `top` and every point below it (changes_since); past kChangeLog, marks the log full.
  void log_subtree(PointId top);
  static constexpr size_t kChangeLog = 8192;  // a power of two
  std::vector<PointId> change_log_;           ///< a ring, made at the first change
  uint64_t changes_ = 0;
  std::vector<PointId> walk_;                 ///< log_subtree's
  mutable std::vector<Node> nodes_;
  std::vector<Link> links_;
  std::unordered_map<uint64_t, uint32_t> link_index_;  ///< (p << 32 | q) -> links_
  /// The link of the latest sample (its key, kNoLink: none): samples come from one or two pairs
  /// of points mostly, and the map was looked up for every one.
  uint64_t last_key_ = kNoLink;
  uint32_t last_link_ = 0;
  static constexpr uint64_t kNoLink = ~uint64_t(0);
  static constexpr uint8_t kNoPair = 0xFF;
  /// The pair's ranges in `l` (made while there are fewer than kMaxPairsPerLink), or nullptr.
  static PairRanges* pair_ranges(Link& l, uint64_t pair);
  /// Makes the link of p < q (key p << 32 | q) the latest, making it first if it is new (and
  /// joining the points' components). False when it is new, beyond kMaxLinks and its points are
  /// related already: the sample is not kept.
  bool select_link(PointId p, PointId q, uint64_t key);
  uint64_t samples_refused_ = 0;
  uint64_t version_ = 0;
  std::vector<DurationNs> stamp_noise_;  ///< by point: the largest inversion of its stamps seen
  uint64_t noise_version_ = 0;           ///< changes with stamp_noise_
};

}  // namespace rdmatel
