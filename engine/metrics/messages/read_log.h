// SPDX-License-Identifier: GPL-2.0-or-later
// The READs a stream issued (the last kCapacity), for tying READ RESPONSEs and NAKs to them and
// telling a new READ REQUEST from a copy or a re-issue. Every READ REQUEST asks whether any of
// them holds its PSN, and most are new, so the whole log is read each time: the PSN ranges are
// kept apart from the rest, as two arrays of 32-bit PSNs (2 KB for 256 READs, read in order,
// in vector steps) rather than a deque of 24-byte records (6 KB in 512-byte blocks).
//
// A READ's range runs from its request PSN to its last response's, one response per path MTU
// of its length; the MTU is learned as packets come, so the ranges are those of the MTU last
// given to ranges_for() (worked out again only when it changes).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "engine/src/util/psn.h"

namespace rdmatel::messages {

class ReadLog {
 public:
  static constexpr size_t kCapacity = 256;

  /// The PSN of a READ's last response (one response per MTU of its length; one when either
  /// is unknown).
  static uint32_t last_psn(uint32_t first, uint32_t length, uint32_t mtu) {
    const uint32_t n = mtu && length ? (length + mtu - 1) / mtu : 1;
    return psn::add(first, int64_t(n) - 1);
  }

  /// Makes the ranges those of path MTU `mtu`.
  void ranges_for(uint32_t mtu) {
    if (mtu == mtu_) return;
    mtu_ = mtu;
    for (size_t i = 0; i < first_.size(); ++i) last_[i] = last_psn(first_[i], length_[i], mtu);
  }

  /// Adds a READ (its range for the current MTU); beyond kCapacity the oldest is forgotten.
  void add(uint32_t first, uint32_t length, uint64_t frame) {
    const uint32_t last = last_psn(first, length, mtu_);
    if (first_.size() < kCapacity) {
      first_.push_back(first);
      last_.push_back(last);
      length_.push_back(length);
      frame_.push_back(frame);
      return;
    }
    first_[oldest_] = first;
    last_[oldest_] = last;
    length_[oldest_] = length;
    frame_[oldest_] = frame;
    oldest_ = (oldest_ + 1) % kCapacity;
  }

  /// True when some READ's range holds `psn` (no early exit: the loop vectorizes).
  bool any_holds(uint32_t psn) const {
    bool any = false;
    for (size_t i = 0; i < first_.size(); ++i) any |= holds(i, psn);
    return any;
  }

  /// True when one READ's range holds both `a` and `b`.
  bool one_holds_both(uint32_t a, uint32_t b) const {
    for (size_t i = 0; i < first_.size(); ++i)
      if (holds(i, a) && holds(i, b)) return true;
    return false;
  }

  /// The newest READ whose range holds `psn`, or -1.
  long newest_holding(uint32_t psn) const {
    // Newest first: the slots before oldest_ (replaced last), then the rest down to oldest_.
    for (size_t i = oldest_; i-- > 0;)
      if (holds(i, psn)) return long(i);
    for (size_t i = first_.size(); i-- > oldest_;)
      if (holds(i, psn)) return long(i);
    return -1;
  }
  uint32_t first(long i) const { return first_[size_t(i)]; }
  uint32_t last(long i) const { return last_[size_t(i)]; }
  uint64_t frame(long i) const { return frame_[size_t(i)]; }

 private:
  bool holds(size_t i, uint32_t psn) const { return psn::in_range(psn, first_[i], last_[i]); }

  std::vector<uint32_t> first_, last_, length_;
  std::vector<uint64_t> frame_;
  size_t oldest_ = 0;  ///< once full: the slot of the oldest READ (the next to be replaced)
  uint32_t mtu_ = 0;
};

}  // namespace rdmatel::messages
