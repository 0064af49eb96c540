// SPDX-License-Identifier: GPL-2.0-or-later
#include "engine/report/io_report.h"

#include <cstdio>

#include "engine/report/number_format.h"

namespace rdmatel {

const char* io_metric_name(IoMetric m) {
  switch (m) {
    case IoMetric::kDal: return "DAL";
    case IoMetric::kDpl: return "DPL";
    case IoMetric::kRtt: return "RTT";
    case IoMetric::kIol1: return "IOL1";
    case IoMetric::kIol2: return "IOL2";
    case IoMetric::kIol: return "IOL";
    case IoMetric::kCount: break;
  }
  return "?";
}

void IoGroupStats::add(const IoRecord& r) {
  ++ios;
  if (!r.complete) ++incomplete;
  else if (r.status != 0) ++errors;
  if (!r.is_read() && !r.is_write()) {
    ++others;
    return;
  }
  ++(r.is_read() ? reads : writes);
  IoMetrics m = io_metrics(r);
  const std::optional<DurationNs>* values[] = {&m.dal, &m.dpl, &m.rtt, &m.iol1, &m.iol2, &m.iol};
  for (size_t i = 0; i < size_t(IoMetric::kCount); ++i)
    if (*values[i]) metric[i].add(**values[i]);
}

void IoReport::add(const IoRecord& r) {
  total_.add(r);
  by_host_[r.host].add(r);
  by_storage_[r.storage].add(r);
  by_pair_[{r.host, r.storage}].add(r);
}

namespace {

void table(std::string& out, const char* title, const char* key_header,
           const std::vector<std::pair<std::string, const IoGroupStats*>>& rows) {
  char line[512];
  out += title;
  out += "\n";
  std::snprintf(line, sizeof line, "  %-33s %7s %6s %6s %6s %6s  %-5s %12s %12s %12s %12s %7s\n", key_header,
                "I/Os", "read", "write", "other", "incmpl", "", "avg", "p50", "p99", "max", "n");
  out += line;
  for (const auto& [key, g] : rows) {
    bool first = true;
    for (size_t i = 0; i < size_t(IoMetric::kCount); ++i) {
      const Distribution& d = g->metric[i];
      // IOL equals IOL1 wherever roles are known; show it only for single-point I/Os.
      if (IoMetric(i) == IoMetric::kIol && d.count() == (*g)[IoMetric::kIol1].count()) continue;
      std::string avg = d.count() ? format_us(d.mean()) : "-";
      std::string p50 = d.count() ? format_us(d.percentile(50)) : "-";
      std::string p99 = d.count() ? format_us(d.percentile(99)) : "-";
      std::string mx = d.count() ? format_us(d.max()) : "-";
      if (first) {
        std::snprintf(line, sizeof line, "  %-33s %7llu %6llu %6llu %6llu %6llu  %-5s %12s %12s %12s %12s %7llu\n",
                      key.c_str(), (unsigned long long)g->ios, (unsigned long long)g->reads,
                      (unsigned long long)g->writes, (unsigned long long)g->others,
                      (unsigned long long)g->incomplete, io_metric_name(IoMetric(i)), avg.c_str(), p50.c_str(),
                      p99.c_str(), mx.c_str(), (unsigned long long)d.count());
      } else {
        std::snprintf(line, sizeof line, "  %-33s %7s %6s %6s %6s %6s  %-5s %12s %12s %12s %12s %7llu\n", "", "",
                      "", "", "", "", io_metric_name(IoMetric(i)), avg.c_str(), p50.c_str(), p99.c_str(),
                      mx.c_str(), (unsigned long long)d.count());
      }
      out += line;
      first = false;
    }
  }
  out += "\n";
}

}  // namespace

std::string render_io_tables(const IoReport& report) {
  std::string out;
  std::vector<std::pair<std::string, const IoGroupStats*>> rows;
  for (const auto& [ip, g] : report.by_host()) rows.emplace_back(ip.to_string(), &g);
  table(out, "NVMe I/O latency per host IP (µs; read and write I/Os)", "host", rows);
  rows.clear();
  for (const auto& [ip, g] : report.by_storage()) rows.emplace_back(ip.to_string(), &g);
  table(out, "NVMe I/O latency per storage IP (µs; read and write I/Os)", "storage", rows);
  rows.clear();
  for (const auto& [k, g] : report.by_pair()) rows.emplace_back(k.first.to_string() + " > " + k.second.to_string(), &g);
  table(out, "NVMe I/O latency per host > storage pair (µs; read and write I/Os)", "host > storage", rows);
  return out;
}

}  // namespace rdmatel
