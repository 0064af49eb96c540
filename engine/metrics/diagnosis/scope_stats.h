// SPDX-License-Identifier: GPL-2.0-or-later
// What the diagnosis keeps per scope (host, storage, pair): sums, never samples, so that its
// state grows with the number of scopes only.
#pragma once

#include <cstdint>

#include "rdmatel/records.h"

namespace rdmatel::diagnosis {

/// The segments of an I/O's latency, each judged by one metric.
enum Segment : uint8_t { kStorage, kNetwork, kHost, kSegments };
const char* segment_name(Segment s);  ///< "storage", "network", "host"
const char* segment_metric(Segment s);  ///< "dal", "rtt", "dpl"

struct Mean {
  double sum = 0;
  uint64_t n = 0;
  DurationNs max = 0;
  uint64_t max_frame = 0;  ///< the command frame of the I/O with the largest value
  void add(DurationNs v, uint64_t frame) {
    sum += double(v);
    if (!n || v > max) {
      max = v;
      max_frame = frame;
    }
    ++n;
  }
  double value() const { return n ? sum / double(n) : 0; }
};

struct ScopeStats {
  uint64_t ios = 0;
  uint64_t split_ios = 0;  ///< with IOL1, IOL2 and RTT: their time can be split
  double iol1_sum = 0, rtt_sum = 0, dpl_sum = 0;  ///< over the split I/Os
  Mean by_segment[kSegments];  ///< DAL, RTT, DPL over every I/O that has them
  Mean iol1;

  void add(const IoMetrics& m, uint64_t cmd_frame) {
    ++ios;
    if (m.dal) by_segment[kStorage].add(*m.dal, cmd_frame);
    if (m.rtt) by_segment[kNetwork].add(*m.rtt, cmd_frame);
    if (m.dpl) by_segment[kHost].add(*m.dpl, cmd_frame);
    if (m.iol1) iol1.add(*m.iol1, cmd_frame);
    if (m.iol1 && m.iol2 && m.rtt && *m.iol1 > 0) {
      ++split_ios;
      iol1_sum += double(*m.iol1);
      rtt_sum += double(*m.rtt);
      dpl_sum += double(m.dpl.value_or(0));
    }
  }
};

/// What was seen on the path between two IPs (both directions) at the point that saw most of it.
struct PathEvidence {
  uint64_t packets = 0, retrans_packets = 0, naks = 0;
  uint64_t ect_packets = 0, ce_packets = 0, cnps = 0;
  uint64_t worst_retrans = 0;        ///< the most retransmitted packets of one message
  uint64_t worst_retrans_frame = 0;  ///< that message's first frame

  /// Field by field maximum: the same packets are seen at several points, so counts of
  /// different points are not added up.
  void max_with(const PathEvidence& o);
  void add(const PathEvidence& o);
  void keep_worst(const PathEvidence& o);
  bool any_trouble() const { return retrans_packets || naks || ce_packets || cnps; }
};

}  // namespace rdmatel::diagnosis
