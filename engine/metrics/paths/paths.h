// SPDX-License-Identifier: GPL-2.0-or-later
// paths: the same packet seen at several observation points (SPEC §6). Each RoCE packet's
// sightings are gathered by identity (flow, PSN, opcode, payload length, IPv4 ID) until every
// point has had --path-timeout to show its copy, then split into copies (retransmissions and
// duplicates are copies of their own, copy_matcher.h) and laid along the flow's path: each hop
// A -> B gives a delay, a copy seen at A whose path stops there is lost on A -> B. Per flow and
// hop it counts packets and losses and keeps the delays' min / avg / max.
//
// Unlike every other metric, a hop delay compares the clocks of two points: it is corrected by
// the points' --clock-offset where one is given and reported raw otherwise. The clock relations
// the core learned (core/clock.*) only order points and match copies; they never change a delay.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "engine/metrics/paths/copy_matcher.h"
#include "engine/src/core/component.h"
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
    FlowId flow;
    uint32_t psn;
    uint32_t payload_len;
    uint16_t ip_id;
    uint8_t opcode;
    friend bool operator==(const Identity&, const Identity&) = default;
  };
  struct IdentityHash {
    size_t operator()(const Identity& k) const noexcept;
  };
  struct Entry {
    uint64_t seq = 0;     ///< creation number (tells a reused identity from the one queued)
    TimeNs ref_due = 0;   ///< first sighting's reference stamp + timeout
    SmallVector<Sighting, 3> sightings;
  };
  struct Queued {
    Identity id;
    uint64_t seq;
  };
  using HopKey = std::tuple<FlowId, PointId, PointId>;

  /// A stamp of `point` on a common clock, for waiting only: minus its --clock-offset when any is
  /// given, else mapped through the core's clock relations.
  TimeNs ref_time(PointId point, TimeNs ts, const Ctx& ctx);
  /// How far point q's clock runs ahead of point h's, for ordering points and matching copies:
  /// from --clock-offset when any is given; else the core's estimate for the pair once packets
  /// went both ways between them (one direction only, the estimate still holds the delay); else 0.
  DurationNs relative_offset(PointId h, PointId q, const Ctx& ctx);
  std::optional<DurationNs> explicit_offset(PointId point, const Ctx& ctx);
  /// The earliest reference time every active point has passed.
  TimeNs bound(const Ctx& ctx);
  void drain(TimeNs bound, Ctx& ctx);
  void settle(const Identity& id, Entry& e, Ctx& ctx);
  /// Lays one identity's sightings (refs set) along the flow's path: hops and losses.
  void apply(FlowId flow, std::span<const Sighting> s, const std::vector<PointId>& order, Ctx& ctx);
  PathRecord& hop(FlowId flow, PointId a, PointId b, const Ctx& ctx);

  NoteKind note_hop_, note_delay_, note_lost_, note_record_;
  DurationNs timeout_;
  uint64_t max_pending_;
  bool any_offset_;
  std::vector<std::string> offset_specs_;  ///< --clock-offset NAME=NS as given
  std::vector<std::optional<DurationNs>> offsets_;  ///< by point, resolved on first use
  std::vector<uint8_t> offset_resolved_;
  std::unordered_map<Identity, Entry, IdentityHash> pending_;
  std::deque<Queued> queue_;  ///< pending identities in creation order
  uint64_t next_seq_ = 1;
  std::unordered_map<FlowId, std::vector<PointId>> order_;  ///< each flow's points in path order
  /// Packets of a flow whose path is not known yet (every one so far seen at one point): whether
  /// they were lost after it is told once a packet shows the next point. A few per flow.
  static constexpr size_t kMaxParked = 64;
  std::unordered_map<FlowId, std::vector<std::vector<Sighting>>> parked_;
  std::map<HopKey, PathRecord> hops_;
  std::vector<Sighting> scratch_;
};

}  // namespace rdmatel::paths
