// SPDX-License-Identifier: GPL-2.0-or-later
#include <algorithm>

#include "engine/metrics/messages/message_state.h"
#include "engine/src/util/psn.h"

namespace rdmatel::messages {

bool PsnBitmap::mark_elsewhere(uint32_t psn) {
  gather();
  const bool dup = mark_sorted(psn);
  scatter();
  return dup;
}

void PsnBitmap::unmark(uint32_t psn) {
  gather();
  unmark_sorted(psn);
  scatter();
}

bool PsnBitmap::mark_sorted(uint32_t psn) {
  int32_t off = psn::distance(base_, psn);
  if (off >= kMaxSpan || off <= -kMaxSpan) {
    ++distinct_;  // too far from the rest to track: count, never call it a duplicate
    return false;
  }
  // First range ending at or after off - 1 (it may hold off, or be adjacent to it).
  auto it = std::lower_bound(ranges_.begin(), ranges_.end(), off - 1, [](const Range& r, int32_t v) { return r.hi < v; });
  if (it != ranges_.end() && it->lo <= off && off <= it->hi) return true;
  if (it != ranges_.end() && it->hi == off - 1) {  // extends a range upwards
    it->hi = off;
    auto next = std::next(it);
    if (next != ranges_.end() && next->lo == off + 1) {
      it->hi = next->hi;
      ranges_.erase(next);
    }
  } else if (it != ranges_.end() && it->lo == off + 1) {  // extends the next range downwards
    it->lo = off;
  } else if (ranges_.size() < kMaxRanges) {
    ranges_.insert(it, {off, off});
  }
  ++distinct_;
  return false;
}

void PsnBitmap::unmark_sorted(uint32_t psn) {
  if (!has_base_) return;
  int32_t off = psn::distance(base_, psn);
  auto it = std::lower_bound(ranges_.begin(), ranges_.end(), off, [](const Range& r, int32_t v) { return r.hi < v; });
  if (it == ranges_.end() || it->lo > off) return;
  --distinct_;
  if (it->lo == off && it->hi == off) ranges_.erase(it);
  else if (it->lo == off) ++it->lo;
  else if (it->hi == off) --it->hi;
  else {
    Range upper{off + 1, it->hi};
    it->hi = off - 1;
    ranges_.insert(std::next(it), upper);
  }
}

uint32_t PsnBitmap::run_end(uint32_t psn) const {
  if (!has_base_) return psn;
  const int32_t off = psn::distance(base_, psn);
  // The range holding off, if any: the newest, or the first of the others ending at or after it.
  const Range* r = nullptr;
  if (has_newest_ && newest_.lo <= off && off <= newest_.hi) {
    r = &newest_;
  } else {
    auto it = std::lower_bound(ranges_.begin(), ranges_.end(), off, [](const Range& x, int32_t v) { return x.hi < v; });
    if (it != ranges_.end() && it->lo <= off) r = &*it;
  }
  if (!r) return psn;
  return uint32_t((int64_t(base_) + r->hi) & 0xFFFFFF);
}

}  // namespace rdmatel::messages
