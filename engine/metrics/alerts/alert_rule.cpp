// SPDX-License-Identifier: GPL-2.0-or-later
#include "rdmatel/alert_rule.h"

#include <cmath>
#include <cstdlib>

namespace rdmatel::alerts {
namespace {

constexpr const char* kNames[] = {"dal", "dpl", "iol1", "iol2", "rtt", "iol", "fct", "fet", "fnr"};

std::optional<double> us(const std::optional<DurationNs>& ns) {
  if (!ns) return std::nullopt;
  return double(*ns) / 1000.0;
}

}  // namespace

std::vector<AlertRule> alert_rules(const std::vector<std::string>& texts) {
  std::vector<AlertRule> out;
  std::string ignored;
  for (const std::string& t : texts)
    if (auto r = AlertRule::parse(t, ignored)) out.push_back(std::move(*r));
  return out;
}

const char* metric_name(Metric m) { return kNames[size_t(m)]; }
bool is_io_metric(Metric m) { return m <= Metric::kIol; }

std::optional<AlertRule> AlertRule::parse(std::string_view text, std::string& error) {
  AlertRule r;
  r.text = std::string(text);
  const size_t op = text.find_first_of("<>");
  if (op == std::string_view::npos) {
    error = "an alert is [SCOPE=VALUE:]METRIC>VALUE or METRIC<VALUE, e.g. rtt>50 or storage=10.2.0.1:dal>500 (got '" +
            r.text + "')";
    return std::nullopt;
  }
  r.above = text[op] == '>';
  std::string number(text.substr(op + 1));
  char* end = nullptr;
  r.threshold = std::strtod(number.c_str(), &end);
  if (number.empty() || end == number.c_str() || !std::isfinite(r.threshold)) {
    error = "the threshold of alert '" + r.text + "' is not a number";
    return std::nullopt;
  }
  const std::string unit(end);
  std::string_view left = text.substr(0, op);
  // The metric follows the last ':' (an IPv6 scope has colons of its own).
  const size_t colon = left.rfind(':');
  std::string_view metric = colon == std::string_view::npos ? left : left.substr(colon + 1);
  bool known = false;
  for (size_t i = 0; i < std::size(kNames); ++i)
    if (metric == kNames[i]) {
      r.metric = Metric(i);
      known = true;
    }
  if (!known) {
    error = "alert '" + r.text + "': unknown metric '" + std::string(metric) +
            "' (metrics: dal, dpl, iol1, iol2, rtt, iol, fct, fet, fnr)";
    return std::nullopt;
  }
  if (!unit.empty()) {
    // Latencies are compared in µs; a unit may say so or scale the number ("2ms").
    const bool latency = r.metric != Metric::kFet && r.metric != Metric::kFnr;
    const double scale = !latency ? 0 : unit == "us" || unit == "\u00b5s" ? 1 : unit == "ms" ? 1e3 : unit == "s" ? 1e6
                                                                         : unit == "ns" ? 1e-3 : 0;
    if (scale == 0) {
      error = "alert '" + r.text + "': unknown unit '" + unit + "' (" +
              (latency ? "latencies take ns, us, ms or s; the default is us)" : "FET is in bit/s and FNR a ratio: no unit)");
      return std::nullopt;
    }
    r.threshold *= scale;
  }
  if (colon == std::string_view::npos) return r;
  std::string_view scope = left.substr(0, colon);
  const size_t eq = scope.find('=');
  if (eq == std::string_view::npos || eq + 1 == scope.size()) {
    error = "alert '" + r.text + "': the scope is KEY=VALUE (host, storage, src, dst or job)";
    return std::nullopt;
  }
  r.scope_key = std::string(scope.substr(0, eq));
  const std::string value(scope.substr(eq + 1));
  if (r.scope_key == "job") {
    r.scope_name = value;
  } else if (r.scope_key == "host" || r.scope_key == "storage" || r.scope_key == "src" || r.scope_key == "dst") {
    if (!IpAddress::parse(value, r.scope_ip)) {
      error = "alert '" + r.text + "': '" + value + "' is not an IP address";
      return std::nullopt;
    }
    const bool io_scope = r.scope_key == "host" || r.scope_key == "storage";
    if (io_scope != is_io_metric(r.metric)) {
      error = "alert '" + r.text + "': " + r.scope_key + "= scopes " + (io_scope ? "I/O" : "message") +
              " metrics (" + (io_scope ? "dal, dpl, iol1, iol2, rtt, iol" : "fct, fet, fnr") + ")";
      return std::nullopt;
    }
  } else {
    error = "alert '" + r.text + "': unknown scope '" + r.scope_key + "' (host, storage, src, dst, job)";
    return std::nullopt;
  }
  return r;
}

std::optional<double> AlertRule::value(const IoRecord& r, const IoMetrics& m) const {
  if (!is_io_metric(metric)) return std::nullopt;
  if (scope_key == "host" && r.host != scope_ip) return std::nullopt;
  if (scope_key == "storage" && r.storage != scope_ip) return std::nullopt;
  if (scope_key == "job" && (!r.job || scope_name != r.job)) return std::nullopt;
  switch (metric) {
    case Metric::kDal: return us(m.dal);
    case Metric::kDpl: return us(m.dpl);
    case Metric::kIol1: return us(m.iol1);
    case Metric::kIol2: return us(m.iol2);
    case Metric::kRtt: return us(m.rtt);
    case Metric::kIol: return us(m.iol);
    default: return std::nullopt;
  }
}

std::optional<double> AlertRule::value(const MessageRecord& r) const {
  if (is_io_metric(metric)) return std::nullopt;
  if (scope_key == "src" && r.src != scope_ip) return std::nullopt;
  if (scope_key == "dst" && r.dst != scope_ip) return std::nullopt;
  if (scope_key == "job" && (!r.gpu.job || scope_name != r.gpu.job)) return std::nullopt;
  switch (metric) {
    case Metric::kFct: return double(r.fct_ns()) / 1000.0;
    case Metric::kFet: return r.fet_bps();
    case Metric::kFnr: return r.fnr();
    default: return std::nullopt;
  }
}

}  // namespace rdmatel::alerts
