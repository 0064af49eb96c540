// SPDX-License-Identifier: GPL-2.0-or-later
#include "engine/metrics/diagnosis/peer_comparison.h"

#include <algorithm>
#include <cmath>

namespace rdmatel::diagnosis {
namespace {

// The i-th value of `sorted` in ascending order with the one at `skip` left out (none when skip
// >= size).
double without_at(const std::vector<double>& sorted, size_t skip, size_t i) {
  return sorted[skip < sorted.size() && i >= skip ? i + 1 : i];
}

}  // namespace

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  const size_t mid = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + long(mid), v.end());
  const double hi = v[mid];
  if (v.size() % 2) return hi;
  const double lo = *std::max_element(v.begin(), v.begin() + long(mid));
  return (lo + hi) / 2;
}

double median_without(const std::vector<double>& sorted, size_t skip) {
  const size_t n = sorted.size() - (skip < sorted.size() ? 1 : 0);
  if (n == 0) return 0;
  const size_t mid = n / 2;
  return n % 2 ? without_at(sorted, skip, mid) : (without_at(sorted, skip, mid - 1) + without_at(sorted, skip, mid)) / 2;
}

Comparison compare_to_peers(double value, double scope_iol1, const std::vector<double>& peers, const PeerRule& rule) {
  std::vector<double> sorted = peers;
  std::sort(sorted.begin(), sorted.end());
  return compare_to_sorted_peers(value, scope_iol1, sorted, sorted.size(), rule);
}

Comparison compare_to_sorted_peers(double value, double scope_iol1, const std::vector<double>& sorted, size_t skip,
                                   const PeerRule& rule) {
  Comparison c;
  const bool skipping = skip < sorted.size();
  c.peers = sorted.size() - (skipping ? 1 : 0);
  if (c.peers == 0) return c;
  c.peer_median = median_without(sorted, skip);
  c.excess = value - c.peer_median;
  // Three tests, all needed: big enough to matter in absolute terms and for this scope's I/Os,
  // and clearly out of line with the peers (a multiple of their median; with enough peers also
  // far outside their spread, so that a capture of uniformly varied peers names nobody).
  if (c.excess < rule.min_excess_ns) return c;
  if (scope_iol1 > 0 && c.excess < rule.material * scope_iol1) return c;
  if (value < rule.factor * c.peer_median) return c;
  if (c.peers >= rule.z_peers) {
    // Only for a scope that passed the other tests: rare, so the O(n) spread is paid rarely.
    std::vector<double> dev;
    dev.reserve(c.peers);
    for (size_t i = 0; i < c.peers; ++i) dev.push_back(std::fabs(without_at(sorted, skip, i) - c.peer_median));
    const double mad = median(std::move(dev));
    if (mad > 0 && c.excess / (1.4826 * mad) < rule.robust_z) return c;
  }
  c.stands_out = true;
  return c;
}

}  // namespace rdmatel::diagnosis
