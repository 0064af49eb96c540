// SPDX-License-Identifier: GPL-2.0-or-later
// An index from a key's hash to a creation number, for the packets `paths` keeps waiting (up to
// --max-path-packets, 262,144 by default, in a hash table every RoCE packet looks up). The keys
// themselves stay with their entries in the caller's creation-order queue: a slot is 8 bytes
// (32 bits of hash, 32 bits of creation number), so the table of a quarter million packets is
// 4 MB, eight slots share a cache line, and a probe touches one line where slots holding the
// keys (48 bytes each) touched several. A slot whose hash matches is confirmed by the caller
// comparing the real key (32-bit hashes of different keys rarely match).
// Linear probing, power-of-two capacity, at most half full, deletion by backward shift.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace rdmatel::paths {

class SeqIndex {
 public:
  /// The creation number of the entry with this hash for which is_key(seq) is true; else adds
  /// `fresh` under this hash and returns it (`added` tells which).
  template <typename IsKey>
  uint32_t find_or_add(uint64_t hash, uint32_t fresh, IsKey&& is_key, bool& added) {
    if ((size_ + 1) * 2 > slots_.size()) grow();
    const uint32_t h = tag(hash);
    for (size_t i = h & mask_;; i = (i + 1) & mask_) {
      Slot& s = slots_[i];
      if (s.hash == 0) {
        s = Slot{h, fresh};
        ++size_;
        added = true;
        return fresh;
      }
      if (s.hash == h && is_key(s.seq)) {
        added = false;
        return s.seq;
      }
    }
  }

  /// Removes the entry (hash, seq), which is there.
  void erase(uint64_t hash, uint32_t seq) {
    const uint32_t h = tag(hash);
    size_t i = h & mask_;
    while (!(slots_[i].hash == h && slots_[i].seq == seq)) i = (i + 1) & mask_;
    // Backward shift: move later members of the probe run into the hole.
    for (size_t j = (i + 1) & mask_;; j = (j + 1) & mask_) {
      Slot& next = slots_[j];
      if (next.hash == 0) break;
      const size_t home = next.hash & mask_;
      // `next` may move to `i` when its home lies cyclically outside (i, j].
      if (i <= j ? (home <= i || home > j) : (home <= i && home > j)) {
        slots_[i] = next;
        i = j;
      }
    }
    slots_[i] = Slot{};
    --size_;
  }

  /// The 32 bits of a hash the index keeps (top bit set). tag(tag(h)) == tag(h): a caller may
  /// keep the tag with its key and hand it back as the hash.
  static uint32_t tag(uint64_t hash) { return uint32_t(hash ^ hash >> 32) | 0x80000000u; }

  size_t size() const { return size_; }
  void clear() {
    slots_ = {};
    mask_ = 0;
    size_ = 0;
  }

 private:
  struct Slot {
    uint32_t hash = 0;  ///< 0: empty (stored hashes have the top bit set)
    uint32_t seq = 0;
  };
  void grow() {
    std::vector<Slot> old;
    old.swap(slots_);
    slots_.resize(old.empty() ? 1024 : old.size() * 2);
    mask_ = slots_.size() - 1;
    for (const Slot& s : old)
      if (s.hash) {
        size_t i = s.hash & mask_;
        while (slots_[i].hash) i = (i + 1) & mask_;
        slots_[i] = s;
      }
  }

  std::vector<Slot> slots_;
  size_t mask_ = 0;
  size_t size_ = 0;
};

}  // namespace rdmatel::paths
