// SPDX-License-Identifier: GPL-2.0-or-later
// Mirror copies: every packet of a flow recorded twice at one observation point a moment apart.
// A SPAN session of several ports into one interface (a host's port and the uplink its packets
// leave by), or a capture on Linux's "any" device with a VLAN or bond interface over the physical
// one, records each packet once per port or interface, microseconds apart and identical. Counted
// twice, every packet reads as retransmitted and every NAK as two.
//
// An identical packet microseconds after another is not always a copy: a go-back-N resend of the
// newest packets of a window follows them closely, and a responder re-acknowledges duplicate
// requests back to back. What tells a mirror is that it doubles a flow's packets systematically.
// So, per point and flow, packets are counted as they arrive, with those that have an identical
// twin (the engine's identity hash: flow, PSN, opcode, IP ID, lengths, first payload bytes) within
// the window; once 40 % of them (of two at least) have one, the flow is doubled at the point,
// and a packet handed on within the window after its identical twin is dropped as its copy.
// Packets wait a reorder window before they are handed on, so the verdict comes from the packets
// around them, not only from those before. Copies are looked for only once the point has shown a
// twin in 50 packets (a capture without a mirror pays two lookups in small tables and a count per
// packet).
//
// Per point: two tables in sets of 4 slots (arrival, hand-on), allocated at its first RoCE
// packet, sized for 100 packets per microsecond of the window (a 400 Gb/s port's worth of 500-byte
// frames): 512 slots (8 KB) each for the default 5 us, at most 4,096 (64 KB). Looked up for every
// packet, they stay in cache beside Wireshark's own work in the plugin (64 KB each cost the plugin
// 1.5 % of tshark's time in misses). A full set forgets its oldest packet (whose copy is then
// counted, as without the check), it never matches a different one (the whole 64-bit hash and
// the stamps are compared).
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

#include "engine/src/decode/packet.h"
#include "engine/src/util/hash.h"
#include "rdmatel/types.h"

namespace rdmatel {

class MirrorCopies {
 public:
  static constexpr uint32_t kMinPackets = 2;
  /// A flow's packets at the point, and those with an identical twin: kept by the engine per flow
  /// point (FlowPointId), an array rather than a table per point.
  struct Counts {
    uint32_t packets = 0;
    uint32_t twins = 0;
  };

  /// A RoCE packet of the flow whose counts at this point are `flow` arrived at the point (any
  /// order).
  void observe(Counts* flow, uint64_t hash, TimeNs ts, DurationNs window) {
    if (arrived_.empty()) allocate(arrived_, window);
    Slot* twin = find(arrived_, hash);
    const bool is_twin = twin && ts - twin->ts <= window && twin->ts - ts <= window;
    if (!is_twin) remember(arrived_, hash, ts, twin);
    ++packets_;
    twins_ += is_twin;
    if (!following_ && packets_ >= kFollowAfter && twins_ * 50 >= packets_) following_ = true;
    // Every packet counts for its flow, from the first: counted only from the point's first twins
    // on, a flow's few go-back-N resends read as half its packets.
    if (!flow) return;
    ++flow->packets;
    flow->twins += is_twin;
  }

  /// The packet is handed on (stamp order): true when it is the copy of an identical packet
  /// handed on at most `window` before, in a flow the point doubles (`flow`: its counts).
  bool is_copy(const Counts* flow, uint64_t hash, TimeNs ts, DurationNs window) {
    if (!following_) return false;
    if (handed_.empty()) allocate(handed_, window);
    Slot* twin = find(handed_, hash);
    if (twin && ts >= twin->ts && ts - twin->ts <= window && doubled(flow)) return true;
    remember(handed_, hash, ts, twin);
    return false;
  }

 private:
  // Stamps are clamped to about +-2^62 by the engine: differences with this fit in 64 bits.
  static constexpr TimeNs kUnused = std::numeric_limits<TimeNs>::min() / 2;
  // Sets of 4 (hash, stamp) slots: a packet is forgotten only when four others of its set come
  // after it within the window.
  static constexpr size_t kMinSets = 16, kMaxSets = 1024, kWays = 4;
  static constexpr DurationNs kNsPerSlot = 10;  ///< 100 packets per microsecond of the window
  struct Slot {
    uint64_t hash = 0;
    TimeNs ts = kUnused;
  };
  // Both tables have one size, set by the window at the first (the window does not change).
  void allocate(std::vector<Slot>& table, DurationNs window) {
    if (arrived_.empty() && handed_.empty()) {
      const uint64_t wanted = uint64_t(std::max<DurationNs>(window, 0)) / kNsPerSlot / kWays;
      sets_ = kMinSets;
      while (sets_ < kMaxSets && sets_ < wanted) sets_ *= 2;
    }
    table.assign(sets_ * kWays, Slot{});
  }
  Slot* set_of(std::vector<Slot>& table, uint64_t hash) const { return &table[(hash & (sets_ - 1)) * kWays]; }
  Slot* find(std::vector<Slot>& table, uint64_t hash) const {
    Slot* set = set_of(table, hash);
    for (size_t i = 0; i < kWays; ++i)
      if (set[i].ts != kUnused && set[i].hash == hash) return &set[i];
    return nullptr;
  }
  // Over the packet's older twin, else over the set's oldest slot.
  void remember(std::vector<Slot>& table, uint64_t hash, TimeNs ts, Slot* twin) const {
    Slot* s = twin;
    if (!s) {
      Slot* set = set_of(table, hash);
      s = &set[0];
      for (size_t i = 1; i < kWays; ++i)
        if (set[i].ts < s->ts) s = &set[i];
    }
    *s = Slot{hash, ts};
  }
  static constexpr uint64_t kFollowAfter = 64;
  static bool doubled(const Counts* c) {
    // A mirror doubles every packet of the flow: half its packets are twins. Go-back-N resends
    // within the window come near that only when most of a flow is resent at once.
    return c && c->packets >= kMinPackets && uint64_t(c->twins) * 5 >= uint64_t(c->packets) * 2;
  }

  std::vector<Slot> arrived_, handed_;
  size_t sets_ = kMinSets;
  uint64_t packets_ = 0, twins_ = 0;
  bool following_ = false;
};

}  // namespace rdmatel
