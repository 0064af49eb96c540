// SPDX-License-Identifier: GPL-2.0-or-later
#include "cli/options.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <thread>

#include "rdmatel/alert_rule.h"
#include "rdmatel/clock_offset.h"
#include "rdmatel/point_speed.h"
#include "rdmatel/gpu_map.h"
#include "rdmatel/sampling.h"
#include "adapters/clickhouse/table_schema.h"
#include "rdmatel/schema.h"

namespace rdmatel::cli {
namespace {

std::string option_of(const SettingSpec& s) {
  std::string o = "--";
  for (const char* c = s.name; *c; ++c) o += *c == '_' ? '-' : *c;
  return o;
}

const SettingSpec* setting_for_option(const std::string& opt) {
  for (const SettingSpec* s : setting_specs())
    if (s->cli && option_of(*s) == opt) return s;
  return nullptr;
}

std::string kinds_list() {
  std::string k;
  for (const RecordSchema* s : all_schemas()) k += std::string(k.empty() ? "" : ", ") + s->channel;
  return k;
}

bool known_kind(const std::string& kind) { return find_schema(kind) != nullptr; }

std::string wrap(const std::string& text, size_t indent, size_t width = 96) {
  std::string out, line;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t sp = text.find(' ', pos);
    std::string word = text.substr(pos, sp == std::string::npos ? std::string::npos : sp - pos);
    pos = sp == std::string::npos ? text.size() : sp + 1;
    if (!line.empty() && indent + line.size() + 1 + word.size() > width) {
      out += line + "\n" + std::string(indent, ' ');
      line.clear();
    }
    line += (line.empty() ? "" : " ") + word;
  }
  return out + line;
}

std::string option_line(const std::string& left, const std::string& help) {
  constexpr size_t kCol = 28;
  std::string l = "  " + left;
  if (l.size() + 1 > kCol) l += "\n" + std::string(kCol, ' ');
  else l += std::string(kCol - l.size(), ' ');
  return l + wrap(help, kCol) + "\n";
}

std::string export_help(const std::string& kind) {
  const RecordSchema* s = find_schema(kind);
  if (!s) return "rdmatel export " + kind + ": unknown kind (kinds: " + kinds_list() + ")\n";
  std::string out = "rdmatel export " + kind + " CAPTURE... [--format jsonl|csv] [-o FILE] [options]\n\n";
  out += "A record is " + std::string(s->help) + ". Fields (JSONL keys, CSV columns, in this order;\n";
  out += "a value that was not measured is left out of JSON and empty in CSV, never 0):\n\n";
  for (const Column& c : s->columns) out += option_line(c.name, c.help);
  return out;
}

std::string export_kinds_help() {
  std::string out = "rdmatel export KIND CAPTURE... [--format jsonl|csv] [-o FILE] [options]\n\nKINDS:\n";
  for (const RecordSchema* s : all_schemas()) out += option_line(s->channel, std::string("a record is ") + s->help);
  out += "\n";
  out += "rdmatel export KIND --help lists the fields of a kind.\n";
  return out;
}

}  // namespace

namespace {
// analyze and export measure on two threads where the machine has two cores (the engine's own
// default is one: front ends that read results frame by frame, live mode, Wireshark).
uint64_t cli_threads() { return std::thread::hardware_concurrency() >= 2 ? 2 : 1; }
}  // namespace

std::string usage_text() {
  std::string out = R"(rdmatel - RDMA telemetry for RoCEv2 fabrics

Usage:
  rdmatel analyze CAPTURE... [options]          print the I/O quality report
  rdmatel export KIND CAPTURE... [options]      write records: )" +
                    kinds_list() + R"(
  rdmatel export --help                         the kinds; rdmatel export KIND --help: its fields
  rdmatel live -i IFACE... | -r CAPTURE... [options]   measure continuously (see Live mode)
  rdmatel clickhouse-schema                     the SQL of the ClickHouse tables (--clickhouse creates them)
  rdmatel version

Captures: pcap or pcapng (read directly), or any format Wireshark reads (gzip, ...); - is
standard input. Several captures are merged by timestamp, like mergecap; each capture interface
is an observation point (interfaces with the same name and link type in several files, such as
dumpcap ring buffers, are one point). The same packets given twice are counted once.

Output:
)";
  out += option_line("--format jsonl|csv", "export format (default jsonl)");
  out += option_line("-o, --output FILE", "write the export, or analyze's report, to FILE instead of standard output");
  out += option_line("--top N", "rows in each flows table of analyze (default 10), in its I/O tables beyond 50, points named beyond 50");
  out += option_line("--by gpu|node|job", "analyze: also aggregate I/Os and messages per GPU, node or AI job (needs a GPU map)");
  out += option_line("--gpu-map FILE", "bind IPs to GPUs, nodes and jobs: a CSV file ip,gpu,node[,job] (see samples/gpu_map.csv)");
  out += option_line("--progress, --no-progress", "show progress on standard error (default: when it is a terminal)");
  out += option_line("--all-components", "export: also run the components that make none of the kind's records (slower; "
                                         "their warnings then show too)");
  out += option_line("-q, --quiet", "do not print warnings");
  out += option_line("-h, --help", "this text");
  out += "\nMeasurement:\n";
  for (const SettingSpec* s : setting_specs()) {
    if (!s->cli) continue;
    std::string help = s->help;
    if (std::string_view(s->name) == "threads") help += " (default for analyze and export: " + std::to_string(cli_threads()) + " here)";
    else if (*s->fallback) help += std::string(" (default ") + s->fallback + ")";
    if (s->type == SettingType::kList) help += " (repeatable)";
    out += option_line(s->type == SettingType::kFlag ? option_of(*s) : option_of(*s) + " " + s->metavar, help);
  }
  out += live_usage_text();
  out += "\nExit status: 0 success, 2 bad usage, 3 unreadable or corrupt input (after reporting what was read).\n";
  return out;
}

bool parse_options(int argc, char** argv, Options& o, std::string& error) {
  std::vector<std::string> args(argv + 1, argv + argc);
  bool threads_given = false;  // else analyze and export take cli_threads()
  bool all_components = false;
  if (args.empty()) {
    error = "no command given (try: rdmatel analyze CAPTURE)";
    return false;
  }
  size_t i = 0;
  const std::string cmd = args[i++];
  if (cmd == "analyze") o.command = Command::kAnalyze;
  else if (cmd == "export") o.command = Command::kExport;
  else if (cmd == "live") o.command = Command::kLive;
  else if (cmd == "version" || cmd == "--version") { o.command = Command::kVersion; return true; }
  else if (cmd == "clickhouse-schema") {
    o.command = Command::kHelp;  // prints text, like help
    o.help_text = clickhouse::schema_sql();
    return true;
  }
  else if (cmd == "help" || cmd == "--help" || cmd == "-h") {
    o.command = Command::kHelp;
    o.help_text = usage_text();
    return true;
  } else {
    error = "unknown command '" + cmd + "' (commands: analyze, export, live, version)";
    return false;
  }
  if (o.command == Command::kExport) {
    if (i >= args.size()) {
      error = "export needs a KIND: " + kinds_list() + " (rdmatel export --help)";
      return false;
    }
    o.export_kind = args[i++];
    if (o.export_kind == "--help" || o.export_kind == "-h") {
      o.command = Command::kHelp;
      o.help_text = export_kinds_help();
      return true;
    }
    if (!known_kind(o.export_kind)) {
      error = "unknown export kind '" + o.export_kind + "' (kinds: " + kinds_list() + ")";
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
  GpuMap gpus;  // the bindings given so far: each is checked, and an IP bound twice is refused
  while (i < args.size()) {
    std::string a = args[i++];
    std::string v;
    if (a == "-h" || a == "--help") {
      o.command = Command::kHelp;
      o.help_text = o.export_kind.empty() ? usage_text() : export_help(o.export_kind);
      return true;
    } else if (a == "--format") {
      if (!value(a, v)) return false;
      if (v == "jsonl") o.format = RecordFormat::kJsonl;
      else if (v == "csv") o.format = RecordFormat::kCsv;
      else { error = "unknown format '" + v + "' (formats: jsonl, csv)"; return false; }
    } else if (a == "-o" || a == "--output") {
      if (!value(a, o.output)) return false;
    } else if (a == "--top") {
      if (!value(a, v)) return false;
      char* end = nullptr;
      errno = 0;
      double d = std::strtod(v.c_str(), &end);
      if (errno || !end || *end || !(d >= 1 && d <= 1e6)) { error = "--top takes a count from 1 to 1000000"; return false; }
      o.top = size_t(d);
    } else if (a == "--by") {
      if (!value(a, v)) return false;
      if (v != "gpu" && v != "node" && v != "job") {
        error = "--by takes gpu, node or job (got '" + v + "')";
        return false;
      }
      o.by = v;
    } else if (a == "--gpu-map") {
      if (!value(a, v)) return false;
      std::vector<std::string> lines;
      if (!gpus.load_file(v, error, &lines)) return false;
      for (const std::string& line : lines)
        if (!o.settings.set("gpu", line, error)) return false;
    } else if (a == "--progress") {
      o.progress = true;
    } else if (a == "--no-progress") {
      o.progress = false;
    } else if (a == "-q" || a == "--quiet") {
      o.quiet = true;
    } else if (a == "--all-components") {
      all_components = true;
    } else if (o.command == Command::kLive && a == "-r") {
      if (!value(a, v)) return false;
      o.captures.push_back(v);
    } else if (int r = parse_live_option(args, i, a, o.command == Command::kLive, o.live, error); r != 0) {
      if (r < 0) return false;
    } else if (const SettingSpec* s = setting_for_option(a); s && s->type == SettingType::kFlag) {
      if (!o.settings.set(s->name, "on", error)) return false;  // a flag takes no value
    } else if (const SettingSpec* s = setting_for_option(a)) {
      if (!value(a, v)) return false;
      if (std::string_view(s->name) == "point") {
        auto eq = v.rfind('=');
        auto role = eq == std::string::npos ? std::nullopt : parse_point_role(v.substr(eq + 1));
        if (eq == std::string::npos || eq == 0 || !role) {
          error = "--point takes NAME=ROLE with ROLE compute, storage or fabric (got '" + v + "')";
          return false;
        }
      }
      if (std::string_view(s->name) == "alert" && !alerts::AlertRule::parse(v, error)) return false;
      if (std::string_view(s->name) == "threads") threads_given = true;
      if (std::string_view(s->name) == "key_flow" && !KeyFlowRule::parse(v, error)) return false;
      if (std::string_view(s->name) == "clock_offset") {
        std::string point;
        int64_t ns = 0;
        if (!parse_clock_offset(v, point, ns)) {
          error = "--clock-offset takes NAME=NS: ns to add to the point's stamps to get the reference clock (got '" + v + "')";
          return false;
        }
      }
      if (std::string_view(s->name) == "point_speed") {
        std::string point;
        double gbps = 0;
        if (!parse_point_speed(v, point, gbps)) {
          error = "--point-speed takes NAME=GBPS: the point's link speed in Gb/s (got '" + v + "')";
          return false;
        }
      }
      if (std::string_view(s->name) == "gpu" && !gpus.add(v, error)) {
        error = "--gpu: " + error;
        return false;
      }
      if (!o.settings.set(s->name, v, error)) return false;
    } else if (a.size() > 1 && a[0] == '-') {
      error = "unknown option '" + a + "' (see rdmatel --help)";
      return false;
    } else if (o.command == Command::kLive) {
      error = "live takes interfaces with -i and captures with -r (got '" + a + "')";
      return false;
    } else {
      o.captures.push_back(a);
    }
  }
  if (o.command == Command::kLive) {
    if (o.live.interfaces.empty() == o.captures.empty()) {
      error = "live needs either interfaces (-i IFACE) or captures (-r CAPTURE, - for standard input)";
      return false;
    }
    if (threads_given && o.settings.count("threads") > 1) {
      // Its records must come out as soon as they complete, also while the input is silent.
      error = "--threads is for analyze and export: live measures on one thread";
      return false;
    }
    return true;
  }
  if (o.captures.empty()) {
    error = "no capture file given";
    return false;
  }
  // Standard input can be read once (a second reader would see the same stream, already read).
  if (std::count(o.captures.begin(), o.captures.end(), std::string("-")) > 1) {
    error = "standard input (-) given more than once";
    return false;
  }
  if (!threads_given) o.settings.set("threads", std::to_string(cli_threads()), error);
  // An export reads one kind of record: the engine leaves out the components that make nothing
  // for it (unless ClickHouse or Prometheus take every kind).
  if (o.command == Command::kExport && !all_components && o.live.clickhouse.empty() && o.live.prometheus.empty())
    o.settings.records = {o.export_kind};
  if (!o.by.empty() && gpus.empty()) {
    error = "--by " + o.by + " needs a GPU map (--gpu-map FILE or --gpu IP,GPU,NODE[,JOB])";
    return false;
  }
  return true;
}

}  // namespace rdmatel::cli
