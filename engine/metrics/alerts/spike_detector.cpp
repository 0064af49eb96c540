// SPDX-License-Identifier: GPL-2.0-or-later
#include "engine/metrics/alerts/spike_detector.h"

#include <cmath>
#include <deque>

#include "engine/metrics/diagnosis/peer_comparison.h"

namespace rdmatel::alerts {

bool SpikeDetector::add(const std::string& scope, int64_t period, double v) {
  auto& s = series_[scope];
  auto it = s.find(period);
  if (it == s.end()) {
    if (cells_ >= kMaxCells) return false;
    ++cells_;
    it = s.emplace(period, Cell{}).first;
  }
  it->second.sum += v;
  ++it->second.n;
  return true;
}

std::vector<Spike> SpikeDetector::spikes(const SpikeRule& rule) const {
  std::vector<Spike> out;
  for (const auto& [scope, periods] : series_) {
    std::deque<double> history;  // the last kHistory calm periods' means
    for (const auto& [period, cell] : periods) {
      if (cell.n < rule.min_samples) continue;
      const double mean = cell.sum / double(cell.n);
      if (history.size() >= rule.min_history) {
        std::vector<double> h(history.begin(), history.end());
        const double base = diagnosis::median(h);
        std::vector<double> dev;
        for (double x : h) dev.push_back(std::fabs(x - base));
        const double mad = diagnosis::median(std::move(dev));
        const double excess = mean - base;
        const bool spike = mean >= rule.factor * base && excess >= rule.min_excess &&
                           (mad == 0 || excess / (1.4826 * mad) >= rule.robust_z);
        if (spike) {
          out.push_back(Spike{scope, period, mean, base});
          continue;  // a spike does not become the baseline
        }
      }
      history.push_back(mean);
      if (history.size() > kHistory) history.pop_front();
    }
  }
  return out;
}

}  // namespace rdmatel::alerts
