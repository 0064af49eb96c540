// SPDX-License-Identifier: GPL-2.0-or-later
#include "engine/metrics/alerts/spike_detector.h"

#include <cmath>

#include "engine/metrics/diagnosis/peer_comparison.h"

namespace rdmatel::alerts {

bool SpikeDetector::add(const std::string& scope, int64_t period, double v, std::vector<Spike>& out) {
  auto it = series_.find(scope);
  if (it == series_.end()) {
    if (series_.size() >= kMaxScopes) return false;
    it = series_.emplace(scope, Series{}).first;
  }
  Series& s = it->second;
  if (period < s.judged_before) return false;  // later than the lag: its period was judged
  Cell& c = s.open[period];
  c.sum += v;
  ++c.n;
  while (!s.open.empty() && s.open.begin()->first < period - lag_) close_oldest(scope, s, out);
  return true;
}

void SpikeDetector::finish(std::vector<Spike>& out) {
  for (auto& [scope, s] : series_)
    while (!s.open.empty()) close_oldest(scope, s, out);
}

void SpikeDetector::close_oldest(const std::string& scope, Series& s, std::vector<Spike>& out) {
  const auto [period, cell] = *s.open.begin();
  s.open.erase(s.open.begin());
  s.judged_before = period + 1;
  if (cell.n < rule_.min_samples) return;
  const double mean = cell.sum / double(cell.n);
  if (s.history.size() >= rule_.min_history) {
    std::vector<double> h(s.history.begin(), s.history.end());
    const double base = diagnosis::median(h);
    std::vector<double> dev;
    for (double x : h) dev.push_back(std::fabs(x - base));
    const double mad = diagnosis::median(std::move(dev));
    const double excess = mean - base;
    if (mean >= rule_.factor * base && excess >= rule_.min_excess &&
        (mad == 0 || excess / (1.4826 * mad) >= rule_.robust_z)) {
      out.push_back(Spike{scope, period, mean, base});
      return;  // a spike does not become the baseline
    }
  }
  s.history.push_back(mean);
  if (s.history.size() > kHistory) s.history.pop_front();
}

}  // namespace rdmatel::alerts
