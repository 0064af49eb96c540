// SPDX-License-Identifier: GPL-2.0-or-later
// The Prometheus endpoint of rdmatel live: final records become counters and latency
// histograms (SPEC §11: names rdmatel_..., base units seconds and bytes), served at /metrics
// by cpp-httplib from a thread of its own. Records arrive on the session's thread, scrapes on
// the server's: one mutex between them, held briefly.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "adapters/prometheus/registry.h"
#include "rdmatel/engine.h"
#include "rdmatel/records.h"
#include "rdmatel/sink.h"
#include "rdmatel/writers.h"

namespace httplib {
class Server;
}

namespace rdmatel::prometheus {

/// Capture-wide counters, copied from the session's thread at its ticks.
struct CaptureCounters {
  uint64_t packets = 0, dropped = 0, roce = 0, malformed = 0, late = 0;
};

class Exporter final : public RecordSink {
 public:
  Exporter(uint64_t max_series, PointNamer names);
  ~Exporter() override;

  /// Listens on ADDR:PORT (port 0: any free port); false with one sentence in `error`.
  bool listen(const std::string& address, std::string& error);
  /// The port listened on.
  int port() const { return port_; }
  void stop();

  void on_record(const Record& r) override;
  void update(const CaptureCounters& c);
  /// The exposition text, as a scrape gets it.
  std::string scrape();

 private:
  void declare();
  void add_io(const Record& r);
  void add_message(const Record& r);
  void add_congestion(const EcnRecord& c);
  void add_pfc(const PfcRecord& p);

  std::mutex mutex_;
  Registry reg_;
  PointNamer names_;
  struct Families;
  std::unique_ptr<Families> f_;
  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  int port_ = 0;
};

}  // namespace rdmatel::prometheus
