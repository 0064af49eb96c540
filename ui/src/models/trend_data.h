// SPDX-License-Identifier: GPL-2.0-or-later
// Series for the charts. A latency trend puts each I/O in the interval of its command stamp and
// lets the engine aggregate each interval (IoGroupStats, the same as the tables): the UI only
// sorts records into time buckets. Flow throughput is the engine's per-period record.
#pragma once

#include <QPointF>
#include <QString>
#include <vector>

#include "core/analysis.h"
#include "models/cell_format.h"
#include "models/group_stats_model.h"

namespace rdmatel::ui {

struct TrendSeries {
  QString name;                 ///< the host, storage or pair
  std::vector<QPointF> points;  ///< x: seconds since the capture's first packet; y: µs
  uint64_t samples = 0;         ///< I/Os with the metric
};

struct TrendData {
  DurationNs interval_ns = 0;
  std::vector<TrendSeries> series;  ///< the busiest groups first
  size_t groups = 0;                ///< groups with the metric (more than shown when capped)
};

/// An interval giving about `buckets` points over the capture: 1, 2 or 5 × a power of ten, ≥ 1 µs.
DurationNs trend_interval(double span_seconds, int buckets = 60);

/// When an I/O happened, for the time axis: its command at the compute side (T1), else its first
/// stamp (each point's own clock: offsets between points shift that point's I/Os only).
std::optional<TimeNs> io_time(const IoRecord& r);

/// `metric`'s statistic per interval for each group with samples, at most `max_series` series.
TrendData build_trend(const Analysis& a, Grouping g, IoMetric metric, Stat stat,
                      DurationNs interval, size_t max_series = 8);

/// The engine's effective throughput per period of one flow at its point: x seconds since the
/// capture's first packet, y Gb/s.
std::vector<QPointF> flow_throughput(const Analysis& a, const FlowKeyAtPoint& flow);

}  // namespace rdmatel::ui
