// SPDX-License-Identifier: GPL-2.0-or-later
#include "cli/live_options.h"

#include <cerrno>
#include <cstdlib>

#include "rdmatel/schema.h"

namespace rdmatel::cli {
namespace {

bool parse_count(const std::string& opt, const std::string& v, double lo, double hi, double& out,
                 std::string& error) {
  char* end = nullptr;
  errno = 0;
  double d = std::strtod(v.c_str(), &end);
  if (errno || !end || *end || v.empty() || !(d >= lo && d <= hi)) {
    error = opt + " takes a number from " + std::to_string(uint64_t(lo)) + " to " +
            std::to_string(uint64_t(hi)) + " (got '" + v + "')";
    return false;
  }
  out = d;
  return true;
}

}  // namespace

int parse_live_option(const std::vector<std::string>& args, size_t& i, const std::string& a,
                      bool live, LiveOptions& o, std::string& error) {
  auto value = [&](std::string& v) {
    if (i >= args.size()) {
      error = a + " needs a value";
      return false;
    }
    v = args[i++];
    return true;
  };
  std::string v;
  double d = 0;
  if (a == "--clickhouse") {
    if (!value(o.clickhouse)) return -1;
    if (o.clickhouse.rfind("http://", 0) != 0) {
      error = "--clickhouse takes an http:// URL of ClickHouse's HTTP interface (got '" +
              o.clickhouse + "')";
      return -1;
    }
    return 1;
  }
  if (a == "--clickhouse-batch") {
    if (!value(v) || !parse_count(a, v, 1, 1e7, d, error)) return -1;
    o.clickhouse_batch = uint64_t(d);
    return 1;
  }
  if (a == "--clickhouse-timeout") {
    if (!value(v) || !parse_count(a, v, 0, 86400, d, error)) return -1;
    o.clickhouse_timeout_s = d;
    return 1;
  }
  if (!live) return 0;
  if (a == "-i" || a == "--interface") {
    if (!value(v)) return -1;
    o.interfaces.push_back(v);
    return 1;
  }
  if (a == "--records") {
    if (!value(o.records)) return -1;
    if (o.records != "none" && !find_schema(o.records)) {
      std::string kinds;
      for (const RecordSchema* s : all_schemas())
        kinds += std::string(kinds.empty() ? "" : ", ") + s->channel;
      error = "unknown record kind '" + o.records + "' for --records (kinds: " + kinds + ", none)";
      return -1;
    }
    return 1;
  }
  if (a == "--filter") return value(o.filter) ? 1 : -1;
  if (a == "--snaplen") {
    if (!value(v) || !parse_count(a, v, 64, 262144, d, error)) return -1;
    o.snaplen = uint32_t(d);
    return 1;
  }
  if (a == "--prometheus") {
    if (!value(o.prometheus)) return -1;
    if (o.prometheus.rfind(':') == std::string::npos) {
      error = "--prometheus takes ADDR:PORT, e.g. 127.0.0.1:9464 (got '" + o.prometheus + "')";
      return -1;
    }
    return 1;
  }
  if (a == "--prometheus-max-series") {
    if (!value(v) || !parse_count(a, v, 1, 1e7, d, error)) return -1;
    o.prometheus_max_series = uint64_t(d);
    return 1;
  }
  return 0;
}

std::string live_usage_text() {
  return R"(
Live mode:
  rdmatel live -i IFACE [-i IFACE...] [options]   capture live (libpcap); each interface is a point
  rdmatel live -r CAPTURE... [options]            a stream, e.g. -r - from dumpcap -w - or tcpdump -w -
  -i, --interface IFACE       capture on IFACE (repeatable: several points)
  -r CAPTURE                  read a capture or a stream (- is standard input)
  --records KIND|none         records written to standard output or -o FILE as they complete
                              (default io); a summary of each --period goes to standard error
  --filter BPF                capture filter for -i (default: every packet, PFC frames included)
  --snaplen N                 bytes kept per packet on -i (default 262144; 128 loses no I/O)
  --prometheus ADDR:PORT      serve metrics at http://ADDR:PORT/metrics (port 0: any free port)
  --prometheus-max-series N   label sets kept over all metrics (default 10000); more are
                              counted in rdmatel_prometheus_dropped_total
  SIGINT or SIGTERM stops the capture: every open record is finished and written.

Database (live, analyze, export):
  --clickhouse URL            insert records into ClickHouse over HTTP (e.g. http://127.0.0.1:8123),
                              database rdmatel, tables created when missing
  --clickhouse-batch N        rows per INSERT (default 10000)
  --clickhouse-timeout S      at the end, how long to wait for an unreachable server (default 30)
)";
}

}  // namespace rdmatel::cli
