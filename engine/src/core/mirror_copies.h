// SPDX-License-Identifier: GPL-2.0-or-later
// Mirror copies: every packet of a flow recorded twice at one observation point a moment apart.
// A SPAN session of several ports into one interface (a host's port and the uplink its packets
// leave by), a capture on Linux's "any" device with a VLAN or bond interface over the physical
// one, or two interfaces' packets written to one pcap file (which has no interface names) records
// each packet once per port or interface, identical and microseconds apart. Counted twice, every
// packet reads as retransmitted and every NAK as two.
//
// An identical packet microseconds after another is not always a copy: a go-back-N resend of the
// newest packets of a window follows them closely, and a responder re-acknowledges duplicate
// requests back to back. What tells a mirror is that it doubles a flow's packets systematically.
// So, per point and flow, packets are counted as they arrive, with those that have an identical
// twin (the engine's identity hash: flow, PSN, opcode, IP ID, lengths, first payload bytes) within
// the window; once 40 % of them (of two at least) have one, the flow is doubled at the point,
// and a packet handed on within the window after its identical twin is dropped as its copy. A
// mirror of k ports on a packet's path records it k times: a packet has k - 1 copies at most
// (k is the point's, 2 until its packets show more), so a resend after a packet and its copies
// is a resend.
// A twin at its packet's very stamp is either a copy the input gave (a file merged with itself,
// files merged with an overlap: every packet twice at its own stamp, none elsewhere), which the
// engine drops at hand-on as given twice, or a mirror's copy in a capture stamped in microseconds
// (some copies at the stamp, the others a microsecond on). So it is counted only while the point
// shows 1 twin at another stamp for 16 at its own: else it is no packet of the check at all (the
// resends of a file merged with itself were dropped as copies of a mirror 66 us wide).
// Packets wait a reorder window before they are handed on, so the verdict comes from the packets
// around them, not only from those before. Copies are looked for only once the point has shown a
// twin in 50 packets (a capture without a mirror pays two lookups in small tables and a count per
// packet).
//
// The window (mirror_copy_window, 5 us) covers a copy through one switch port to the next. Two
// ports further apart, or a switch that queues, give copies tens or hundreds of microseconds
// apart, as far as go-back-N resends: a wider window for every capture would take resends for
// copies. So the point's window widens only on the point's own evidence: one packet in 8 (by
// hash, so every copy of a packet is picked or none) is grouped with its identical ones up to
// 1 ms after the first. A mirror of k ports gives groups of k, nearly all of them (2k where the
// network resent a packet). Go-back-N resends a whole point's packets only when nearly every
// window is lost (IPv6 has no IP ID to tell a resend from its original), and then the windows
// overlap: groups of every size. When 80 % of the sampled packets are in groups of one size
// k >= 2, the point records its packets k times; where the groups spread further than the
// window, it becomes twice the longest recent spread and 1 us (a queue that fills moves the
// copies further apart), and the flows' counts start again at the first widening.
//
// Per point: two tables in sets of 4 slots (arrival, hand-on), allocated at its first RoCE
// packet, sized for 100 packets per microsecond of the window (a 400 Gb/s port's worth of 500-byte
// frames): 512 slots (12 KB) each for the default 5 us, at most 4,096 (96 KB), and the sample's
// table of 1,024 slots (24 KB). Looked up for every packet, they stay in cache beside Wireshark's
// own work in the plugin (64 KB each cost the plugin 1.5 % of tshark's time in misses). A full
// set forgets its oldest packet (whose copy is then counted, as without the check), it never
// matches a different one (the whole 64-bit hash and the stamps are compared).
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <vector>

#include "engine/src/util/word_hash.h"
#include "rdmatel/types.h"

namespace rdmatel {

/// One packet in 8 (by its identity, the same at every point) with how many times each point
/// recorded it, up to 8 points: a resend repeats a packet at every point on its path, a mirror's
/// copy only at the point whose capture holds the mirror. Shared by the points (the engine's).
class RepeatsAcrossPoints {
 public:
  static bool sampled(uint64_t hash) { return hash >> 61 == 1; }  // not MirrorCopies' own sample
  void add(uint64_t hash, PointId point) {
    if (slots_.empty()) slots_.resize(kSlots);  // at the first: an engine that checks no copies needs none
    Entry& e = slots_[hash % kSlots];
    if (e.hash != hash) e = Entry{hash, {}, {}, 0};
    for (uint8_t i = 0; i < e.used; ++i)
      if (e.point[i] == point) {
        e.count[i] = uint8_t(std::min(e.count[i] + 1, 255));
        return;
      }
    if (e.used < kPoints) {
      e.point[e.used] = point;
      e.count[e.used++] = 1;
    }
  }
  /// Of the sampled packets `point` recorded more than once that another point recorded too: true
  /// when most of those (4 at least) were recorded more than once there as well.
  bool repeated_elsewhere(PointId point) const {
    uint32_t elsewhere = 0, only_here = 0;
    for (const Entry& e : slots_) {
      bool here = false, other = false, other_repeated = false;
      for (uint8_t i = 0; i < e.used; ++i) {
        if (e.point[i] == point) here = e.count[i] >= 2;
        else {
          other = true;
          other_repeated |= e.count[i] >= 2;
        }
      }
      if (!here || !other) continue;
      ++(other_repeated ? elsewhere : only_here);
    }
    return elsewhere >= 4 && elsewhere > only_here;
  }

 private:
  static constexpr size_t kSlots = 4096, kPoints = 8;
  struct Entry {
    uint64_t hash = 0;
    std::array<PointId, kPoints> point{};
    std::array<uint8_t, kPoints> count{};
    uint8_t used = 0;
  };
  std::vector<Entry> slots_;
};

class MirrorCopies {
 public:
  static constexpr uint32_t kMinPackets = 2;
  /// The longest window a point widens to, and how far back the sample looks.
  static constexpr DurationNs kMaxWindow = kNsPerMs;
  /// A flow's packets at the point, and those with an identical twin: kept by the engine per flow
  /// point (FlowPointId), an array rather than a table per point. Counted at the point's window of
  /// `generation` (counts of an earlier, narrower window start again).
  struct Counts {
    uint32_t packets = 0;
    uint32_t twins = 0;
    uint32_t generation = 0;
  };

  /// A RoCE packet of the flow whose counts at this point are `flow` arrived at the point (any
  /// order). `window`: mirror_copy_window, the least the point's window is.
  /// `across`: the packets' repeats at every point (the engine's), `self` this point in it; a
  /// point whose repeats the other points show too is no mirror.
  /// `reverse_pair`: for a sampled packet (sampled()), the key of its reverse direction's IP pair
  /// (pair_key(dst, src)), whose NAKs tell a resend; else unused.
  void observe(Counts* flow, uint64_t hash, TimeNs ts, DurationNs window, bool acknowledgment,
               const RepeatsAcrossPoints* across = nullptr, PointId self = kNoPoint, uint64_t reverse_pair = 0) {
    if (arrived_.empty()) {
      window_ = std::max<DurationNs>(window, 0);
      arrived_.allocate(sets_for(window_));
    }
    Slot* twin = arrived_.find(hash);
    // An identical packet at the very stamp of its twin: a copy the input gave (a file given
    // twice, files merged with an overlap: every packet, ACKs too, at its own stamp and none
    // elsewhere), which the engine drops at hand-on (given_twice), or a mirror's copy stamped in
    // microseconds (some copies at the stamp, others a microsecond on). Only the second has
    // copies at other stamps too: without them, this is no evidence of a mirror and is not
    // counted (counted, a file merged with itself was a mirror, and its resends copies).
    if (twin && twin->ts == ts) [[unlikely]] {
      ++same_stamp_twins_;
      if (other_stamp_twins_ * kSameStampPerOther < same_stamp_twins_) return;
    }
    if (sampled(hash)) [[unlikely]] {
      sample(hash, ts, acknowledgment, across, self, reverse_pair);
      twin = arrived_.find(hash);  // (its verdict may widen the window: the table is made anew)
    }
    const bool is_twin = twin && within(ts, twin->ts, window_);
    other_stamp_twins_ += is_twin && twin->ts != ts;
    if (is_twin)
      count_copy(*twin);
    else
      arrived_.remember(hash, ts, twin);
    ++packets_;
    twins_ += is_twin;
    if (!following_ && packets_ >= kFollowAfter && twins_ * 50 >= packets_) following_ = true;
    // Every packet counts for its flow, from the first: counted only from the point's first twins
    // on, a flow's few go-back-N resends read as half its packets.
    if (!flow) return;
    if (flow->generation != generation_) *flow = Counts{0, 0, generation_};
    ++flow->packets;
    flow->twins += is_twin;
  }

  /// One packet in 8, by its identity: observe() wants its reverse_pair.
  static bool sampled(uint64_t hash) { return hash >> 61 == 0; }
  /// The key of the IP pair (src, dst) for nak() and observe().
  static uint64_t pair_key(const IpAddress& src, const IpAddress& dst) { return IpPairHash{}({src, dst}); }
  /// A NAK from `src` to `dst` (pair_key) arrived at the point: the sender resends from the PSN it
  /// names, so identical packets of the reverse direction after it are resends, not copies.
  void nak(uint64_t pair, TimeNs ts) {
    if (naks_.empty()) naks_.assign(kNakSlots, NakSeen{});
    NakSeen& n = naks_[pair % kNakSlots];
    n.pair = pair;
    n.ts = ts;
  }

  /// The packet is handed on (stamp order): true when it is the copy of an identical packet
  /// handed on at most the point's window before, in a flow the point doubles (`flow`: its counts).
  /// Not while most of the sample's identical data packets came after a NAK of their queue pair
  /// (as verdict() says): a go-back-N storm that resends every packet within a microsecond of its
  /// original doubles its flows as a mirror would (helper probe: 470,040 resends dropped as
  /// copies, 0 % retransmitted).
  bool is_copy(const Counts* flow, uint64_t hash, TimeNs ts) {
    if (!following_ || resends_after_naks()) return false;
    if (handed_.empty()) handed_.allocate(sets_for(window_));
    Slot* twin = handed_.find(hash);
    if (twin && ts >= twin->ts && ts - twin->ts <= window_ && doubled(flow, generation_)) {
      count_copy(*twin);
      return true;
    }
    handed_.remember(hash, ts, twin);
    return false;
  }

  /// The point's window: mirror_copy_window, or wider on the point's evidence.
  DurationNs window() const { return window_; }
  /// Whether the point's packets widened its window.
  bool widened() const { return generation_ > 0; }
  /// How many times the point records a packet: 2, or more on its packets' evidence.
  uint32_t copies() const { return copies_; }

 private:
  // Stamps are clamped to about +-2^62 by the engine: differences with this fit in 64 bits.
  static constexpr TimeNs kUnused = std::numeric_limits<TimeNs>::min() / 2;
  struct Slot {
    uint64_t hash = 0;
    TimeNs ts = kUnused;  ///< the first of the packet's group
    uint32_t seen = 1;    ///< packets in the group
  };
  // One more copy of the slot's packet: a group complete at the point's count is forgotten (a later
  // identical packet is a resend, not one of these copies).
  void count_copy(Slot& s) const {
    if (++s.seen >= copies_) s.ts = kUnused;
  }
  // Sets of 4 (hash, stamp) slots: a packet is forgotten only when four others of its set come
  // after it within the window.
  static constexpr size_t kMinSets = 16, kMaxSets = 1024, kWays = 4;
  static constexpr DurationNs kNsPerSlot = 10;  ///< 100 packets per microsecond of the window
  // A table starts with kStartSets sets and doubles them, up to the sets its window asks for
  // (`full`), only when a packet would push out another: until then no set of any size has held
  // more than four, so the small one holds the very packets the full one would, and where a
  // packet goes in its set changes nothing (the one pushed out is the oldest by stamp, then by
  // hash: by what the set holds, not where). A point that carries a handful of packets takes
  // 384 bytes, not the 12-24 KB of its window (a capture of 40,000 such interfaces took 1.4 GB).
  static constexpr size_t kStartSets = 4;
  struct Table {
    std::vector<Slot> slots;
    size_t sets = 0;
    size_t full = 0;  ///< the sets it takes once a packet would push out another
    bool empty() const { return slots.empty(); }
    void allocate(size_t n) {
      full = n;
      sets = std::min(n, kStartSets);
      slots.assign(sets * kWays, Slot{});
    }
    Slot* set_of(uint64_t hash) { return &slots[(hash & (sets - 1)) * kWays]; }
    Slot* find(uint64_t hash) {
      Slot* set = set_of(hash);
      for (size_t i = 0; i < kWays; ++i)
        if (set[i].ts != kUnused && set[i].hash == hash) return &set[i];
      return nullptr;
    }
    // The slot a packet takes in its set: a free one, else the oldest (by stamp, then hash).
    [[gnu::always_inline]] static Slot* victim(Slot* set) {
      Slot* s = &set[0];
      for (size_t i = 1; i < kWays; ++i)
        if (set[i].ts < s->ts || (set[i].ts == s->ts && set[i].hash < s->hash)) s = &set[i];
      return s;
    }
    // Over the packet's older twin, else over the set's free or oldest slot.
    // (Inlined where every packet is remembered; the table's growth is out of line.)
    [[gnu::always_inline]] Slot* remember(uint64_t hash, TimeNs ts, Slot* twin, uint32_t seen = 1) {
      Slot* s = twin;
      if (!s) {
        s = victim(set_of(hash));
        if (s->ts != kUnused && sets < full) [[unlikely]]
          s = grown_slot(hash);
      }
      *s = Slot{hash, ts, seen};
      return s;
    }
    // Twice the sets, as often as the packet's set is still full, up to `full`: no set of any
    // size between has held more than four either. A point that carries a few dozen packets
    // in all takes a few sets, not its window's hundreds (20,000 such points took 246 MB).
    [[gnu::noinline]] Slot* grown_slot(uint64_t hash) {
      Slot* s;
      do {
        rebuild(std::min(full, sets * 2));
        s = victim(set_of(hash));
      } while (s->ts != kUnused && sets < full);
      return s;
    }
    // The same packets in a table of `n` sets (the window widened: more sets). Its sets stay as
    // they are until a packet would push out another: n sets would hold the same packets (each
    // of them takes packets of one of its sets only).
    void resize(size_t n) {
      if (slots.empty()) return;
      full = n;
      if (n < sets) rebuild(n);
    }
    void rebuild(size_t n) {
      std::vector<Slot> old = std::move(slots);
      sets = n;
      slots.assign(sets * kWays, Slot{});
      for (const Slot& s : old)
        if (s.ts != kUnused) {
          Slot* twin = find(s.hash);
          *(twin ? twin : victim(set_of(s.hash))) = s;
        }
    }
  };
  static size_t sets_for(DurationNs window) {
    const uint64_t wanted = uint64_t(window) / kNsPerSlot / kWays;
    size_t sets = kMinSets;
    while (sets < kMaxSets && sets < wanted) sets *= 2;
    return sets;
  }
  static bool within(TimeNs a, TimeNs b, DurationNs window) { return a - b <= window && b - a <= window; }

  // The newest NAK per IP pair (direct-mapped: a pair may forget its NAK to another, then a
  // resend reads as a possible copy, as without this).
  static constexpr size_t kNakSlots = 256;
  static constexpr uint64_t kMinNakEvidence = 8;
  struct NakSeen {
    uint64_t pair = 0;
    TimeNs ts = kUnused;
  };
  bool resends_after_naks() const {
    return data_copies_ >= kMinNakEvidence && data_copies_after_nak_ * 2 >= data_copies_;
  }
  bool nak_between(uint64_t pair, TimeNs after, TimeNs until) const {
    if (naks_.empty()) return false;
    const NakSeen& n = naks_[pair % kNakSlots];
    return n.pair == pair && n.ts != kUnused && n.ts > after && n.ts <= until;
  }
  std::vector<NakSeen> naks_;
  uint64_t data_copies_ = 0, data_copies_after_nak_ = 0;  ///< the sample's data copies, those after a NAK

  // The sample (one packet in 8): groups of identical packets up to kMaxWindow after their first,
  // how many groups have each size (groups[c]: of c packets; the last counts every larger one),
  // and how far the last kGaps copies came after their group's first.
  static constexpr size_t kSampleSets = 256, kGaps = 256;
  static constexpr uint32_t kMaxCopies = 8;
  static constexpr uint64_t kFirstVerdict = 64;
  void sample(uint64_t hash, TimeNs ts, bool acknowledgment, const RepeatsAcrossPoints* across, PointId self,
              uint64_t reverse_pair) {
    if (sampled_.empty()) sampled_.allocate(kSampleSets);
    ++sampled_packets_;
    Slot* group = sampled_.find(hash);
    if (group && within(ts, group->ts, kMaxWindow)) {
      const DurationNs gap = ts > group->ts ? ts - group->ts : group->ts - ts;
      if (gaps_.size() < kGaps) gaps_.push_back(gap);  // (grown as copies come: most points have none)
      else gaps_[sampled_copies_ % kGaps] = gap;
      ++sampled_copies_;
      const uint32_t was = std::min(group->seen, kMaxCopies);
      if (acknowledgment && was == 1) ++doubled_acks_;
      if (!acknowledgment) {
        ++data_copies_;
        data_copies_after_nak_ += nak_between(reverse_pair, group->ts, ts);
      }
      group->seen = std::min(group->seen + 1, kMaxCopies);
      --groups_[was];
      ++groups_[group->seen];
    } else {
      sampled_.remember(hash, ts, group);
      ++groups_[1];
      sampled_acks_ += acknowledgment;
    }
    if (sampled_packets_ == next_verdict_) {
      next_verdict_ += std::min<uint64_t>(next_verdict_, uint64_t(1) << 16);
      verdict(across, self);
    }
  }
  // 80 % of the sampled packets in groups of one size k >= 2: the point records its packets k
  // times; the window widens to hold the longest recent spread of a group.
  void verdict(const RepeatsAcrossPoints* across, PointId self) {
    uint32_t k = 2;
    for (uint32_t c = 3; c < kMaxCopies; ++c)
      if (c * groups_[c] > k * groups_[k]) k = c;
    if (k * groups_[k] * 5 < sampled_packets_ * 4) return;
    // A mirror records the acknowledgments coming back through its ports as often as the data;
    // a go-back-N that resends most of a point's data (a lossy IPv6 flow) does not resend them.
    if (sampled_acks_ >= 2 && doubled_acks_ * 2 < sampled_acks_) return;
    // Nor a go-back-N whose resends the points before and after this one recorded as often.
    if (across && across->repeated_elsewhere(self)) return;
    // Nor one whose resends came after a NAK of their queue pair, where a copy follows its packet
    // whatever the receiver says (the only evidence at a point alone: a lossy IPv6 flow resending
    // most of its data, its duplicate requests re-acknowledged back to back, doubles both).
    if (resends_after_naks()) return;
    copies_ = k;
    following_ = true;
    const size_t n = size_t(std::min<uint64_t>(sampled_copies_, kGaps));
    const DurationNs longest = *std::max_element(gaps_.begin(), gaps_.begin() + ptrdiff_t(n));
    DurationNs wanted = 2 * longest + kNsPerUs;
    wanted = std::min(kMaxWindow, (wanted + kNsPerUs - 1) / kNsPerUs * kNsPerUs);
    if (longest <= window_ || wanted <= window_) return;
    window_ = wanted;
    arrived_.resize(sets_for(window_));
    handed_.resize(sets_for(window_));
    generation_ = 1;
  }

  static constexpr uint64_t kFollowAfter = 64;
  static bool doubled(const Counts* c, uint32_t generation) {
    if (!c) return false;
    // A flow whose packets all came before the window widened was counted at the narrow one: the
    // point's verdict stands for it.
    if (c->generation != generation) return true;
    // A mirror doubles every packet of the flow: half its packets are twins (more of k ports).
    // Go-back-N resends within the window come near that only when most of a flow is resent at
    // once.
    return c->packets >= kMinPackets && uint64_t(c->twins) * 5 >= uint64_t(c->packets) * 2;
  }

  Table arrived_, handed_, sampled_;
  DurationNs window_ = 0;
  uint32_t generation_ = 0;
  uint32_t copies_ = 2;
  uint64_t packets_ = 0, twins_ = 0;
  // Twins at their twin's stamp, and at another: a mirror stamped in microseconds whose copies are
  // 60 ns apart or more gives 1 of the second for 16 of the first or more, a file given twice none.
  static constexpr uint64_t kSameStampPerOther = 16;
  uint64_t same_stamp_twins_ = 0, other_stamp_twins_ = 0;
  bool following_ = false;
  uint64_t sampled_packets_ = 0, sampled_copies_ = 0, next_verdict_ = kFirstVerdict;
  uint64_t sampled_acks_ = 0, doubled_acks_ = 0;  ///< the sample's ACKs and NAKs, and those with a copy
  std::array<uint64_t, kMaxCopies + 1> groups_{};
  std::vector<DurationNs> gaps_;  ///< the last kGaps copies' (a ring once full)
};

}  // namespace rdmatel
