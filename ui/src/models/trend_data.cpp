// SPDX-License-Identifier: GPL-2.0-or-later
#include "models/trend_data.h"

#include <algorithm>
#include <cstdint>
#include <cmath>
#include <map>

namespace rdmatel::ui {

DurationNs trend_interval(double span_seconds, int buckets) {
  double target = std::max(span_seconds * 1e9 / std::max(buckets, 1), 1000.0);
  double decade = std::pow(10.0, std::floor(std::log10(target)));
  for (double step : {1.0, 2.0, 5.0, 10.0})
    if (step * decade >= target) return DurationNs(step * decade);
  return DurationNs(10 * decade);
}

std::optional<TimeNs> io_time(const IoRecord& r) {
  if (r.t.has(1)) return r.t[1];
  for (int i = 2; i <= 7; ++i)
    if (r.t.has(i)) return r.t[i];
  return std::nullopt;
}

TrendData build_trend(const Analysis& a, Grouping g, IoMetric metric, Stat stat,
                      DurationNs interval, size_t max_series) {
  TrendData out;
  out.interval_ns = std::max<DurationNs>(interval, 1);
  const TimeNs origin = a.summary.first_ts;
  struct Group {
    QString name;
    std::map<int64_t, IoGroupStats> buckets;
    uint64_t samples = 0;
  };
  std::map<std::pair<IpAddress, IpAddress>, Group> groups;
  for (const IoRecord& r : a.ios) {
    std::optional<TimeNs> t = io_time(r);
    if (!t) continue;
    IpAddress none;
    std::pair<IpAddress, IpAddress> key{g == Grouping::kStorage ? none : r.host,
                                        g == Grouping::kHost ? none : r.storage};
    Group& grp = groups[key];
    if (grp.name.isEmpty())
      grp.name = g == Grouping::kHost ? QString::fromStdString(r.host.to_string())
                 : g == Grouping::kStorage
                     ? QString::fromStdString(r.storage.to_string())
                     : QString::fromStdString(r.host.to_string() + " → " + r.storage.to_string());
    // Floor division: an I/O stamped before the first packet of another point's clock.
    int64_t d;  // saturated: a hostile file's stamps may span the whole 64-bit range
    if (__builtin_sub_overflow(*t, origin, &d)) d = *t > origin ? INT64_MAX : INT64_MIN;
    int64_t b = d >= 0 ? d / out.interval_ns : -((-d + out.interval_ns - 1) / out.interval_ns);
    IoGroupStats& s = grp.buckets[b];
    uint64_t before = s[metric].count();
    s.add(r);
    grp.samples += s[metric].count() - before;
  }
  for (auto& [key, grp] : groups) {
    if (!grp.samples) continue;
    TrendSeries s;
    s.name = grp.name;
    s.samples = grp.samples;
    for (const auto& [b, st] : grp.buckets) {
      std::optional<double> v = stat_us(st[metric], stat);
      if (v && st[metric].count())
        s.points.emplace_back(double(b) * double(out.interval_ns) / 1e9, *v);
    }
    out.series.push_back(std::move(s));
  }
  out.groups = out.series.size();
  std::stable_sort(
      out.series.begin(), out.series.end(),
      [](const TrendSeries& x, const TrendSeries& y) { return x.samples > y.samples; });
  if (out.series.size() > max_series) out.series.resize(max_series);
  return out;
}

std::vector<QPointF> flow_throughput(const Analysis& a, const FlowKeyAtPoint& flow) {
  std::vector<QPointF> pts;
  for (const FlowPeriodRecord& p : a.flow_periods)
    if (p.src == flow.src && p.dst == flow.dst && p.dst_qpn == flow.dst_qpn &&
        p.point == flow.point)
      pts.emplace_back((double(p.period_start_ns) - double(a.summary.first_ts)) / 1e9, p.fet_bps() / 1e9);
  std::sort(pts.begin(), pts.end(),
            [](const QPointF& x, const QPointF& y) { return x.x() < y.x(); });
  return pts;
}

}  // namespace rdmatel::ui
