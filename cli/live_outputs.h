// SPDX-License-Identifier: GPL-2.0-or-later
// The outputs besides records on standard output: the Prometheus endpoint and ClickHouse.
#pragma once

#include <atomic>
#include <memory>
#include <string>

#include "cli/live_options.h"
#include "rdmatel/session.h"
#include "rdmatel/writers.h"

namespace rdmatel::prometheus {
class Exporter;
}
namespace rdmatel::clickhouse {
class Inserter;
}

namespace rdmatel::cli {

class LiveOutputs {
 public:
  LiveOutputs();
  ~LiveOutputs();
  /// Starts what `o` asks for (listens, checks the server, creates tables); false with one
  /// sentence in `error`.
  /// `stop` is the run's stop flag (a full ClickHouse queue waits for the server at most the
  /// timeout once it is set); may be null.
  bool open(const LiveOptions& o, const Engine& engine, PointNamer names,
            const std::atomic<bool>* stop, std::string& error);
  void subscribe(Session& session);
  /// From the session's thread: capture counters for the metrics.
  void tick(const Engine& engine, uint64_t packets, uint64_t dropped);
  /// After the run: hands the last rows over (waiting up to the ClickHouse timeout), stops the
  /// endpoint. False when rows could not be delivered (reported).
  bool finish(bool quiet);

 private:
  std::unique_ptr<prometheus::Exporter> prometheus_;
  std::unique_ptr<clickhouse::Inserter> clickhouse_;
};

}  // namespace rdmatel::cli
