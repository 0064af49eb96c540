// SPDX-License-Identifier: GPL-2.0-or-later
// Aggregation of RDMA message records per flow and observation point, and the flows section of
// the CLI report: top flows by bytes, worst by FET and by FNR.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <tuple>

#include "engine/core/points.h"
#include "engine/core/records.h"
#include "engine/report/distribution.h"

namespace rdmatel {

struct FlowKeyAtPoint {
  IpAddress src, dst;
  uint32_t dst_qpn = 0;
  PointId point = kNoPoint;
  friend bool operator<(const FlowKeyAtPoint& a, const FlowKeyAtPoint& b) {
    return std::tie(a.src, a.dst, a.dst_qpn, a.point) < std::tie(b.src, b.dst, b.dst_qpn, b.point);
  }
};

struct FlowStats {
  uint64_t messages = 0, partial = 0;
  uint64_t packets = 0, retrans_packets = 0;
  uint64_t bytes = 0, retrans_bytes = 0;
  uint64_t naks = 0;
  Distribution fct;               ///< ns, every message
  uint64_t timed_effective = 0;   ///< effective bytes of messages with FCT > 0
  DurationNs timed_fct = 0;       ///< sum of their FCTs

  void add(const MessageRecord& m);
  /// Effective throughput while messages were in flight: effective bytes of multi-packet
  /// messages * 8 / the sum of their FCTs, bit/s.
  std::optional<double> fet_bps() const;
  /// NAKs / original packets.
  std::optional<double> fnr() const;
};

class FlowReport {
 public:
  void add(const MessageRecord& m) { flows_[{m.src, m.dst, m.dst_qpn, m.point}].add(m); }
  const std::map<FlowKeyAtPoint, FlowStats>& flows() const { return flows_; }

 private:
  std::map<FlowKeyAtPoint, FlowStats> flows_;
};

/// "Flows" section: top `n` by bytes, worst `n` by FET and by FNR.
std::string render_flow_tables(const FlowReport& report, const PointRegistry& points, size_t n);

}  // namespace rdmatel
