// SPDX-License-Identifier: GPL-2.0-or-later
#include "engine/metrics/alerts/spike_detector.h"

#include <algorithm>
#include <cmath>

#include "engine/metrics/diagnosis/peer_comparison.h"

namespace rdmatel::alerts {

size_t SpikeDetector::series(const std::string& scope) {
  auto it = ids_.find(scope);
  if (it != ids_.end()) return it->second;
  if (series_.size() >= kMaxScopes) return kNoSeries;
  series_.emplace_back().scope = scope;
  return ids_.emplace(scope, series_.size() - 1).first->second;
}

bool SpikeDetector::add_to_period(Series& s, int64_t period, double v, std::vector<Spike>& out) {
  s.last_cell = &s.open[period];
  s.last_period = period;
  Cell& c = *s.last_cell;
  c.sum += v;
  ++c.n;
  while (!s.open.empty() && s.open.begin()->first < period - lag_) close_oldest(s, out);
  return true;
}

void SpikeDetector::finish(std::vector<Spike>& out) {
  // In scope order, so that the end's spikes do not depend on the order scopes first came.
  std::vector<Series*> by_scope;
  for (Series& s : series_) by_scope.push_back(&s);
  std::sort(by_scope.begin(), by_scope.end(), [](const Series* a, const Series* b) { return a->scope < b->scope; });
  for (Series* s : by_scope)
    while (!s->open.empty()) close_oldest(*s, out);
}

void SpikeDetector::close_oldest(Series& s, std::vector<Spike>& out) {
  const auto [period, cell] = *s.open.begin();
  s.open.erase(s.open.begin());
  if (s.last_period == period) s.last_cell = nullptr;
  s.judged_before = period + 1;
  if (cell.n < rule_.min_samples) return;
  const double mean = cell.sum / double(cell.n);
  if (s.history_size >= rule_.min_history) {
    std::vector<double> h(s.history.begin(), s.history.begin() + s.history_size);
    const double base = diagnosis::median(h);
    std::vector<double> dev;
    for (double x : h) dev.push_back(std::fabs(x - base));
    const double mad = diagnosis::median(std::move(dev));
    const double excess = mean - base;
    if (mean >= rule_.factor * base && excess >= rule_.min_excess &&
        (mad == 0 || excess / (1.4826 * mad) >= rule_.robust_z)) {
      out.push_back(Spike{s.scope, period, mean, base});
      return;  // a spike does not become the baseline
    }
  }
  s.history[s.history_next] = mean;
  s.history_next = uint8_t((s.history_next + 1) % kHistory);
  if (s.history_size < kHistory) ++s.history_size;
}

}  // namespace rdmatel::alerts
