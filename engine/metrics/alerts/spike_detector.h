// SPDX-License-Identifier: GPL-2.0-or-later
// Spike alerts: a scope's mean per period against a rolling baseline of its previous periods
// (median and MAD of up to kHistory of them, robust to the spikes themselves: a spiking period
// does not enter the baseline). A period is judged once a record `lag` periods later arrives for
// its scope (or at the end): the state per scope is the open periods and the baseline, whatever
// the duration of the input (live mode runs for days).
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <limits>
#include <map>
#include <string>
#include <unordered_map>
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
  /// `lag`: periods a record may come after a later one of its scope (the engine holds records
  /// back for the reorder window, and until roles are known for at most the I/O timeout).
  SpikeDetector(const SpikeRule& rule, int64_t lag) : rule_(rule), lag_(lag) {}
  /// Adds one sample of `scope`'s metric in period `period`; periods it closes that spiked are
  /// appended to `out`. False when the sample could not be kept (scope limit, or its period
  /// was already judged).
  bool add(const std::string& scope, int64_t period, double v, std::vector<Spike>& out) {
    const size_t id = series(scope);
    return id != kNoSeries && add(id, period, v, out);
  }
  /// The series of `scope`, made when new; kNoSeries when kMaxScopes are kept already. Callers
  /// that see a scope often keep its id and add by id (no string per sample).
  size_t series(const std::string& scope);
  inline bool add(size_t series, int64_t period, double v, std::vector<Spike>& out);
  /// Judges every period still open (the end of the input).
  void finish(std::vector<Spike>& out);

  static constexpr size_t kHistory = 8;
  static constexpr size_t kMaxScopes = 100'000;
  static constexpr size_t kNoSeries = ~size_t(0);
  int64_t lag() const { return lag_; }

 private:
  struct Cell {
    double sum = 0;
    uint64_t n = 0;
  };
  struct Series {
    std::string scope;
    std::map<int64_t, Cell> open;
    /// The period the last sample went to (records come in bursts of one period): its cell is
    /// found without searching `open`. Map nodes stay put until erased.
    int64_t last_period = 0;
    Cell* last_cell = nullptr;
    /// The last kHistory calm periods' means, oldest overwritten first (their order does not
    /// matter: median and MAD). An array, not a deque: an empty deque holds 600 bytes, and a
    /// series is kept per flow and point (up to kMaxScopes).
    std::array<double, kHistory> history{};
    uint8_t history_size = 0, history_next = 0;
    int64_t judged_before = std::numeric_limits<int64_t>::min();
  };
  /// add() of a sample to another period than the last one of its series.
  bool add_to_period(Series& s, int64_t period, double v, std::vector<Spike>& out);
  void close_oldest(Series& s, std::vector<Spike>& out);

  SpikeRule rule_;
  int64_t lag_;
  std::deque<Series> series_;  ///< by id; stable addresses
  std::unordered_map<std::string, size_t> ids_;
};

// Inline: every I/O and message record adds a sample, nearly always to its series' last period.
bool SpikeDetector::add(size_t id, int64_t period, double v, std::vector<Spike>& out) {
  Series& s = series_[id];
  if (period < s.judged_before) return false;  // later than the lag: its period was judged
  if (!s.last_cell || s.last_period != period) return add_to_period(s, period, v, out);
  // The sample before went to this period and closed what it could: nothing more closes.
  s.last_cell->sum += v;
  ++s.last_cell->n;
  return true;
}

}  // namespace rdmatel::alerts
