// SPDX-License-Identifier: GPL-2.0-or-later
// Aggregation of I/O records per host IP, per storage IP and per host–storage pair, and the
// text report the CLI prints. Latency statistics cover read and write I/Os; other commands
// (admin, fabrics, flush, ...) are counted apart.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>

#include "engine/core/records.h"
#include "engine/report/distribution.h"

namespace rdmatel {

/// The latency metrics in report order.
enum class IoMetric : uint8_t { kDal, kDpl, kRtt, kIol1, kIol2, kIol, kCount };
const char* io_metric_name(IoMetric m);  ///< "DAL", "DPL", ...

struct IoGroupStats {
  uint64_t ios = 0;  ///< every tracked command
  uint64_t reads = 0;
  uint64_t writes = 0;
  uint64_t others = 0;
  uint64_t incomplete = 0;
  uint64_t errors = 0;  ///< completions with a non-zero NVMe status
  Distribution metric[size_t(IoMetric::kCount)];

  void add(const IoRecord& r);
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
};

/// The three per-group tables (host, storage, pair), µs with 3 decimals.
std::string render_io_tables(const IoReport& report);

}  // namespace rdmatel
