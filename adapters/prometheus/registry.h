// SPDX-License-Identifier: GPL-2.0-or-later
// Metrics in Prometheus' text exposition format: counters, gauges and histograms with labels,
// the number of label sets bounded (a set beyond the limit is not created; what it would have
// counted is counted as dropped and exposed). No locking and no network: the exporter does both.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace rdmatel::prometheus {

enum class MetricType { kCounter, kGauge, kHistogram };

class Registry {
 public:
  explicit Registry(uint64_t max_series) : max_series_(max_series) {}

  /// Declares a family (name with its unit suffix, e.g. rdmatel_nvme_iol1_seconds); returns its
  /// index. Histograms take their bucket upper bounds (ascending; +Inf is implicit).
  size_t family(std::string name, std::string help, MetricType type,
                std::vector<std::string> labels, std::span<const double> buckets = {});
  /// A family without labels about rdmatel itself (capture counters, the limit): its one series
  /// does not count against the limit, so the limit is always reported.
  size_t own_family(std::string name, std::string help, MetricType type);

  /// Adds to a counter, sets a gauge, or observes a histogram value. `labels` follow the
  /// family's label names. False when the label set was refused by the limit (counted).
  bool add(size_t family, const std::vector<std::string>& labels, double v);
  bool set(size_t family, const std::vector<std::string>& labels, double v);
  bool observe(size_t family, const std::vector<std::string>& labels, double v);

  uint64_t series() const { return series_; }
  uint64_t dropped() const { return dropped_; }
  uint64_t max_series() const { return max_series_; }

  /// The exposition text (families in declaration order, series in label order).
  std::string render() const;

 private:
  struct Series {
    double value = 0;
    std::vector<uint64_t> buckets;  ///< histogram: per bound, not cumulative
    uint64_t count = 0;
    double sum = 0;
  };
  struct Family {
    std::string name, help;
    MetricType type;
    std::vector<std::string> labels;
    std::vector<double> bounds;
    std::map<std::vector<std::string>, Series> series;
    bool exempt = false;
  };
  Series* find(size_t family, const std::vector<std::string>& labels);

  std::vector<Family> families_;
  uint64_t max_series_;
  uint64_t series_ = 0;
  uint64_t dropped_ = 0;
};

/// A label value or help text escaped for the exposition format.
std::string escape_label(const std::string& v);
/// A sample value: shortest round-trip form, "+Inf"/"-Inf"/"NaN".
std::string format_value(double v);

}  // namespace rdmatel::prometheus
