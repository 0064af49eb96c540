// SPDX-License-Identifier: GPL-2.0-or-later
// One observation point's packets, held until the point's watermark has passed them by the
// reorder window, and released in stamp order. Captures stamp packets when they are queued, and
// dumpcap interleaves interfaces in blocks, so a point's stamps go backwards by microseconds to
// tens of milliseconds: sorting them here means no component ever sees file order, and a result
// never depends on it. Packets with equal stamps are ordered by flow and PSN (serial-number order,
// so 0xFFFFFF comes before 0), then by arrival.
//
// Packets mostly arrive in stamp order: their sort keys (stamp, order key, arrival: 24 bytes) go to
// the back of a ring, and one a few places late moves the few keys stamped after it one slot on
// (a tenth of the packets of a real capture arrive a few places late: moving keys, not 160-byte
// packets). One that is further behind goes to a heap instead, so that no order of stamps (a
// hostile file stamped backwards) costs more than a logarithm per packet. The front is the
// earlier of the ring's and the heap's. The packets themselves wait in a pool of slots that
// never move while they wait; a released slot is the next one taken, so the pool stays as
// small, and as warm, as the packets held.
//
// The same packet given twice (a file given twice, overlapping ring files) has the same stamp,
// flow, PSN, length and bytes, so its copies leave the buffer one right after the other (only
// other packets of the same stamp, flow and PSN can come between): front_repeats() counts the
// identical packets just before the front, by capture (the same one or another).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "engine/src/decode/packet.h"
#include "engine/src/util/psn.h"
#include "engine/src/util/big_array.h"

namespace rdmatel {

class ReorderBuffer {
 public:
  /// Makes room for a packet in stamp order and returns its slot, with ts, order_key, seq and
  /// wire_len set; the caller sets every other member (the slot holds an earlier packet's). The
  /// pointer is valid until the next emplace. `hash` identifies the packet's bytes.
  Packet* emplace(TimeNs ts, uint64_t order_key, uint32_t seq, uint32_t wire_len, uint64_t hash) {
    const Key k{ts, order_key, seq, take_slot()};
    Entry& e = pool_[k.slot];
    e.hash = hash;
    e.packet.ts = ts;
    e.packet.order_key = order_key;
    e.packet.seq = seq;
    e.packet.wire_len = wire_len;
    // Walk back from the end over the few keys that sort after it (mostly none).
    size_t pos = size_;
    for (size_t steps = 0; pos > 0 && before(k, key(pos - 1)); --pos)
      if (++steps > kMaxShift) {
        push_late(k);
        front_ = nullptr;
        return &e.packet;
      }
    if (size_ == keys_.size()) grow();
    for (size_t i = size_; i > pos; --i) key(i) = key(i - 1);
    ++size_;
    key(pos) = k;
    if (pos == 0) front_ = nullptr;
    return &e.packet;
  }

  /// Inserts a whole packet (tests).
  void insert(const Packet& p, uint64_t hash) { *emplace(p.ts, p.order_key, p.seq, p.wire_len, hash) = p; }

  bool empty() const { return size_ == 0 && late_.empty(); }
  size_t size() const { return size_ + late_.size(); }
  const Packet& front() { return front_entry().packet; }
  /// The identity hash the front was inserted with.
  uint64_t front_hash() { return front_entry().hash; }

  /// How many packets released before the front have its stamp, flow, PSN, length and bytes:
  /// given by the front's own capture (`same_source`) and by others. Which capture gave them
  /// tells a copy from a repeat (engine.cpp, given_twice).
  struct Repeats {
    uint32_t same_source = 0, other_sources = 0;
    bool any() const { return same_source || other_sources; }
  };
  Repeats front_repeats() {
    Repeats r;
    const Entry& f = front_entry();
    if (f.packet.ts != group_ts_ || f.packet.order_key != group_key_) return r;
    for (size_t i = 0; i < group_size_; ++i)
      if (group_[i].hash == f.hash && group_[i].wire_len == f.packet.wire_len)
        ++(group_[i].source == f.packet.source ? r.same_source : r.other_sources);
    return r;
  }

  void pop_front() {
    const Entry& f = front_entry();
    if (f.packet.ts != group_ts_ || f.packet.order_key != group_key_) {
      group_ts_ = f.packet.ts;
      group_key_ = f.packet.order_key;
      group_size_ = 0;
    }
    if (group_size_ < kGroup) group_[group_size_++] = Released{f.hash, f.packet.wire_len, f.packet.source};
    free_.push_back(front_slot_);
    if (front_in_ring_) {
      head_ = head_ + 1 == keys_.size() ? 0 : head_ + 1;
      --size_;
    } else {
      std::pop_heap(late_.begin(), late_.end(), after);
      late_.pop_back();
    }
    front_ = nullptr;
    // Give a burst's memory back once the buffer has drained.
    if (empty() && pool_.size() > kShrinkAbove) {
      keys_ = BigArray<Key>(kInitial);
      pool_ = BigArray<Entry>(kInitial);
      head_ = 0;
      free_.clear();
      std::vector<uint32_t>().swap(free_);
      used_ = 0;
    }
    if (late_.empty() && late_.capacity() > kShrinkAbove) std::vector<Key>().swap(late_);
  }

 private:
  struct Entry {
    Packet packet;
    uint64_t hash;
  };
  /// A waiting packet's place in the order, and its slot in the pool.
  struct Key {
    TimeNs ts;
    uint64_t order_key;
    uint32_t seq;
    uint32_t slot;
  };
  static constexpr size_t kInitial = 64;
  static constexpr size_t kShrinkAbove = 1 << 16;
  static constexpr size_t kMaxShift = 16;  ///< further behind than this: the heap
  static constexpr size_t kGroup = 16;     ///< copies recognised among this many of one stamp, flow and PSN

  static bool before(const Key& a, const Key& b) {
    if (a.ts != b.ts) return a.ts < b.ts;
    const uint64_t ka = a.order_key, kb = b.order_key;
    if (ka != kb) {
      // One flow (the key's bits above the PSN): PSN order across the wrap. The plain key would put
      // PSN 0 before 0xFFFFFF at one stamp (back-to-back packets stamped alike), and the last
      // packet before the wrap would then count as a resend. One flow's packets at one stamp are
      // never half the PSN space apart, so this stays a strict order.
      if ((ka ^ kb) >> 24 == 0) return psn::newer(uint32_t(kb) & psn::kMask, uint32_t(ka) & psn::kMask);
      return ka < kb;
    }
    return a.seq < b.seq;
  }
  static bool after(const Key& a, const Key& b) { return before(b, a); }  // min-heap order

  void push_late(const Key& k) {
    late_.push_back(k);
    std::push_heap(late_.begin(), late_.end(), after);
  }

  // A free slot of the pool: the one released last (warm), else a new one.
  uint32_t take_slot() {
    if (!free_.empty()) {
      const uint32_t s = free_.back();
      free_.pop_back();
      return s;
    }
    if (used_ == pool_.size()) {
      pool_.grow_to(used_ == 0 ? kInitial : used_ + used_ / 2);
      front_ = nullptr;  // the pool may have moved
    }
    return uint32_t(used_++);
  }

  // The front entry (the earlier of the ring's and the heap's), found once per packet released.
  const Entry& front_entry() {
    if (!front_) {
      front_in_ring_ = size_ > 0 && (late_.empty() || !before(late_.front(), key(0)));
      front_slot_ = front_in_ring_ ? key(0).slot : late_.front().slot;
      front_ = &pool_[front_slot_];
    }
    return *front_;
  }

  // Slot of the i-th key from the front (i < capacity).
  size_t ring_slot(size_t i) const {
    const size_t j = head_ + i;
    return j >= keys_.size() ? j - keys_.size() : j;
  }
  Key& key(size_t i) { return keys_[ring_slot(i)]; }
  // By half again (not doubled: the ring holds the hold's packets with at most a third unused),
  // in place; the keys from the front to the old end move to the new end, so the ring's order
  // still runs from the front through the end and on from slot 0.
  void grow() {
    const size_t old = keys_.size();
    keys_.grow_to(old == 0 ? kInitial : old + old / 2);
    if (size_ == 0 || head_ == 0) return;
    const size_t moved = old - head_;
    Key* base = &keys_[0];
    std::memmove(static_cast<void*>(base + keys_.size() - moved), base + head_, moved * sizeof(Key));
    head_ = keys_.size() - moved;
  }

  BigArray<Key> keys_;  ///< ring of the keys in order
  size_t head_ = 0;
  size_t size_ = 0;
  std::vector<Key> late_;  ///< min-heap by (stamp, order key, arrival)
  BigArray<Entry> pool_;   ///< the waiting packets, by slot
  size_t used_ = 0;        ///< slots of the pool handed out so far
  std::vector<uint32_t> free_;  ///< released slots, the last released at the back
  const Entry* front_ = nullptr;  ///< cache of front_entry(), cleared by any change at the front
  uint32_t front_slot_ = 0;
  bool front_in_ring_ = false;
  TimeNs group_ts_ = 0;
  uint64_t group_key_ = 0;
  size_t group_size_ = 0;
  struct Released {
    uint64_t hash;
    uint32_t wire_len;
    uint16_t source;
  };
  Released group_[kGroup];
};

}  // namespace rdmatel
