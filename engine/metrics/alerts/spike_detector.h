// SPDX-License-Identifier: GPL-2.0-or-later
// Spike alerts: a scope's mean per period against a rolling baseline of its previous periods
// (median and MAD of up to kHistory of them, robust to the spikes themselves: a spiking period
// does not enter the baseline). Sums per period only; the number of cells is bounded.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "rdmatel/types.h"

namespace rdmatel::alerts {

struct SpikeRule {
  double factor = 3;             ///< the period's mean must be at least this many times the baseline
  double min_excess = 50;        ///< ... and this much above it (the metric's unit)
  double robust_z = 3.5;         ///< ... and this many robust deviations when the baseline varies
  uint64_t min_samples = 3;      ///< records a period needs to count
  size_t min_history = 3;        ///< periods of baseline before anything can spike
};

struct Spike {
  std::string scope;
  int64_t period = 0;  ///< period index (start = index x period length)
  double value = 0, baseline = 0;
};

class SpikeDetector {
 public:
  /// Adds one sample of `scope`'s metric in period `period`; false when the cell limit is hit.
  bool add(const std::string& scope, int64_t period, double v);
  /// Every spike, by scope (in name order) and period.
  std::vector<Spike> spikes(const SpikeRule& rule) const;

  static constexpr size_t kHistory = 8;
  static constexpr size_t kMaxCells = 1'000'000;

 private:
  struct Cell {
    double sum = 0;
    uint64_t n = 0;
  };
  std::map<std::string, std::map<int64_t, Cell>> series_;
  size_t cells_ = 0;
};

}  // namespace rdmatel::alerts
