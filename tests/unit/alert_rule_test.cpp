// SPDX-License-Identifier: GPL-2.0-or-later
// Alert rules (SPEC §7): thresholds are µs for latencies unless a unit says otherwise; scopes
// and errors. Expected values are worked by hand.
#include <gtest/gtest.h>

#include "rdmatel/alert_rule.h"

namespace rdmatel::alerts {
namespace {

double threshold_of(const char* text) {
  std::string error;
  auto r = AlertRule::parse(text, error);
  EXPECT_TRUE(r) << text << ": " << error;
  return r ? r->threshold : -1;
}

std::string error_of(const char* text) {
  std::string error;
  EXPECT_FALSE(AlertRule::parse(text, error)) << text;
  return error;
}

TEST(AlertRule, LatencyUnitsScaleToMicroseconds) {
  EXPECT_DOUBLE_EQ(threshold_of("dal>200"), 200);
  EXPECT_DOUBLE_EQ(threshold_of("dal>200us"), 200);
  EXPECT_DOUBLE_EQ(threshold_of("rtt>50\u00b5s"), 50);
  EXPECT_DOUBLE_EQ(threshold_of("iol1>2ms"), 2000);
  EXPECT_DOUBLE_EQ(threshold_of("fct>1.5s"), 1.5e6);
  EXPECT_DOUBLE_EQ(threshold_of("dpl>500ns"), 0.5);
  EXPECT_DOUBLE_EQ(threshold_of("storage=10.2.0.1:dal>1ms"), 1000);
  EXPECT_DOUBLE_EQ(threshold_of("fet<1e9"), 1e9);
}

TEST(AlertRule, UnknownUnitsAndNumbersAreErrors) {
  EXPECT_NE(error_of("dal>200m").find("unknown unit 'm'"), std::string::npos);
  EXPECT_NE(error_of("fet<1Gb/s").find("FET is in bit/s"), std::string::npos);
  EXPECT_NE(error_of("rtt>fast").find("not a number"), std::string::npos);
  EXPECT_NE(error_of("rtt>").find("not a number"), std::string::npos);
}

TEST(AlertRule, ScopeMustFitTheMetric) {
  EXPECT_NE(error_of("storage=10.2.0.1:fct>1").find("scopes I/O metrics"), std::string::npos);
  EXPECT_NE(error_of("host=10.1.0.999:rtt>1").find("not an IP address"), std::string::npos);
}

}  // namespace
}  // namespace rdmatel::alerts
