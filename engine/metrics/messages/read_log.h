// SPDX-License-Identifier: GPL-2.0-or-later
// The READs a stream issued (the last kCapacity), for tying READ RESPONSEs and NAKs to them and
// telling a new READ REQUEST from a copy or a re-issue. Every READ REQUEST asks whether any of
// them holds its PSN, and most are new, so the whole log is read each time: the PSN ranges are
// kept apart from the rest, as two arrays of 32-bit numbers (a READ's first PSN and how many
// PSNs it takes), asked in blocks of kBlock without an early exit, which the compiler turns into
// vector steps (an unused slot takes no PSN: it holds nothing). The arrays are allocated with the
// first READ: most streams (every response stream) never see one. Before reading them, a PSN is
// compared with bounds that enclose every range (Bounds): a new READ REQUEST's PSN, past all the
// READs before it, is told in a few instructions.
//
// A READ's range runs from its request PSN to its last response's, one response per path MTU
// of its length; the MTU is learned as packets come, so the ranges are those of the MTU last
// given to ranges_for() (worked out again only when it changes).
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "engine/src/util/psn.h"

namespace rdmatel::messages {

class ReadLog {
 public:
  static constexpr size_t kCapacity = 256;

  /// The PSN of a READ's last response (one response per MTU of its length; one when either
  /// is unknown).
  static uint32_t last_psn(uint32_t first, uint32_t length, uint32_t mtu) {
    return psn::add(first, int64_t(responses(length, mtu)) - 1);
  }

  /// Makes the ranges those of path MTU `mtu`.
  void ranges_for(uint32_t mtu) {
    if (mtu == mtu_) return;
    mtu_ = mtu;
    for (size_t i = 0; i < size_; ++i) slots_->span[i] = span(slots_->length[i], mtu);
    enclose_all();
  }

  /// Adds a READ (its range for the current MTU); beyond kCapacity the oldest is forgotten.
  void add(uint32_t first, uint32_t length, uint64_t frame) {
    if (!slots_) slots_ = std::make_unique<Slots>();
    size_t i = size_;
    if (size_ < kCapacity) {
      ++size_;
    } else {
      i = oldest_;
      oldest_ = (oldest_ + 1) % kCapacity;
    }
    slots_->first[i] = first;
    slots_->span[i] = span(length, mtu_);
    slots_->length[i] = length;
    slots_->frame[i] = frame;
    if (oldest_ == 0 && size_ == kCapacity) enclose_all();  // once per round: forgotten READs drop out
    else bounds_.widen(first, slots_->span[i]);
  }

  /// True when some READ's range holds `psn`.
  bool any_holds(uint32_t psn) const {
    if (bounds_.outside(psn)) return false;
    int32_t any[kBlock] = {};  // by lane: -1 once a READ held it (a vector register)
    for (size_t b = 0; b < size_; b += kBlock)
      for (size_t j = 0; j < kBlock; ++j) any[j] |= -int32_t(holds(b + j, psn));
    int32_t some = 0;
    for (size_t j = 0; j < kBlock; ++j) some |= any[j];
    return some != 0;
  }

  /// True when one READ's range holds both `a` and `b`.
  bool one_holds_both(uint32_t a, uint32_t b) const {
    if (bounds_.outside(a) || bounds_.outside(b)) return false;
    for (size_t i = 0; i < size_; ++i)
      if (holds(i, a) && holds(i, b)) return true;
    return false;
  }

  /// The newest READ whose range holds `psn`, or -1.
  long newest_holding(uint32_t psn) const {
    if (bounds_.outside(psn)) return -1;
    // Newest first: the slots before oldest_ (replaced last), then the rest down to oldest_.
    for (size_t i = oldest_; i-- > 0;)
      if (holds(i, psn)) return long(i);
    for (size_t i = size_; i-- > oldest_;)
      if (holds(i, psn)) return long(i);
    return -1;
  }
  uint32_t first(long i) const { return slots_->first[size_t(i)]; }
  uint32_t last(long i) const { return psn::add(first(i), int64_t(slots_->span[size_t(i)]) - 1); }
  uint64_t frame(long i) const { return slots_->frame[size_t(i)]; }

 private:
  static constexpr size_t kBlock = 8;  ///< divides kCapacity
  static uint32_t responses(uint32_t length, uint32_t mtu) { return mtu && length ? (length + mtu - 1) / mtu : 1; }
  /// How many PSNs a READ takes, as psn::in_range counts them from its first to its last (so
  /// modulo the PSN space): 1 to 2^24.
  static int32_t span(uint32_t length, uint32_t mtu) { return int32_t((responses(length, mtu) - 1) & psn::kMask) + 1; }
  /// psn::in_range(psn, first, last), compared as signed numbers (both sides are below 2^25),
  /// which vector units compare in one step.
  bool holds(size_t i, uint32_t psn) const {
    return int32_t((psn - slots_->first[i]) & psn::kMask) < slots_->span[i];
  }

  /// PSNs that enclose every READ's range: [anchor + lo, anchor + hi), as offsets from a READ's
  /// first PSN, widened by each READ added (so conservative: a READ forgotten may still widen
  /// them, until enclose_all()). A PSN outside is held by no READ. Spanning the whole PSN space
  /// they enclose every PSN (`all`).
  struct Bounds {
    uint32_t anchor = 0;
    int64_t lo = 0, hi = 0;  ///< empty when equal: no READ
    bool all = false;

    void widen(uint32_t first, int32_t span) {
      if (all) return;
      if (lo == hi) {
        anchor = first;
        lo = 0;
        hi = span;
        return;
      }
      const int64_t at = psn::distance(anchor, first);
      lo = std::min(lo, at);
      hi = std::max(hi, at + span);
      all = hi - lo >= int64_t(1) << 24;
    }
    bool outside(uint32_t psn) const {
      return !all && ((psn - anchor - uint32_t(lo)) & psn::kMask) >= uint64_t(hi - lo);
    }
  };
  void enclose_all() {
    bounds_ = Bounds{};
    for (size_t i = 0; i < size_; ++i) bounds_.widen(slots_->first[i], slots_->span[i]);
  }

  struct Slots {
    std::array<uint32_t, kCapacity> first{}, length{};
    std::array<int32_t, kCapacity> span{};
    std::array<uint64_t, kCapacity> frame{};
  };
  std::unique_ptr<Slots> slots_;
  Bounds bounds_;
  size_t size_ = 0;    ///< slots used
  size_t oldest_ = 0;  ///< once full: the slot of the oldest READ (the next to be replaced)
  uint32_t mtu_ = 0;
};

}  // namespace rdmatel::messages
