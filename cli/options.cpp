// SPDX-License-Identifier: GPL-2.0-or-later
#include "cli/options.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>

namespace rdmatel::cli {
namespace {

const char* const kExportKinds[] = {"io", "messages", "flows", "paths", "congestion", "alerts"};

bool parse_number(const std::string& text, double& out) {
  errno = 0;
  char* end = nullptr;
  out = std::strtod(text.c_str(), &end);
  return errno == 0 && end && *end == 0 && !text.empty() && std::isfinite(out) && out >= 0;
}

}  // namespace

const char* usage_text() {
  return R"(rdmatel - RDMA telemetry for RoCEv2 fabrics

Usage:
  rdmatel analyze CAPTURE... [options]          print the I/O quality report
  rdmatel export io CAPTURE... [options]        one record per NVMe I/O
  rdmatel export messages CAPTURE... [options]  one record per RDMA message and observation point
  rdmatel export flows CAPTURE... [options]     per flow, point and period: bytes, FET, NAKs, ...
  rdmatel version

Captures: pcap or pcapng (read directly), or any format Wireshark reads (gzip, ...).
Several captures are merged by timestamp, like mergecap; each interface is an observation point.

Options:
  --format jsonl|csv       export format (default jsonl)
  -o, --output FILE        write the export to FILE instead of standard output
  --point NAME=ROLE        role of an observation point: compute, storage or fabric;
                           NAME is the interface name or its numeric id (repeatable).
                           Default: per I/O, the point that sees the command first is the
                           compute side and the one that sees it last the storage side.
  --io-timeout SECONDS     report an I/O as incomplete when its completion has not come
                           this long after the command (default 10)
  --reorder-window MS      how far stamps may go backwards within one point (default 250)
  --period SECONDS         length of the periods of `export flows` (default 1)
  --top N                  rows in each flows table of `analyze` (default 10)
  --message-timeout SECONDS  an RDMA message no ACK covers is final after this long without
                           packets (default 1)
  --max-ios N              most NVMe I/Os tracked at once (default 1048576)
  --max-flows N            most RDMA flows tracked (default 1048576)
  --max-messages N         most RDMA messages open at once (default 1048576)
  --progress, --no-progress  show progress on standard error (default: when it is a terminal)
  -q, --quiet              do not print warnings
  -h, --help               this text

Exit status: 0 success, 2 bad usage, 3 unreadable or corrupt input (after reporting what was read).
)";
}

bool parse_options(int argc, char** argv, Options& o, std::string& error) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) {
    error = "no command given (try: rdmatel analyze CAPTURE)";
    return false;
  }
  size_t i = 0;
  const std::string cmd = args[i++];
  if (cmd == "analyze") o.command = Command::kAnalyze;
  else if (cmd == "export") o.command = Command::kExport;
  else if (cmd == "version" || cmd == "--version") { o.command = Command::kVersion; return true; }
  else if (cmd == "help" || cmd == "--help" || cmd == "-h") { o.command = Command::kHelp; return true; }
  else {
    error = "unknown command '" + cmd + "' (commands: analyze, export, version)";
    return false;
  }
  if (o.command == Command::kExport) {
    if (i >= args.size()) {
      error = "export needs a KIND: io, messages, flows, paths, congestion or alerts";
      return false;
    }
    o.export_kind = args[i++];
    bool known = false;
    for (const char* k : kExportKinds) known |= o.export_kind == k;
    if (!known) {
      error = "unknown export kind '" + o.export_kind + "' (kinds: io, messages, flows, paths, congestion, alerts)";
      return false;
    }
  }
  auto value = [&](const std::string& opt, std::string& v) {
    if (i >= args.size()) {
      error = opt + " needs a value";
      return false;
    }
    v = args[i++];
    return true;
  };
  while (i < args.size()) {
    std::string a = args[i++];
    std::string v;
    double d = 0;
    if (a == "-h" || a == "--help") { o.command = Command::kHelp; return true; }
    else if (a == "--format") {
      if (!value(a, v)) return false;
      if (v == "jsonl") o.format = RecordFormat::kJsonl;
      else if (v == "csv") o.format = RecordFormat::kCsv;
      else { error = "unknown format '" + v + "' (formats: jsonl, csv)"; return false; }
    } else if (a == "-o" || a == "--output") {
      if (!value(a, o.output)) return false;
    } else if (a == "--point") {
      if (!value(a, v)) return false;
      auto eq = v.rfind('=');
      auto role = eq == std::string::npos ? std::nullopt : parse_point_role(v.substr(eq + 1));
      if (eq == std::string::npos || eq == 0 || !role) {
        error = "--point takes NAME=ROLE with ROLE compute, storage or fabric (got '" + v + "')";
        return false;
      }
      o.engine.roles.push_back({v.substr(0, eq), *role});
    } else if (a == "--io-timeout") {
      if (!value(a, v)) return false;
      if (!parse_number(v, d) || d <= 0) { error = "--io-timeout takes a positive number of seconds"; return false; }
      o.engine.io_timeout_ns = DurationNs(d * 1e9);
    } else if (a == "--period" || a == "--message-timeout") {
      if (!value(a, v)) return false;
      if (!parse_number(v, d) || d < 1e-6 || d > 86400) { error = a + " takes a number of seconds (0.000001 to 86400)"; return false; }
      (a == "--period" ? o.engine.period_ns : o.engine.message_timeout_ns) = DurationNs(d * 1e9);
    } else if (a == "--top") {
      if (!value(a, v)) return false;
      if (!parse_number(v, d) || d < 1 || d > 1e6) { error = "--top takes a count"; return false; }
      o.top = size_t(d);
    } else if (a == "--reorder-window") {
      if (!value(a, v)) return false;
      if (!parse_number(v, d)) { error = "--reorder-window takes a number of milliseconds"; return false; }
      o.engine.reorder_window_ns = DurationNs(d * 1e6);
    } else if (a == "--max-ios" || a == "--max-flows" || a == "--max-messages") {
      if (!value(a, v)) return false;
      if (!parse_number(v, d) || d < 1 || d > 1e9) { error = a + " takes a count between 1 and 1e9"; return false; }
      size_t& limit = a == "--max-ios"     ? o.engine.max_outstanding_ios
                      : a == "--max-flows" ? o.engine.max_flows
                                           : o.engine.max_open_messages;
      limit = size_t(d);
    } else if (a == "--progress") {
      o.progress = true;
    } else if (a == "--no-progress") {
      o.progress = false;
    } else if (a == "-q" || a == "--quiet") {
      o.quiet = true;
    } else if (a.size() > 1 && a[0] == '-') {
      error = "unknown option '" + a + "' (see rdmatel --help)";
      return false;
    } else {
      o.captures.push_back(a);
    }
  }
  if (o.captures.empty()) {
    error = "no capture file given";
    return false;
  }
  return true;
}

}  // namespace rdmatel::cli
