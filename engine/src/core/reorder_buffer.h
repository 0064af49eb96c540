// SPDX-License-Identifier: GPL-2.0-or-later
// One observation point's packets, held until the point's watermark has passed them by the
// reorder window, and released in stamp order (ties in arrival order). Captures stamp packets
// when they are queued, and dumpcap interleaves interfaces in blocks, so a point's stamps go
// backwards by microseconds to tens of milliseconds: sorting them here means no component ever
// sees file order, and a result never depends on it. Packets with equal stamps are ordered by
// flow and PSN, not by arrival.
//
// The same packet given twice (a file given twice, overlapping ring files) arrives with the
// same stamp and the same bytes: it is recognised here and dropped.
#pragma once

#include <cstdint>
#include <deque>

#include "engine/src/decode/packet.h"

namespace rdmatel {

class ReorderBuffer {
 public:
  /// Inserts a packet whose frame bytes hash to `hash`. Returns false (nothing inserted) when
  /// an identical packet (same stamp, length and bytes) is already waiting here.
  bool insert(const Packet& p, uint64_t hash) {
    // Mostly in order: walk back from the end over the few packets that sort after it.
    auto it = entries_.end();
    while (it != entries_.begin()) {
      auto prev = std::prev(it);
      const Packet& q = prev->packet;
      if (q.ts < p.ts) break;
      if (q.ts == p.ts) {
        if (prev->hash == hash && q.wire_len == p.wire_len) return false;
        if (before(q, p)) {
          // It goes here; equal stamps further back may still hold its duplicate.
          for (auto d = prev; d != entries_.begin();) {
            --d;
            if (d->packet.ts != p.ts) break;
            if (d->hash == hash && d->packet.wire_len == p.wire_len) return false;
          }
          break;
        }
      }
      it = prev;
    }
    entries_.insert(it, Entry{p, hash});
    return true;
  }

  /// Order of two packets with the same stamp: by flow and PSN (a flow's packets pass a point
  /// in PSN order), so that not even equal stamps leave the order to the file; then arrival.
  static bool before(const Packet& a, const Packet& b) {
    if (a.order_key != b.order_key) return a.order_key < b.order_key;
    return a.seq < b.seq;
  }

  bool empty() const { return entries_.empty(); }
  size_t size() const { return entries_.size(); }
  const Packet& front() const { return entries_.front().packet; }
  void pop_front() { entries_.pop_front(); }

 private:
  struct Entry {
    Packet packet;
    uint64_t hash;
  };
  std::deque<Entry> entries_;
};

}  // namespace rdmatel
