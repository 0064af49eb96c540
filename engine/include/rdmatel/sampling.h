// SPDX-License-Identifier: GPL-2.0-or-later
// Key flows and port polling, as the switches of SPEC §7 measure: key flows (`--key-flow
// SRC[>DST]`, IP prefixes) are always measured; with polling (`--poll-ports N`) each period
// (`--period`) measures the next N observation points in order, round-robin. I/O quality without
// polling measures only key flows — unless none is configured: then everything (the default).
// Throughput makes no key-flow distinction: everything, or with polling the polled points.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rdmatel/types.h"

namespace rdmatel {

/// An IP prefix, "10.1.0.0/16", "fd00::/8" or a single address.
struct IpPrefix {
  IpAddress net;
  unsigned bits = 0;
  static std::optional<IpPrefix> parse(std::string_view text);
  bool contains(const IpAddress& a) const;
};

/// A key-flow rule SRC[>DST]; it matches traffic between the two in either direction (an I/O
/// and a message both need their two directions).
struct KeyFlowRule {
  IpPrefix src;
  std::optional<IpPrefix> dst;
  /// Parses a rule; nullopt with one sentence in `error`.
  static std::optional<KeyFlowRule> parse(std::string_view text, std::string& error);
  bool matches(const IpAddress& a, const IpAddress& b) const;
};

/// Whether point `point` (0-based, in declaration order) is polled in period `k` when `n` of `points` points are polled per period: the periods take
/// points k*n .. k*n+n-1, modulo the number of points (10 points, n = 4: 0-3, 4-7, 8, 9, 0, 1, ...).
bool polled_in(size_t point, int64_t k, size_t n, size_t points);

class Sampling {
 public:
  Sampling(const std::vector<std::string>& key_flows, uint64_t poll_ports, DurationNs period);

  bool has_key_flows() const { return !rules_.empty(); }
  bool polling() const { return ports_ > 0; }
  bool key_flow(const IpAddress& a, const IpAddress& b) const;
  /// The start of the polling period of stamp `t` (ns), when polling is on.
  std::optional<TimeNs> period_start(TimeNs t) const;
  /// Whether the packet of `point` stamped `t` is measured by I/O quality (key flows, polling)
  /// or by throughput (`io` false: polling only). The first call fixes period 0.
  /// Periods are counted from the epoch, so the schedule never depends on the order files are read in.
  bool measured(bool io, PointId point, size_t points, TimeNs t, const IpAddress& a, const IpAddress& b) const;

 private:
  int64_t period_index(TimeNs t) const;
  std::vector<KeyFlowRule> rules_;
  uint64_t ports_;
  DurationNs period_;
};

}  // namespace rdmatel
