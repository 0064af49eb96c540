// SPDX-License-Identifier: GPL-2.0-or-later
#include "cli/live_outputs.h"

#include <cstdio>

#include "adapters/clickhouse/inserter.h"
#include "adapters/prometheus/exporter.h"

namespace rdmatel::cli {
namespace {
// Rows gathered in a period reach ClickHouse within about this long, however few they are.
constexpr double kClickHouseFlushS = 1.0;
}  // namespace

LiveOutputs::LiveOutputs() = default;
LiveOutputs::~LiveOutputs() = default;

bool LiveOutputs::open(const LiveOptions& o, const Engine&, PointNamer names,
                       const std::atomic<bool>* stop, std::string& error) {
  if (!o.prometheus.empty()) {
    prometheus_ = std::make_unique<prometheus::Exporter>(o.prometheus_max_series, names);
    if (!prometheus_->listen(o.prometheus, error)) return false;
    std::string host = o.prometheus.substr(0, o.prometheus.rfind(':'));
    std::fprintf(stderr, "rdmatel: Prometheus metrics at http://%s:%d/metrics\n", host.c_str(),
                 prometheus_->port());
  }
  if (!o.clickhouse.empty()) {
    clickhouse::InserterOptions co;
    co.url = o.clickhouse;
    co.batch_rows = o.clickhouse_batch;
    co.timeout_s = o.clickhouse_timeout_s;
    co.stop = stop;
    clickhouse_ = std::make_unique<clickhouse::Inserter>(co, names);
    if (!clickhouse_->open(error)) return false;
  }
  return true;
}

void LiveOutputs::subscribe(Session& session) {
  if (prometheus_) session.subscribe(*prometheus_);
  if (clickhouse_) session.subscribe(*clickhouse_);
}

void LiveOutputs::tick(const Engine& engine, uint64_t packets, uint64_t dropped) {
  if (prometheus_) {
    const EngineStats& s = engine.stats();
    prometheus_->update(prometheus::CaptureCounters{packets, dropped, s.roce, s.malformed, s.late});
  }
  if (clickhouse_) clickhouse_->flush_if_due(kClickHouseFlushS);
}

bool LiveOutputs::finish(bool quiet) {
  if (prometheus_) prometheus_->stop();
  if (!clickhouse_) return true;
  const bool ok = clickhouse_->finish();
  const clickhouse::InserterStats s = clickhouse_->stats();
  if (!ok) {
    std::fprintf(stderr, "rdmatel: error: %llu records were not inserted into ClickHouse (%s)\n",
                 (unsigned long long)s.rows_lost, s.last_error.c_str());
  } else if (!quiet) {
    std::fprintf(stderr,
                 "rdmatel: %llu records inserted into ClickHouse in %llu batches (%llu retries)\n",
                 (unsigned long long)s.rows_sent, (unsigned long long)s.batches_sent,
                 (unsigned long long)s.retries);
  }
  return ok;
}

}  // namespace rdmatel::cli
