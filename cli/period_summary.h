// SPDX-License-Identifier: GPL-2.0-or-later
// Live mode's line per period: what completed since the last one (I/Os and their latency,
// messages, bytes, losses). Constant memory: counters and sums only, reset each period.
#pragma once

#include <cstdint>
#include <cstdio>
#include <mutex>
#include <string>

#include "rdmatel/sink.h"
#include "rdmatel/types.h"

namespace rdmatel::cli {

/// Fed by the session's thread, read by the thread that prints each period: locked.
class PeriodSummary final : public RecordSink {
 public:
  void on_record(const Record& r) override;
  /// One line for the period that ends now (`packets` and `dropped` are the capture's totals so
  /// far); then starts the next period.
  std::string line(double seconds, uint64_t packets, uint64_t dropped);

 private:
  std::mutex mutex_;
  struct Stat {
    uint64_t n = 0;
    DurationNs sum = 0, max = 0;
    void add(DurationNs v) {
      ++n;
      sum += v;
      if (v > max) max = v;
    }
  };
  struct Counts {
    uint64_t ios = 0, complete = 0, errors = 0;
    Stat iol1, rtt, dal;
    uint64_t messages = 0, bytes = 0, retrans_packets = 0, naks = 0;
  };
  Counts c_;
  uint64_t last_packets_ = 0;
};

}  // namespace rdmatel::cli
