// SPDX-License-Identifier: GPL-2.0-or-later
// A threshold alert rule (SPEC §7): `[SCOPE=VALUE:]METRIC>VALUE` or `...METRIC<VALUE`, e.g.
// `rtt>50`, `fnr>0.001`, `storage=10.2.0.1:dal>500`, `job=llm:fet<1e9`. Latencies and FCT in µs,
// FET in bit/s, FNR a ratio. Scopes: host, storage (I/Os), src, dst (messages), job (both).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rdmatel/records.h"

namespace rdmatel::alerts {

enum class Metric : uint8_t { kDal, kDpl, kIol1, kIol2, kRtt, kIol, kFct, kFet, kFnr };
const char* metric_name(Metric m);  ///< as in the records without unit suffix: "dal", ..., "fnr"
bool is_io_metric(Metric m);

struct AlertRule {
  Metric metric = Metric::kRtt;
  bool above = true;  ///< '>' (else '<')
  double threshold = 0;
  std::string scope_key;  ///< "", "host", "storage", "src", "dst", "job"
  IpAddress scope_ip;     ///< for host, storage, src, dst
  std::string scope_name; ///< for job
  std::string text;       ///< the rule as given

  /// Parses a rule; nullopt with one sentence in `error` when it is not one.
  static std::optional<AlertRule> parse(std::string_view text, std::string& error);

  /// The metric's value for a record (absent when the record lacks it or the scope does not match).
  std::optional<double> value(const IoRecord& r, const IoMetrics& m) const;
  std::optional<double> value(const MessageRecord& r) const;
  bool fires(double v) const { return above ? v > threshold : v < threshold; }
};

/// The `alert` setting's rules that parse (front ends report the others as usage errors).
std::vector<AlertRule> alert_rules(const std::vector<std::string>& texts);

}  // namespace rdmatel::alerts
