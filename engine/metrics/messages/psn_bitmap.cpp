// SPDX-License-Identifier: GPL-2.0-or-later
#include <algorithm>

#include "engine/metrics/messages/message_state.h"
#include "engine/src/util/psn.h"

namespace rdmatel::messages {

bool PsnBitmap::mark(uint32_t psn) {
  if (!has_base_) {
    has_base_ = true;
    base_ = psn;
  }
  int32_t off = psn::distance(base_, psn);
  if (off >= kMaxSpan || off <= -kMaxSpan) {
    ++distinct_;  // too far from the rest to track: count, never call it a duplicate
    return false;
  }
  // First range ending at or after off - 1 (it may hold off, or be adjacent to it).
  auto it = std::lower_bound(ranges_.begin(), ranges_.end(), off - 1,
                             [](const std::pair<int32_t, int32_t>& r, int32_t v) { return r.second < v; });
  if (it != ranges_.end() && it->first <= off && off <= it->second) return true;
  if (it != ranges_.end() && it->second == off - 1) {  // extends a range upwards
    it->second = off;
    auto next = std::next(it);
    if (next != ranges_.end() && next->first == off + 1) {
      it->second = next->second;
      ranges_.erase(next);
    }
  } else if (it != ranges_.end() && it->first == off + 1) {  // extends the next range downwards
    it->first = off;
  } else if (ranges_.size() < kMaxRanges) {
    ranges_.insert(it, {off, off});
  }
  ++distinct_;
  return false;
}

void PsnBitmap::unmark(uint32_t psn) {
  if (!has_base_) return;
  int32_t off = psn::distance(base_, psn);
  auto it = std::lower_bound(ranges_.begin(), ranges_.end(), off,
                             [](const std::pair<int32_t, int32_t>& r, int32_t v) { return r.second < v; });
  if (it == ranges_.end() || it->first > off) return;
  --distinct_;
  if (it->first == off && it->second == off) ranges_.erase(it);
  else if (it->first == off) ++it->first;
  else if (it->second == off) --it->second;
  else {
    std::pair<int32_t, int32_t> upper{off + 1, it->second};
    it->second = off - 1;
    ranges_.insert(std::next(it), upper);
  }
}

uint32_t PsnBitmap::run_end(uint32_t psn) const {
  if (!has_base_) return psn;
  const int32_t off = psn::distance(base_, psn);
  auto it = std::lower_bound(ranges_.begin(), ranges_.end(), off,
                             [](const std::pair<int32_t, int32_t>& r, int32_t v) { return r.second < v; });
  if (it == ranges_.end() || it->first > off) return psn;
  return uint32_t((int64_t(base_) + it->second) & 0xFFFFFF);
}

}  // namespace rdmatel::messages
