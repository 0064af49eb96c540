// SPDX-License-Identifier: GPL-2.0-or-later
// Does one scope's value stand out against its peers'? The rule of the diagnosis, apart from
// any record so that it can be read and tested on its own (docs/metrics.md, "Diagnosis").
#pragma once

#include <cstddef>
#include <vector>

namespace rdmatel::diagnosis {

struct PeerRule {
  double min_excess_ns = 50000;  ///< an excess smaller than this never matters
  double factor = 2.0;           ///< the value must be at least this many times the peer median
  double material = 0.25;        ///< ... and its excess at least this share of the scope's mean IOL1
  double robust_z = 3.5;         ///< with `z_peers` peers or more: excess / (1.4826 MAD) at least this
  size_t z_peers = 4;
};

struct Comparison {
  bool stands_out = false;
  size_t peers = 0;
  double peer_median = 0;  ///< ns
  double excess = 0;       ///< value - peer median, ns
  bool by_threshold = false;  ///< it stands out because it is above an --alert threshold
  double threshold = 0;       ///< that threshold, ns
};

/// The median of `v` (the mean of the two middle values for an even count); 0 when empty.
double median(std::vector<double> v);
/// The median of `sorted` (ascending) without its element at `skip` (none when skip >= size).
double median_without(const std::vector<double>& sorted, size_t skip);

/// Compares `value` (a scope's mean, ns) with `peers` (the other scopes' means). `scope_iol1` is
/// the scope's mean IOL1 (0 when unknown: materiality is then judged by the excess alone).
Comparison compare_to_peers(double value, double scope_iol1, const std::vector<double>& peers, const PeerRule& rule);

/// The same, with the peers given as every scope's mean in ascending order (`sorted`) but the one
/// at `skip`: a group of n scopes is compared in O(n log n), not O(n^2).
Comparison compare_to_sorted_peers(double value, double scope_iol1, const std::vector<double>& sorted, size_t skip,
                                   const PeerRule& rule);

}  // namespace rdmatel::diagnosis
