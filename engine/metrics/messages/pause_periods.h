// SPDX-License-Identifier: GPL-2.0-or-later
// PFC pause frames per period at one observation point, for the congestion timeline of the
// flows' periods (FlowPeriodRecord::pfc_pauses): a flow's period shows the pauses of its own
// priority its point saw in the same period (every pause where its frames carry no VLAN tag:
// the switch then takes their priority from the DSCP with a table the capture does not show).
// A period's count is read when the flow period is emitted, after the point's horizon passed
// the period's end, so every pause of the period is counted by then.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <optional>

namespace rdmatel::messages {

class PausesByPeriod {
 public:
  /// Periods remembered per point: stamps within one point are handled in order (reorder
  /// buffer), so a few suffice; older counts are dropped, bounding the state.
  static constexpr size_t kMaxPeriods = 64;

  /// A pause frame in `period` pausing the priorities of `paused` (bit q: priority q).
  void add(int64_t period, uint8_t paused) {
    Count& c = count(period);
    ++c.any;
    for (int q = 0; q < 8; ++q)
      if (paused >> q & 1) ++c.by_priority[q];
  }
  /// Pause frames of `priority` in `period`; of any priority without one.
  uint64_t in(int64_t period, std::optional<uint8_t> priority) const {
    for (const Count& c : counts_)
      if (c.period == period) return priority ? c.by_priority[*priority & 7] : c.any;
    return 0;
  }

 private:
  struct Count {
    int64_t period = 0;
    uint64_t any = 0;  ///< frames pausing some priority (one frame may pause several)
    std::array<uint64_t, 8> by_priority{};
  };
  Count& count(int64_t period) {
    for (auto it = counts_.rbegin(); it != counts_.rend(); ++it) {
      if (it->period == period) return *it;
      if (it->period < period) return trimmed(*counts_.insert(it.base(), Count{period}));
    }
    return trimmed(counts_.emplace_front(Count{period}));
  }
  // Keeps at most kMaxPeriods, the newest (pop_front leaves references to the others valid).
  Count& trimmed(Count& c) {
    if (counts_.size() <= kMaxPeriods) return c;
    const bool oldest = &c == &counts_.front();
    counts_.pop_front();
    return oldest ? scratch_ : c;  // an older period than any kept: counted nowhere
  }
  std::deque<Count> counts_;  ///< ascending by period
  Count scratch_;
};

}  // namespace rdmatel::messages
