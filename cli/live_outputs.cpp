// SPDX-License-Identifier: GPL-2.0-or-later
#include "cli/live_outputs.h"

#include <cstdio>

#include "adapters/prometheus/exporter.h"

namespace rdmatel::clickhouse {
class Inserter {};
}

namespace rdmatel::cli {

LiveOutputs::LiveOutputs() = default;
LiveOutputs::~LiveOutputs() = default;

bool LiveOutputs::open(const LiveOptions& o, const Engine&, PointNamer names, std::string& error) {
  if (!o.prometheus.empty()) {
    prometheus_ = std::make_unique<prometheus::Exporter>(o.prometheus_max_series, names);
    if (!prometheus_->listen(o.prometheus, error)) return false;
    std::string host = o.prometheus.substr(0, o.prometheus.rfind(':'));
    std::fprintf(stderr, "rdmatel: Prometheus metrics at http://%s:%d/metrics\n", host.c_str(), prometheus_->port());
  }
  return true;
}

void LiveOutputs::subscribe(Session& session) {
  if (prometheus_) session.subscribe(*prometheus_);
}

void LiveOutputs::tick(const Engine& engine, uint64_t packets, uint64_t dropped) {
  if (prometheus_) {
    const EngineStats& s = engine.stats();
    prometheus_->update(prometheus::CaptureCounters{packets, dropped, s.roce, s.malformed, s.late});
  }
}

bool LiveOutputs::finish(bool) {
  if (prometheus_) prometheus_->stop();
  return true;
}

}  // namespace rdmatel::cli
