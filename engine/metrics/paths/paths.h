// SPDX-License-Identifier: GPL-2.0-or-later
// paths: the same packet seen at several observation points (SPEC §6). Each RoCE packet's
// sightings are gathered by identity (flow, PSN, opcode, payload length, AETH, IPv4 ID) until every
// point has had --path-timeout to show its copy, then split into copies (retransmissions and
// duplicates are copies of their own, copy_matcher.h) and laid along the flow's path: each hop
// A -> B gives a delay, a copy seen at A whose path stops there is lost on A -> B. Per flow and
// hop it counts packets and losses and keeps the delays' min / avg / max.
//
// Unlike every other metric, a hop delay compares the clocks of two points: it is corrected by
// the points' --clock-offset where one is given and reported raw otherwise. The clock relations
// of the core (core/clock.*), which this component feeds from every packet seen at two points,
// only order points and match copies; they never change a delay.
//
// Cost: one hash-map slot per packet identity while it waits; settling allocates per flow (its
// hops, its first packets parked until its path is decided), not per packet: the common case, one
// sighting per point of a known path, is laid as it is, the others are matched in buffers kept
// from packet to packet. Nothing with a single point.
#pragma once

#include <algorithm>
#include <cstdint>
#include <deque>
#include <limits>
#include <map>
#include <memory>
#include <unordered_map>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "engine/metrics/paths/copy_matcher.h"
#include "engine/metrics/paths/path_inference.h"
#include "engine/metrics/paths/seq_index.h"
#include "engine/metrics/paths/seq_ring.h"
#include "engine/metrics/paths/tag_filter.h"
#include "engine/src/core/component.h"
#include "engine/src/core/point_progress.h"
#include "engine/src/util/small_vector.h"
#include "rdmatel/records.h"

namespace rdmatel::paths {

extern const ComponentSpec kSpec;

class Paths final : public Component {
 public:
  explicit Paths(Ctx&);
  void on_packet(const Packet& p, Ctx& ctx) override;
  void on_advance(PointId, Ctx& ctx) override;
  void finish(Ctx& ctx) override;

 private:
  struct Identity {
    FlowId flow = kNoFlow;
    uint32_t psn = 0;
    uint32_t payload_len = 0;
    uint32_t aeth = 0;  ///< syndrome << 24 | MSN of an ACK or NAK: tells ACKs of one PSN apart
    uint16_t ip_id = 0;
    uint8_t opcode = 0;
    friend bool operator==(const Identity&, const Identity&) = default;
  };
  /// Worked out once per packet (its SeqIndex::tag stays with the entry for what follows).
  static uint64_t hash(const Identity& k) {
    const uint64_t a = uint64_t(k.flow) << 32 | k.psn;
    const uint64_t b = (uint64_t(k.payload_len) << 24 | uint64_t(k.ip_id) << 8 | k.opcode) ^ uint64_t(k.aeth) << 40;
    return hash_mix(a ^ b * 0x9E3779B97F4A7C15ULL);
  }
  /// One sighting as it waits (the reference stamp is worked out when it is settled).
  struct Seen {
    PointId point;
    TimeNs ts;
    uint64_t frame;
  };
  /// A packet waiting for its copies: its sightings so far. It is due once every point has
  /// passed `due` (on its first sighting's point's clock, see bound_for).
  struct Entry {
    Identity id;
    uint32_t tag = 0;  ///< SeqIndex::tag of its hash: worked out once, when it came
    uint16_t points = 0;  ///< the distinct points of `seen` (at most kMaxPathPoints)
    /// Its latest sighting at the first one's point + the timeout, at most kMaxWaits timeouts
    /// after the first (a packet resent again and again keeps its copies together).
    TimeNs due = 0;
    SmallVector<Seen, 3> seen;
  };
  struct Hop {
    PointId from, to;
    PathRecord* record;  ///< in records_
  };
  /// Packets at one point, counted (not kept one by one).
  struct Tally {
    PointId point = kNoPoint;
    uint64_t packets = 0;
    TimeNs first_ns = 0, last_ns = 0;
    uint64_t first_frame = 0;
    /// Counts in `more`, of the same point.
    void merge(const Tally& more) {
      if (more.first_ns < first_ns) {
        first_ns = more.first_ns;
        first_frame = more.first_frame;
      }
      last_ns = std::max(last_ns, more.last_ns);
      packets += more.packets;
    }
  };
  /// Adds to the tally of the same point (or a new one).
  static void add_to(std::vector<Tally>& tallies, const Tally& more) {
    for (Tally& t : tallies)
      if (t.point == more.point) return t.merge(more);
    tallies.push_back(more);
  }
  /// One packet. Its own loop: settle inlines it for every copy that ends at its path's last
  /// point, where calling the other cost some 20 instructions per copy.
  static void add_to(std::vector<Tally>& tallies, const Sighting& x) {
    const Tally one{x.point, 1, x.ts, x.ts, x.frame};
    for (Tally& t : tallies)
      if (t.point == x.point) return t.merge(one);
    tallies.push_back(one);
  }
  /// The newest data PSN of a flow at a point and its stamp (note_stamp_order).
  struct Newest {
    PointId point;
    uint32_t psn;
    TimeNs ts;
  };
  struct FlowState {
    std::vector<PointId> order;  ///< the flow's points in path order
    std::vector<Newest> newest;  ///< by point that saw its data packets
    std::vector<Hop> hops;
    /// The flow's packets until its path is decided (those seen at one point only wait too:
    /// whether they were lost after it is told by the path).
    std::vector<std::vector<Sighting>> parked;
    /// The last sightings of its first copies that ended at the last point of its path known
    /// then: lost after it if a later packet shows the path goes on (the flow's first packet
    /// lost past the points it had shown). Given up (and freed) once kMaxParked are kept.
    std::vector<Sighting> ended;
    bool ended_done = false;
    /// The path is decided by the votes of the flow's first kVoters packets seen at several
    /// points (their copies wait, parked, until then); freed once decided.
    std::unique_ptr<PathVotes> votes;
    bool decided = false;
    /// No packet of it reached a second point: its path is inferred (path_inference.h).
    bool inferred = false;
    /// Its packets at one point beyond the kMaxParked parked, while its path is unknown: counted
    /// lost on the hop after their point if a path is inferred.
    std::vector<Tally> unplaced;
    /// The copies that ended at each point while it was the last of the path: lost after it if
    /// the flow never reached the point next to its destination (extend).
    std::vector<Tally> ends;
    /// endpoint_pair of its key, worked out on its first packet seen at two points
    /// (clock_direction -1 until then).
    uint64_t clock_pair = 0;
    int clock_direction = -1;
  };
  static constexpr size_t kMaxParked = 64;
  /// A packet resent again and again (go-back-N under heavy loss) waits for its copies a timeout
  /// after its latest sighting, up to this many timeouts after its first.
  static constexpr int64_t kMaxWaits = 10;
  /// A packet's first sighting at a point relates that point's clock to those of the first
  /// kRelatedPoints points that saw it (every one, on any real path): a packet seen at K points
  /// related K^2 / 2 pairs, K^3 / 6 steps, and 2,000 points of 50 packets took 40 s.
  static constexpr size_t kRelatedPoints = 16;
  /// A packet's sightings at further points are not kept: no fabric path crosses so many, and
  /// laying a packet's K points on its path takes K^2 steps (20,000 points, each seeing the same
  /// 12 packets: 37 s).
  static constexpr uint16_t kMaxPathPoints = 64;
  static constexpr size_t kVoters = 7;
  /// Lays one identity's sightings (reference stamps set) along the flow's decided path (two
  /// points at least), learning new points of it.
  void lay(FlowId flow, std::span<const Sighting> s, Ctx& ctx);
  /// Decides the flow's path from its votes and lays the packets parked until then.
  void decide(FlowId flow, Ctx& ctx);
  /// A flow seen at one point only: infers its path from the decided ones and lays its parked
  /// packets (lost after the point they were seen at); false when nothing tells the path or the
  /// point is not on it before its end.
  bool infer(FlowId flow, Ctx& ctx);
  /// Whether the flow's receiver acknowledged it (its queue pair's other direction carried a
  /// positive ACK or a READ response): then its packets got through, if not where the capture
  /// saw them (two hosts on one switch), and nothing is inferred.
  bool answered(FlowId flow, const Ctx& ctx) const;
  /// A decided flow that never reached the point next to its destination, though others show
  /// the way there: its copies that ended at its last point are lost on the hop after it.
  void extend(FlowId flow, Ctx& ctx);
  /// Whether point `next` was capturing by `ts` (point p's clock): a packet of p before then is
  /// not known lost on p -> next (sniffers started at different times).
  bool started_by(PointId p, PointId next, TimeNs ts, const Ctx& ctx);
  /// Whether point `next` was capturing when point p saw a packet at `ts` (p's clock): not in a
  /// gap the session told (a ring file missing: kNo, counted in uncaptured_); outside the span of
  /// its packets so far (a sniffer started later or stopped earlier, or no copy came its way
  /// yet): decided at the end (decide_outside).
  enum class Capture { kYes, kNo, kOutside };
  Capture capturing(PointId p, PointId next, TimeNs ts, const Ctx& ctx);
  /// A copy first seen at a point after the first of its flow's path: the points before it on the
  /// path did not record it, though it passed them.
  void note_missed(const FlowState& fs, size_t at, PointId first, TimeNs ts);
  void decide_outside(Ctx& ctx);
  void count_lost_now(FlowId flow, const Sighting& last, PointId next, Ctx& ctx);
  /// Counts `t` lost on the inferred hop p -> next.
  void count_lost_inferred(FlowId flow, const Tally& t, PointId next, Ctx& ctx);

  /// A stamp `ts` of point `q` on point `home`'s clock, for waiting only: through the
  /// --clock-offsets when any is given, else the core's clock relations; between points not
  /// related yet, see bound_for.
  TimeNs on_clock_of(PointId home, PointId q, TimeNs ts, const Ctx& ctx);
  /// How far point q's clock runs ahead of point h's, for ordering points and matching copies,
  /// and how far that may be off: from --clock-offset when any is given, as far off as the core's
  /// estimate for the pair is uncertain plus how far the two disagree (a given offset is exact,
  /// the stamps are not: they stray as without one); else the core's estimate for the pair once
  /// packets went both ways between them and it differs from 0 by more than its uncertainty (one
  /// direction only, it still holds the delay); else 0.
  struct Relative {
    DurationNs offset = 0, slack = 0;
    PointId via = kNoPoint;  ///< chain_offsets: the point it was reached through
  };
  Relative relative_offset(PointId h, PointId q, const Ctx& ctx);
  /// How far point q's clock runs ahead of point h's by the --clock-offsets (0 for a point not named).
  DurationNs given_offset(PointId h, PointId q, const Ctx& ctx);
  struct PointOffset {
    PointId point;
    Relative rel;
  };
  using PointOffsets = SmallVector<PointOffset, 8>;  ///< a packet's few points, inline
  /// The offsets of the points of a packet's sightings relative to `home`, each along the chain
  /// of pair estimates that adds the least slack (with --clock-offset too: the given offsets add
  /// up to the direct one along any chain, while the slack is the chain's).
  PointOffsets chain_offsets(PointId home, std::span<const Seen> seen, const Ctx& ctx);
  std::optional<DurationNs> explicit_offset(PointId point, const Ctx& ctx);
  /// --estimate-offsets: what to add to a raw delay of the hop, from the copies that crossed it
  /// both ways so far; nullopt when off, given by --clock-offset, or not seen both ways.
  std::optional<DurationNs> estimated_correction(const PathRecord& r) const;
  void apply_estimate(PathRecord& r) const;
  /// A packet's first sighting at a point, of a packet seen elsewhere already, relates the
  /// two points' clocks (the core's ClockRelations: how long results wait for a point, how
  /// copies are matched; never a metric).
  /// `e` has no sighting at p's point yet.
  void relate_clocks(FlowState& fs, const Entry& e, const Packet& p, Ctx& ctx);
  /// Whether p's identity tells it from the flow's other packets (not a CNP without an IPv4 ID),
  /// so that its first sightings at two points are one packet's and may relate their clocks.
  static bool names_one_packet(const Packet& p);
  /// endpoint_pair of the flow's key (cached in its state).
  static std::pair<uint64_t, int> clock_pair(FlowState& fs, FlowId flow, const Ctx& ctx);
  /// The latest time on `home`'s clock every active point has passed (handled all its packets
  /// stamped before). None when it is behind `below`: some point has not passed it, which is all
  /// a drain asks. Read off progress_, not a scan of the points.
  std::optional<TimeNs> bound_for(PointId home, const Ctx& ctx, TimeNs below);
  TimeNs passed(PointId q, const PointState& ps) const;
  DurationNs progress_offset(PointId q, const Ctx& ctx);
  int64_t progress_key(PointId q, const Ctx& ctx);
  int64_t elapsed(PointId q, const PointState& ps) const;
  /// The active points by passed() on a common clock (progress_offset), and by elapsed(), for
  /// bound_for.
  PointProgress progress_{false};
  /// Settles the waiting packets that are due (all of them with `all`), oldest first.
  void drain(Ctx& ctx, bool all = false);
  void settle(const Identity& id, Entry& e, Ctx& ctx);
  /// Lays one copy (sightings in path order) along the flow's path (fs.order): its hops, its loss.
  void apply_copy(FlowState& fs, FlowId flow, std::span<const Sighting> copy, Ctx& ctx);
  /// A copy seen at `a` and next at `b` (a Seen or a Sighting): the hop's packet and delay.
  template <typename S>
  void count_hop(FlowState& fs, FlowId flow, const S& a, const S& b, Ctx& ctx);
  /// A copy whose last sighting, `last`, is at position `at` of the flow's path: lost after it
  /// when the path goes on from there.
  void copy_ended(FlowState& fs, FlowId flow, const Sighting& last, size_t at, Ctx& ctx);
  /// A copy last seen at `last` and never at `next`, the point after it on its flow's path.
  void count_lost(FlowId flow, const Sighting& last, PointId next, Ctx& ctx);
  /// The flow's hop from a to b (made on first use).
  PathRecord& hop(FlowId flow, PointId a, PointId b, const Ctx& ctx) { return hop(flows_[flow], flow, a, b, ctx); }
  PathRecord& hop(FlowState& fs, FlowId flow, PointId a, PointId b, const Ctx& ctx) {
    for (const Hop& h : fs.hops)
      if (h.from == a && h.to == b) return *h.record;
    return add_hop(flow, a, b, ctx);
  }
  PathRecord& add_hop(FlowId flow, PointId a, PointId b, const Ctx& ctx);
  /// A copy that crossed hop `r` (from frame `a_frame` to `b_frame`) in `d`: its delay and notes.
  void count_delivered(PathRecord& r, uint64_t a_frame, uint64_t b_frame, DurationNs d, Ctx& ctx) {
    if (r.delivered == 0) r.min_ns = r.max_ns = d;
    r.min_ns = std::min(r.min_ns, d);
    r.max_ns = std::max(r.max_ns, d);
    r.sum_ns += double(d);
    ++r.delivered;
    if (ctx.frame_notes) note_delivered(r, a_frame, b_frame, d, ctx);
  }
  void note_delivered(const PathRecord& r, uint64_t a_frame, uint64_t b_frame, DurationNs d, Ctx& ctx);
  FlowState& flow_state(FlowId f) {
    if (f >= flows_.size()) [[unlikely]]
      flows_.resize(size_t(f) + 1);
    return flows_[f];
  }
  /// Data packets of a flow stamped out of PSN order at a point: how far its stamps stray.
  void note_stamp_order(FlowState& fs, const Packet& p, Ctx& ctx);

  /// A copy counted lost on its way from `from` to `to` (none came there within the path
  /// timeout), watched for a while: if it comes after all, it was late, not lost.
  struct LostCopy {
    PointId from, to;
    TimeNs ts;
    uint64_t frame;
    PathRecord* record;  ///< its hop's, in records_
  };
  /// A packet's first sighting anywhere: the late copy of one counted lost, when it is at the
  /// point it was lost on the way to (its loss then becomes a delivery, with its delay).
  void found_late(const Identity& id, uint32_t tag, const Packet& p, Ctx& ctx);
  static constexpr size_t kMaxLostWatched = size_t(1) << 16;
  /// How long after it left its point a lost copy may still come (an identity that comes again
  /// later is another packet: a PSN space wraps in a second at 400 Gb/s at the earliest).
  static constexpr DurationNs kLateSpan = kNsPerSec;
  /// An identity with its Entry::tag, which hashes it here (worked out once per packet).
  struct TaggedIdentity {
    Identity id;
    uint32_t tag;
    friend bool operator==(const TaggedIdentity&, const TaggedIdentity&) = default;
  };
  struct TagHash {
    size_t operator()(const TaggedIdentity& k) const noexcept { return k.tag; }
  };
  std::unordered_map<TaggedIdentity, LostCopy, TagHash> lost_watch_;
  TagFilter watched_;  ///< the tags of lost_watch_'s keys
  std::deque<TaggedIdentity> lost_order_;  ///< bounded: the oldest watches end first
  const Entry* settling_ = nullptr;        ///< the packet settle() is counting

  NoteKind note_hop_, note_lost_, note_late_, note_record_;
  DurationNs timeout_;
  uint64_t max_pending_;
  bool any_offset_;
  std::vector<std::string> offset_specs_;           ///< --clock-offset NAME=NS as given
  bool estimate_offsets_ = false;
  ClockRelations hop_clock_;  ///< --estimate-offsets: fed by the copies matched over each hop
  std::vector<std::optional<DurationNs>> offsets_;  ///< by point, resolved on first use
  std::vector<uint8_t> offset_resolved_;
  // Waiting packets in creation order, which is also the order they are settled in (from the
  // front: by timeout, or the oldest when too many wait). The index only finds an identity's
  // entry by its creation number: its slots stay small (seq_index.h), and settling moves nothing.
  SeqRing<Entry> queue_;
  SeqIndex index_;  ///< identity hash -> creation number
  /// Settles the oldest waiting packet and takes it off the queue and the index.
  void settle_oldest(Ctx& ctx);
  std::vector<FlowState> flows_;  ///< by flow id
  PathInference inference_;       ///< what the decided flows tell about the others
  std::vector<uint8_t> acknowledges_;  ///< by flow id: it carried a positive ACK or READ response
  std::deque<PathRecord> records_;  ///< every hop's (a deque: a record stays where it was made)
  std::vector<TimeNs> handled_;  ///< by point: the latest stamp it handled
  /// By point: copies missing there that were not counted lost because it was not capturing
  /// (capturing(), decide_outside()), by why: for the warning.
  struct Uncaptured {
    uint64_t before = 0, after = 0, in_gaps = 0;
  };
  std::vector<Uncaptured> uncaptured_;
  /// Lost copies whose hop's next point had no packet about their time (capturing(): kOutside),
  /// decided at the end; at most kMaxOutside (more count lost at once).
  struct Outside {
    FlowId flow;
    Sighting last;
    PointId next;
  };
  static constexpr size_t kMaxOutside = size_t(1) << 16;
  std::vector<Outside> outside_;
  /// By (point, the point a copy it missed was first seen at): the earliest and latest stamps of
  /// such copies there.
  struct Missed {
    TimeNs earliest = std::numeric_limits<TimeNs>::max(), latest = std::numeric_limits<TimeNs>::min();
  };
  std::map<std::pair<PointId, PointId>, Missed> missed_;
  void warn_uncaptured(Ctx& ctx) const;
  /// bound_for by home point, worked out once per drain: valid where `drain` is the drain's number
  /// (not cleared for each drain: that was a pass over every point).
  struct Bound {
    uint64_t drain = 0;
    TimeNs value = 0;
  };
  std::vector<Bound> bounds_;
  uint64_t drains_ = 0;
  /// settle's scratch (cleared, its storage kept): the sightings of a packet with several copies
  /// or at a point new to its flow, on the common clock.
  std::vector<Sighting> sightings_;
  CopyMatcher matcher_;  ///< lay's: its buffers kept from packet to packet
  uint32_t since_drain_ = 0;
};

}  // namespace rdmatel::paths
