// SPDX-License-Identifier: GPL-2.0-or-later
// PFC pause frames per period at one observation point, for the congestion timeline of the
// flows' periods (FlowPeriodRecord::pfc_pauses): a flow's period shows the pauses its point saw
// in the same period. A period's count is read when the flow period is emitted, after the
// point's horizon passed the period's end, so every pause of the period is counted by then.
#pragma once

#include <cstdint>
#include <deque>
#include <utility>

namespace rdmatel::messages {

class PausesByPeriod {
 public:
  /// Periods remembered per point: stamps within one point are handled in order (reorder
  /// buffer), so a few suffice; older counts are dropped, bounding the state.
  static constexpr size_t kMaxPeriods = 64;

  void add(int64_t period) {
    for (auto it = counts_.rbegin(); it != counts_.rend(); ++it) {
      if (it->first == period) {
        ++it->second;
        return;
      }
      if (it->first < period) {
        counts_.insert(it.base(), {period, 1});
        trim();
        return;
      }
    }
    counts_.emplace_front(period, 1);
    trim();
  }
  uint64_t in(int64_t period) const {
    for (const auto& [p, n] : counts_)
      if (p == period) return n;
    return 0;
  }

 private:
  void trim() {
    while (counts_.size() > kMaxPeriods) counts_.pop_front();
  }
  std::deque<std::pair<int64_t, uint64_t>> counts_;  ///< (period index, pause frames), ascending
};

}  // namespace rdmatel::messages
