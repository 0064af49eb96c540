// SPDX-License-Identifier: GPL-2.0-or-later
// Aggregation of records for reports and tables (the CLI's analyze, the Wireshark statistics,
// the analyzer's views): per host IP, storage IP and host-storage pair for I/Os; per flow and
// point for messages. The maths lives here, once; front ends only lay it out.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "rdmatel/records.h"

namespace rdmatel {

/// A distribution of durations (ns): count, min, max, mean, percentiles. Exact (every sample
/// kept) up to a limit, then a log-linear histogram with ~0.8% relative error, so memory stays
/// bounded on captures of any size.
class Distribution {
 public:
  static constexpr size_t kExactLimit = 1 << 16;

  void add(DurationNs v);
  uint64_t count() const { return count_; }
  DurationNs min() const { return min_; }
  DurationNs max() const { return max_; }
  /// Mean in ns (double: exact enough for any realistic sum).
  double mean() const { return count_ ? double(sum_) / double(count_) : 0.0; }
  /// Nearest-rank percentile: the smallest sample with at least p% of samples at or below it.
  /// Exact while exact() holds.
  DurationNs percentile(double p) const;
  bool exact() const { return histogram_.empty(); }

 private:
  static int32_t bucket_of(DurationNs v);
  static DurationNs bucket_value(int32_t b);
  void count_in_histogram(DurationNs v);

  uint64_t count_ = 0;
  __int128 sum_ = 0;
  DurationNs min_ = 0, max_ = 0;
  /// The exact samples, in no order (percentile() selects in place): in 32 bits while every one
  /// fits (latencies under 2.1 s: half the memory of the report's many per-flow distributions),
  /// else all in 64 bits.
  mutable std::vector<int32_t> narrow_;
  mutable std::vector<DurationNs> wide_;
  /// Past kExactLimit samples: a count per log-linear bucket, every bucket of the int64 range in
  /// bucket order (about 7,600 counters, 60 KB, whatever the number of samples).
  std::vector<uint64_t> histogram_;
};

/// A cache of pointers into its owner's containers (the entries of the last record's groups):
/// a copy of the owner starts without it.
template <typename T>
struct CacheNotCopied {
  std::optional<T> value;
  CacheNotCopied() = default;
  CacheNotCopied(const CacheNotCopied&) {}
  CacheNotCopied& operator=(const CacheNotCopied&) {
    value.reset();
    return *this;
  }
};

/// The latency metrics in report order.
enum class IoMetric : uint8_t { kDal, kDpl, kRtt, kIol1, kIol2, kIol, kCount };
const char* io_metric_name(IoMetric m);  ///< "DAL", "DPL", ...

/// I/Os of one group (a host, a storage server, a pair). Latency statistics cover read and
/// write I/Os; other commands (admin, fabrics, flush, ...) are counted apart.
struct IoGroupStats {
  uint64_t ios = 0;  ///< every tracked command
  uint64_t reads = 0;
  uint64_t writes = 0;
  uint64_t others = 0;
  uint64_t incomplete = 0;
  uint64_t errors = 0;  ///< completions with a non-zero NVMe status
  Distribution metric[size_t(IoMetric::kCount)];

  void add(const IoRecord& r);
  /// With the record's metrics already worked out (io_metrics(r)).
  void add(const IoRecord& r, const IoMetrics& m);
  const Distribution& operator[](IoMetric m) const { return metric[size_t(m)]; }
};

class IoReport {
 public:
  void add(const IoRecord& r);

  const IoGroupStats& total() const { return total_; }
  const std::map<IpAddress, IoGroupStats>& by_host() const { return by_host_; }
  const std::map<IpAddress, IoGroupStats>& by_storage() const { return by_storage_; }
  const std::map<std::pair<IpAddress, IpAddress>, IoGroupStats>& by_pair() const { return by_pair_; }

 private:
  IoGroupStats total_;
  std::map<IpAddress, IoGroupStats> by_host_;
  std::map<IpAddress, IoGroupStats> by_storage_;
  std::map<std::pair<IpAddress, IpAddress>, IoGroupStats> by_pair_;
  /// The last record's host and storage and their groups.
  struct LastGroups {
    IpAddress host, storage;
    IoGroupStats *host_stats, *storage_stats, *pair_stats;
  };
  CacheNotCopied<LastGroups> last_;
};

struct FlowKeyAtPoint {
  IpAddress src, dst;
  uint32_t dst_qpn = 0;
  PointId point = kNoPoint;
  friend bool operator<(const FlowKeyAtPoint& a, const FlowKeyAtPoint& b) {
    return std::tie(a.src, a.dst, a.dst_qpn, a.point) < std::tie(b.src, b.dst, b.dst_qpn, b.point);
  }
  friend bool operator==(const FlowKeyAtPoint& a, const FlowKeyAtPoint& b) {
    return a.dst_qpn == b.dst_qpn && a.point == b.point && a.src == b.src && a.dst == b.dst;
  }
  struct Hash {
    size_t operator()(const FlowKeyAtPoint& k) const noexcept {
      return hash_mix(hash_ip(k.src) * 31 + hash_ip(k.dst) + (uint64_t(k.dst_qpn) << 20) + k.point);
    }
  };
};

struct FlowStats {
  uint64_t messages = 0, partial = 0;
  uint64_t packets = 0, retrans_packets = 0;
  uint64_t bytes = 0, retrans_bytes = 0;
  uint64_t naks = 0;
  Distribution fct;              ///< ns, every message
  uint64_t timed_effective = 0;  ///< effective bytes of messages with FCT > 0
  DurationNs timed_fct = 0;      ///< sum of their FCTs
  uint8_t kinds = 0;             ///< the message kinds seen, bit 1 << MessageKind
  TimeNs first_ns = 0, last_ns = 0;  ///< the flow's first and last data packet at the point

  void add(const MessageRecord& m);
  /// The flow's FET (docs/metrics.md "Flow throughput"): effective bytes of its multi-packet
  /// messages * 8 / the sum of their FCTs, bit/s: how fast data moved while messages were in
  /// flight. Absent when every message was a single packet (FCT 0).
  std::optional<double> fet_bps() const;
  /// The share of the flow's effective bytes that its FET covers (in multi-packet messages).
  double fet_coverage() const;
  /// The flow's rate: all its effective bytes * 8 / (last - first packet), bit/s; the same
  /// quantity as a flow period's fet_bps, over the flow's span. Absent for a span of 0.
  std::optional<double> rate_bps() const;
  /// NAKs / original packets.
  std::optional<double> fnr() const;
};

class FlowReport {
 public:
  void add(const MessageRecord& m) {
    // A flow's messages are reported in bursts (an ACK finishes several): the last flow's entry
    // first (entries of a map never move).
    const FlowKeyAtPoint key{m.src, m.dst, m.dst_qpn, m.point};
    std::optional<LastFlow>& last = last_.value;
    if (!last || !(last->key == key)) last = LastFlow{key, &flows_[key]};
    last->stats->add(m);
  }
  /// Every flow and point, sorted. One sorted table, not a hash table and a sorted copy of it:
  /// a row is 320 bytes and there is one per flow-point (up to max_flows).
  const std::map<FlowKeyAtPoint, FlowStats>& flows() const { return flows_; }

 private:
  std::map<FlowKeyAtPoint, FlowStats> flows_;
  /// The last message's flow and its entry.
  struct LastFlow {
    FlowKeyAtPoint key;
    FlowStats* stats;
  };
  CacheNotCopied<LastFlow> last_;
};

/// I/Os and messages per GPU, node or AI job (SPEC §7, `analyze --by`). An I/O belongs to its
/// host's GPU / node / job; a message to its GPU pair / node pair ("a > b") and, when both ends
/// are in one job, to that job. Messages are counted per observation point, as in FlowReport.
enum class Dimension : uint8_t { kGpu, kNode, kJob };

class DimensionReport {
 public:
  explicit DimensionReport(Dimension d) : dim_(d) {}
  void add(const IoRecord& r);
  void add(const MessageRecord& m);

  Dimension dimension() const { return dim_; }
  /// Per GPU, node or job (unbound hosts are left out).
  const std::map<std::string, IoGroupStats>& ios() const { return ios_; }
  /// Per GPU pair, node pair or job, and point.
  const std::map<std::pair<std::string, PointId>, FlowStats>& messages() const { return messages_; }
  /// Per job: its GPU pairs and points (kJob only), to find a job's slowest pair.
  const std::map<std::string, std::map<std::pair<std::string, PointId>, FlowStats>>& job_pairs() const {
    return job_pairs_;
  }

 private:
  Dimension dim_;
  std::map<std::string, IoGroupStats> ios_;
  std::map<std::pair<std::string, PointId>, FlowStats> messages_;
  std::map<std::string, std::map<std::pair<std::string, PointId>, FlowStats>> job_pairs_;
};

}  // namespace rdmatel
