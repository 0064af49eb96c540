// SPDX-License-Identifier: GPL-2.0-or-later
#include "engine/metrics/diagnosis/peer_comparison.h"

#include <algorithm>
#include <cmath>

namespace rdmatel::diagnosis {

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  const size_t mid = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + long(mid), v.end());
  const double hi = v[mid];
  if (v.size() % 2) return hi;
  const double lo = *std::max_element(v.begin(), v.begin() + long(mid));
  return (lo + hi) / 2;
}

Comparison compare_to_peers(double value, double scope_iol1, const std::vector<double>& peers, const PeerRule& rule) {
  Comparison c;
  c.peers = peers.size();
  if (peers.empty()) return c;
  c.peer_median = median(peers);
  c.excess = value - c.peer_median;
  // Three tests, all needed: big enough to matter in absolute terms and for this scope's I/Os,
  // and clearly out of line with the peers (a multiple of their median; with enough peers also
  // far outside their spread, so that a capture of uniformly varied peers names nobody).
  if (c.excess < rule.min_excess_ns) return c;
  if (scope_iol1 > 0 && c.excess < rule.material * scope_iol1) return c;
  if (value < rule.factor * c.peer_median) return c;
  if (peers.size() >= rule.z_peers) {
    std::vector<double> dev;
    dev.reserve(peers.size());
    for (double p : peers) dev.push_back(std::fabs(p - c.peer_median));
    const double mad = median(std::move(dev));
    if (mad > 0 && c.excess / (1.4826 * mad) < rule.robust_z) return c;
  }
  c.stands_out = true;
  return c;
}

}  // namespace rdmatel::diagnosis
