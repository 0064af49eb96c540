// SPDX-License-Identifier: GPL-2.0-or-later
// One observation point's packets, held until the point's watermark has passed them by the
// reorder window, and released in stamp order. Captures stamp packets when they are queued, and
// dumpcap interleaves interfaces in blocks, so a point's stamps go backwards by microseconds to
// tens of milliseconds: sorting them here means no component ever sees file order, and a result
// never depends on it. Packets with equal stamps are ordered by flow and PSN (serial-number order,
// so 0xFFFFFF comes before 0), then by arrival.
//
// Packets mostly arrive in stamp order: they go to the back of a ring, and one a few places late
// moves the few stamped after it one slot on. One that is further behind goes to a heap instead,
// so that no order of stamps (a hostile file stamped backwards) costs more than a logarithm per
// packet. The front is the earlier of the ring's and the heap's.
//
// The same packet given twice (a file given twice, overlapping ring files) has the same stamp,
// flow, PSN, length and bytes, so its copies leave the buffer one right after the other (only
// other packets of the same stamp, flow and PSN can come between): front_repeats() counts the
// identical packets just before the front, by capture (the same one or another). They also sit
// side by side as they arrive: placed_after_identical() tells a capture that gives its requests
// twice (an overlap merged into one file) a reorder window before they leave, in time to take
// the ACKs it repeated before them for copies too (arrived()).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "engine/src/decode/packet.h"
#include "engine/src/util/psn.h"
#include "engine/src/util/big_array.h"

namespace rdmatel {

class ReorderBuffer {
 public:
  /// Makes room for a packet in stamp order and returns its slot, with ts, order_key, seq and
  /// wire_len set; the caller sets every other member (the slot holds an earlier packet's).
  /// `hash` identifies the packet's bytes.
  Packet* emplace(TimeNs ts, uint64_t order_key, uint32_t seq, uint32_t wire_len, uint64_t hash) {
    front_ = nullptr;
    // Walk back from the end over the few packets that sort after it (mostly none: the packet is
    // written in its slot, not built aside and copied there).
    size_t pos = size_;
    for (size_t steps = 0; pos > 0 && before(ts, order_key, seq, at(pos - 1).packet); --pos)
      if (++steps > kMaxShift) return emplace_late(ts, order_key, seq, wire_len, hash);
    if (size_ == slots_.size()) grow();
    for (size_t i = size_; i > pos; --i) at(i) = at(i - 1);
    ++size_;
    Entry& e = at(pos);
    set(e, ts, order_key, seq, wire_len, hash);
    placed_ = &e;
    before_placed_ = pos ? pos - 1 : kNotPlaced;
    return &e.packet;
  }

  /// emplace() for a packet further back than kMaxShift: into the heap (out of line, so that
  /// emplace's common path stays small enough to inline where every packet is placed).
  [[gnu::noinline]] Packet* emplace_late(TimeNs ts, uint64_t order_key, uint32_t seq, uint32_t wire_len,
                                         uint64_t hash) {
    Entry e{};
    set(e, ts, order_key, seq, wire_len, hash);
    // Where it would sort in the ring (which is in order), for placed_after_identical(): a copy
    // far behind its capture's newest packets (an overlap merged from files not in stamp order)
    // lands here, with its twin in the ring.
    size_t lo = 0, hi = size_;
    while (lo < hi) {
      const size_t mid = lo + (hi - lo) / 2;
      if (before(ts, order_key, seq, at(mid).packet)) hi = mid;
      else lo = mid + 1;
    }
    Entry& late = push_late(e);
    placed_ = &late;
    before_placed_ = lo ? lo - 1 : kNotPlaced;
    return &late.packet;
  }

  /// Whether the packet emplace() placed last (its source set since) sorts right after an
  /// identical one (stamp, flow, PSN, length and bytes) from the same capture: that capture gives
  /// it twice (files merged with an overlap), seen as it arrives.
  bool placed_after_identical() const {
    if (!placed_ || before_placed_ == kNotPlaced) return false;
    const Entry &e = *placed_, &before = at(before_placed_);
    return before.hash == e.hash && before.packet.ts == e.packet.ts && before.packet.order_key == e.packet.order_key &&
           before.packet.wire_len == e.packet.wire_len && before.packet.source == e.packet.source;
  }
  /// Every packet placed, once its source is set: `copy` (placed_after_identical()), a request
  /// (not an ACK, CNP or PFC frame) when `request`. A request its capture gives twice: packets that
  /// capture repeats at one stamp are copies too from the start of the run of arrivals given twice
  /// the request is in (an overlap merged into one file gives every packet twice, the first of
  /// them perhaps ACKs) to `span` after it (given_twice_around). A run ends at two arrivals in a
  /// row not given twice: a NAK repeated at its stamp before the overlap stays a repeat.
  void arrived(TimeNs ts, bool copy, bool request, DurationNs span) {
    if (copy) {
      run_from_ = in_run_ ? std::min(run_from_, ts) : ts;  // arrivals are not quite in stamp order
      in_run_ = true;
      if (request) {
        twice_from_ = ts - span > twice_until_ ? run_from_ : std::min(twice_from_, run_from_);
        twice_until_ = std::max(twice_until_, ts + span);
        run_given_twice_ = true;
      } else if (run_given_twice_) {
        twice_from_ = std::min(twice_from_, ts);
      }
    } else if (!last_copy_) {
      in_run_ = run_given_twice_ = false;
    }
    last_copy_ = copy;
  }
  bool given_twice_around(TimeNs ts) const { return ts >= twice_from_ && ts <= twice_until_; }

  /// Inserts a whole packet (tests).
  void insert(const Packet& p, uint64_t hash) { *emplace(p.ts, p.order_key, p.seq, p.wire_len, hash) = p; }

  bool empty() const { return size_ == 0 && late_.empty(); }
  size_t size() const { return size_ + late_.size(); }
  const Packet& front() const { return front_entry().packet; }
  /// The identity hash the front was inserted with.
  uint64_t front_hash() const { return front_entry().hash; }

  /// How many packets released before the front have its stamp, flow, PSN, length and bytes:
  /// given by the front's own capture (`same_source`) and by others. Which capture gave them
  /// tells a copy from a repeat (engine.cpp, given_twice).
  struct Repeats {
    uint32_t same_source = 0, other_sources = 0;
    bool any() const { return same_source || other_sources; }
  };
  Repeats front_repeats() const {
    Repeats r;
    const Entry& f = front_entry();
    if (f.packet.ts != group_ts_ || f.packet.order_key != group_key_) return r;
    for (size_t i = 0; i < group_size_; ++i)
      if (group_[i].hash == f.hash && group_[i].wire_len == f.packet.wire_len)
        ++(group_[i].source == f.packet.source ? r.same_source : r.other_sources);
    return r;
  }

  void pop_front() {
    placed_ = nullptr;
    const Entry& f = front_entry();
    if (f.packet.ts != group_ts_ || f.packet.order_key != group_key_) {
      group_ts_ = f.packet.ts;
      group_key_ = f.packet.order_key;
      group_size_ = 0;
    }
    if (group_size_ < kGroup) group_[group_size_++] = Released{f.hash, f.packet.wire_len, f.packet.source};
    const bool ring = front_in_ring_;
    front_ = nullptr;
    if (ring) {
      head_ = head_ + 1 == slots_.size() ? 0 : head_ + 1;
      --size_;
    } else {
      std::pop_heap(late_.begin(), late_.end(), after);
      late_.pop_back();
    }
    // Give a burst's memory back once the buffer has drained.
    if (size_ == 0 && slots_.size() > kShrinkAbove) {
      slots_ = BigArray<Entry>(kInitial);
      head_ = 0;
    }
    if (late_.empty() && late_.capacity() > kShrinkAbove) std::vector<Entry>().swap(late_);
  }

 private:
  struct Entry {
    Packet packet;
    uint64_t hash;
  };
  static constexpr size_t kInitial = 8;  // (a point that carries a handful of packets: 1.3 KB, not 10)
  static constexpr size_t kShrinkAbove = 1 << 16;
  static constexpr size_t kMaxShift = 16;  ///< further behind than this: the heap
  static constexpr size_t kGroup = 16;     ///< copies recognised among this many of one stamp, flow and PSN

  static void set(Entry& e, TimeNs ts, uint64_t order_key, uint32_t seq, uint32_t wire_len, uint64_t hash) {
    e.hash = hash;
    e.packet.ts = ts;
    e.packet.order_key = order_key;
    e.packet.seq = seq;
    e.packet.wire_len = wire_len;
  }
  static bool before(const Entry& a, const Entry& b) { return before(a.packet.ts, a.packet.order_key, a.packet.seq, b.packet); }
  static bool before(TimeNs ts, uint64_t ka, uint32_t seq, const Packet& b) {
    if (ts != b.ts) return ts < b.ts;
    const uint64_t kb = b.order_key;
    if (ka != kb) {
      // One flow (the key's bits above the PSN): PSN order across the wrap. The plain key would put
      // PSN 0 before 0xFFFFFF at one stamp (back-to-back packets stamped alike), and the last
      // packet before the wrap would then count as a resend. One flow's packets at one stamp are
      // never half the PSN space apart, so this stays a strict order.
      if ((ka ^ kb) >> 24 == 0) return psn::newer(uint32_t(kb) & psn::kMask, uint32_t(ka) & psn::kMask);
      return ka < kb;
    }
    return seq < b.seq;
  }
  static bool after(const Entry& a, const Entry& b) { return before(b, a); }  // min-heap order

  // std::push_heap's sift-up, keeping hold of where the new entry ends up (the caller fills it).
  Entry& push_late(const Entry& e) {
    late_.push_back(e);
    size_t i = late_.size() - 1;
    while (i > 0) {
      size_t parent = (i - 1) / 2;
      if (!before(late_[i], late_[parent])) break;
      std::swap(late_[i], late_[parent]);
      i = parent;
    }
    return late_[i];
  }

  bool from_ring() const { return size_ > 0 && (late_.empty() || !before(late_.front(), at(0))); }
  // Found once per packet released (front(), front_hash(), front_repeats() and pop_front() all
  // ask), not once per question.
  const Entry& front_entry() const {
    if (!front_) {
      front_in_ring_ = from_ring();
      front_ = front_in_ring_ ? &at(0) : &late_.front();
    }
    return *front_;
  }

  // Slot of the i-th entry from the front (i < capacity).
  size_t slot(size_t i) const {
    const size_t j = head_ + i;
    return j >= slots_.size() ? j - slots_.size() : j;
  }
  Entry& at(size_t i) { return slots_[slot(i)]; }
  const Entry& at(size_t i) const { return slots_[slot(i)]; }
  // By half again (not doubled: the ring holds the hold's packets with at most a third unused),
  // in place; the entries from the front to the old end move to the new end, so the ring's order
  // still runs from the front through the end and on from slot 0.
  void grow() {
    const size_t old = slots_.size();
    slots_.grow_to(old == 0 ? kInitial : old + old / 2);
    if (size_ == 0 || head_ == 0) return;
    const size_t moved = old - head_;
    Entry* base = &slots_[0];
    std::memmove(static_cast<void*>(base + slots_.size() - moved), base + head_, moved * sizeof(Entry));
    head_ = slots_.size() - moved;
  }

  BigArray<Entry> slots_;
  size_t head_ = 0;
  size_t size_ = 0;
  std::vector<Entry> late_;  ///< min-heap by (stamp, order key, arrival)
  TimeNs group_ts_ = 0;
  uint64_t group_key_ = 0;
  size_t group_size_ = 0;
  struct Released {
    uint64_t hash;
    uint32_t wire_len;
    uint16_t source;
  };
  Released group_[kGroup];
  mutable const Entry* front_ = nullptr;  ///< front_entry(), until the buffer changes
  static constexpr size_t kNotPlaced = SIZE_MAX;
  // The packet emplace() placed last and the ring entry that sorts just before it, until the
  // buffer changes.
  const Entry* placed_ = nullptr;
  size_t before_placed_ = kNotPlaced;
  // Stamps around requests the capture gave twice at arrival, and the run of arrivals given twice
  // (arrived()).
  TimeNs twice_from_ = 0, twice_until_ = std::numeric_limits<TimeNs>::min() / 2;
  TimeNs run_from_ = 0;
  bool in_run_ = false, last_copy_ = false, run_given_twice_ = false;
  mutable bool front_in_ring_ = false;
};

}  // namespace rdmatel
