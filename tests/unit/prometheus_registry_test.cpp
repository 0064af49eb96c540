// SPDX-License-Identifier: GPL-2.0-or-later
// The Prometheus exposition text, worked out by hand: label escaping, cumulative histogram
// buckets with inclusive upper bounds, the label-set limit and what it reports.
#include <gtest/gtest.h>

#include "adapters/prometheus/registry.h"

using namespace rdmatel::prometheus;

TEST(PrometheusRegistry, CounterWithEscapedLabels) {
  Registry r(10);
  size_t f = r.family("rdmatel_x_total", "Things.", MetricType::kCounter, {"host"});
  r.add(f, {"a\"b\\c\nd"}, 2);
  r.add(f, {"a\"b\\c\nd"}, 3);
  EXPECT_EQ(r.render(),
            "# HELP rdmatel_x_total Things.\n# TYPE rdmatel_x_total counter\n"
            "rdmatel_x_total{host=\"a\\\"b\\\\c\\nd\"} 5\n");
}

TEST(PrometheusRegistry, HistogramBucketsAreCumulativeAndInclusive) {
  Registry r(10);
  const double bounds[] = {0.25, 1};
  size_t f = r.family("rdmatel_l_seconds", "Latency.", MetricType::kHistogram, {"host"}, bounds);
  for (double v : {0.25, 0.125, 0.5, 2.0}) r.observe(f, {"h"}, v);  // exact in binary
  // <= 0.25: 0.125 and 0.25 (inclusive); <= 1: + 0.5; +Inf: all 4; sum 2.875.
  EXPECT_EQ(r.render(),
            "# HELP rdmatel_l_seconds Latency.\n# TYPE rdmatel_l_seconds histogram\n"
            "rdmatel_l_seconds_bucket{host=\"h\",le=\"0.25\"} 2\n"
            "rdmatel_l_seconds_bucket{host=\"h\",le=\"1\"} 3\n"
            "rdmatel_l_seconds_bucket{host=\"h\",le=\"+Inf\"} 4\n"
            "rdmatel_l_seconds_sum{host=\"h\"} 2.875\n"
            "rdmatel_l_seconds_count{host=\"h\"} 4\n");
}

TEST(PrometheusRegistry, LimitRefusesNewLabelSetsAndCountsThem) {
  Registry r(2);
  size_t f = r.family("rdmatel_c_total", "C.", MetricType::kCounter, {"k"});
  size_t own = r.own_family("rdmatel_packets_total", "P.", MetricType::kCounter);
  EXPECT_TRUE(r.add(f, {"a"}, 1));
  EXPECT_TRUE(r.add(f, {"b"}, 1));
  EXPECT_FALSE(r.add(f, {"c"}, 1));
  EXPECT_FALSE(r.add(f, {"d"}, 1));
  EXPECT_TRUE(r.add(f, {"a"}, 1));  // an existing set still counts
  EXPECT_TRUE(r.set(own, {}, 7));   // rdmatel's own series are not limited
  EXPECT_EQ(r.series(), 2u);
  EXPECT_EQ(r.dropped(), 2u);
  EXPECT_NE(r.render().find("rdmatel_c_total{k=\"a\"} 2\n"), std::string::npos);
  EXPECT_EQ(r.render().find("k=\"c\""), std::string::npos);
}

TEST(PrometheusRegistry, ValuesRoundTrip) {
  EXPECT_EQ(format_value(0.1), "0.1");
  EXPECT_EQ(format_value(12345678901234.0), "12345678901234");
  EXPECT_EQ(format_value(1.0 / 0.0), "+Inf");
}
