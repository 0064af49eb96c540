// SPDX-License-Identifier: GPL-2.0-or-later
// Which tags (SeqIndex::tag: 32 well-mixed bits of a key's hash) a small set may hold: a count per
// value of their low bits. A count of 0 tells a key is not in the set without looking it up. For
// the copies `paths` watches after counting them lost (a few, kept until they come late or make
// way): every new packet asked the watch's hash map, though almost none is in it.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace rdmatel::paths {

class TagFilter {
 public:
  /// The set gained / lost a key with this tag (each removal matches an addition).
  void add(uint32_t tag) { ++counts_[tag & kMask]; }
  void remove(uint32_t tag) { --counts_[tag & kMask]; }
  /// False: no key with this tag is in the set. True: one may be.
  bool may_hold(uint32_t tag) const { return counts_[tag & kMask] != 0; }
  void clear() { counts_.fill(0); }

 private:
  static constexpr size_t kSlots = 4096;
  static constexpr uint32_t kMask = kSlots - 1;
  std::array<uint32_t, kSlots> counts_{};
};

}  // namespace rdmatel::paths
