// SPDX-License-Identifier: GPL-2.0-or-later
// The pure part of path tracking: given every sighting of one packet identity (flow, PSN,
// opcode, payload length, AETH, IPv4 ID) at the observation points, split them into copies (the
// original and each retransmission or duplicate is a copy of its own) and order each copy's
// sightings along the flow's path. No state, no clocks of its own: the caller gives each
// sighting its stamp on a common reference clock (`ref`), as well as it knows it.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "engine/src/util/function_ref.h"
#include "engine/src/util/small_vector.h"
#include "rdmatel/types.h"

namespace rdmatel::paths {

struct Sighting {
  PointId point = kNoPoint;
  TimeNs ts = 0;   ///< the point's own stamp
  TimeNs ref = 0;  ///< the stamp on the reference clock (explicit offsets or clock relations)
  uint64_t frame = 0;
  DurationNs slack = 0;  ///< how far `ref` may be off (the uncertainty of the offset used)
  /// The point whose clock this one's offset was reached through (each point's offset to the
  /// reference is a chain of pair estimates); kNoPoint for the reference and unrelated points.
  /// Two sightings' reference stamps are as far off from each other as the chain between them:
  /// two ports of a leaf reached one through the other relate within ns, though each is µs
  /// uncertain against the reference.
  PointId via = kNoPoint;
};

/// How far apart two sightings' reference stamps may be off, relative to each other: the slack
/// of the chain between their points (through the sightings of `all`, which hold every point
/// of the chains).
DurationNs pair_slack(std::span<const Sighting> all, const Sighting& a, const Sighting& b);

/// Learns a flow's point order from one identity's sightings: the points it saw, ordered by
/// their first sighting's reference stamp, are merged into `order`. Points already in `order`
/// keep their place (a flow's order is decided once, so that hops never flip from packet to
/// packet); a new point goes after the known point that precedes it in this packet's order.
void learn_order(std::vector<PointId>& order, std::span<const Sighting> sightings);

/// A flow's first packets seen at several points vote on its path order: per pair of points,
/// how many passed the one before the other (first sightings, reference stamps). One packet
/// alone can mislead where two points are closer than the stamps' noise (two ports of one
/// switch, a few hundred ns apart, with jittered stamps); the majority does not.
class PathVotes {
 public:
  static constexpr size_t kMaxPoints = 8;  ///< points beyond these in a flow's first packets do not vote
  /// Adds one packet's sightings; false when they cover one point only (no vote).
  bool add(std::span<const Sighting> sightings);
  size_t voters() const { return voters_; }
  /// The points ordered by how many others they precede by majority (ties: first seen first).
  std::vector<PointId> order() const;
  /// Where `first(a, b)` (std::optional<bool>) knows whether the flow passes a before b some
  /// other way (the packets that crossed both points both ways, core/clock.h), that decides the
  /// pair, not the votes.
  template <typename First>
  void settle_pairs(First&& first) {
    for (size_t a = 0; a < points_.size(); ++a)
      for (size_t b = a + 1; b < points_.size(); ++b)
        if (const std::optional<bool> f = first(points_[a], points_[b])) {
          before_[a][b] = *f ? 1 : 0;
          before_[b][a] = *f ? 0 : 1;
        }
  }

 private:
  SmallVector<PointId, kMaxPoints> points_;  ///< in the order first seen (never more: inline)
  uint16_t before_[kMaxPoints][kMaxPoints] = {};  ///< [a][b]: packets that passed a before b
  size_t voters_ = 0;
};

/// One copy of a packet: its sightings in path order (at most one per point).
using Copy = std::vector<Sighting>;

/// The hop's usual delay from `from` to `to`, where known: referred to, not copied (a
/// std::function copies a lambda that captures more than two references onto the heap); an empty
/// one where no hop's delay is known.
using ExpectedDelayRef = FunctionRef<std::optional<DurationNs>(PointId from, PointId to)>;

/// Splits the sightings of one identity into copies (CopyMatcher::match). `order` holds every sighting's point
/// (learn_order first). Points are taken in path order; the first point's sightings each start
/// a copy; a later point's sightings, in stamp order, each join the copy not yet seen there
/// that passed the earlier points last before it on the reference clock (the nearest earlier
/// copy; "before" within the sighting's slack), or else start a copy of their own (the earlier
/// points missed it: lost before them, or passed before their capture began). Where the hop's
/// usual delay is known (`expected(from, to)`, e.g. its average so far), the copy whose stamp
/// plus that delay lies nearest is taken instead of the latest: copies of a packet resent a
/// few µs apart keep their order. Where a point has as many sightings as there are copies, all
/// last seen at one earlier point, they pair in the order they passed each point: by stamp, and
/// by frame number within a burst of copies closer than 2 µs (no copy overtakes another on a
/// link; identical packets sent back to back are closer together than the delays vary, and than
/// software stamps stray).
///
/// Its working buffers are kept from one identity to the next (cleared, their capacity kept): a packet seen more than once at a point, or at a point new to its flow, is
/// matched, and each call's own vectors (a dozen allocations) were most of the engine's. A buffer
/// that grew past a bound for one storm of copies is freed on the next call, not kept for the run.
class CopyMatcher {
 public:
  /// The copies, valid until the next call.
  std::span<const Copy> match(std::span<const Sighting> sightings, std::span<const PointId> order,
                              ExpectedDelayRef expected = {});

 private:
  /// One step of align_with_previous's alignment.
  struct Cell {
    uint32_t pairs = 0;
    double misfit = 0;  ///< squared ns: a double holds them (clocks seconds apart) without overflow
    uint8_t from = 0;   // 0 start, 1 skip a copy, 2 skip a sighting, 3 pair
  };
  bool match_in_order(std::span<const Sighting> here, std::span<const PointId> order);
  bool align_with_previous(std::span<const Sighting> all, std::span<const Sighting> here, PointId prev_point,
                           ExpectedDelayRef expected);
  std::span<Copy> copies() { return {copies_.data(), used_}; }
  /// A new copy, empty: a kept one where there is one.
  Copy& add_copy();
  /// Frees the buffers that grew past their bound (one identity's storm of copies).
  void trim();

  std::vector<Copy> copies_;  ///< this call's: the first used_; the others kept for their storage
  size_t used_ = 0;
  std::vector<Sighting> at_, arrived_;  ///< one point's sightings, as they are and in capture order
  std::vector<size_t> cand_, idx_, in_order_;  ///< copies and sightings in the order they passed
  std::vector<uint8_t> placed_;                ///< by sighting of at_: aligned (align_with_previous)
  std::vector<Cell> dp_;
};

}  // namespace rdmatel::paths
