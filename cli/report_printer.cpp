// SPDX-License-Identifier: GPL-2.0-or-later
#include "cli/report_printer.h"

#include <algorithm>
#include <string>
#include <vector>

#include "cli/tables.h"
#include "rdmatel/point_summary.h"

namespace rdmatel::cli {
namespace {

// "compute side of 2 hosts", "storage side of 3 storage servers", both, or how it was set.
std::string role_text(const PointInfo& p) {
  if (p.configured != PointRole::kUnknown) return std::string(point_role_name(p.configured)) + ", configured";
  auto plural = [](uint64_t n, const char* one, const char* many) {
    return std::to_string(n) + " " + (n == 1 ? one : many);
  };
  std::string t;
  if (p.compute_endpoints) t = "compute side of " + plural(p.compute_endpoints, "host", "hosts");
  if (p.storage_endpoints)
    t += (t.empty() ? "" : ", ") + std::string("storage side of ") +
         plural(p.storage_endpoints, "storage server", "storage servers");
  if (t.empty()) return p.role == PointRole::kUnknown ? "role unknown" : point_role_name(p.role);
  return std::string(point_role_name(p.role)) + ": " + t;
}

}  // namespace

void Analysis::Alerts::add(const AlertRecord& a) {
  ++per_rule[std::string(a.kind) == "spike" ? "spike: " + a.scope.substr(0, a.scope.find(' ')) : a.rule];
  if (first.size() < kKept) first.push_back(a);
}

// Every point up to kPointsListed (or --top N, if more); the rest summed up.
static void print_points(std::FILE* out, const Engine& engine, size_t top) {
  std::vector<PointInfo> points;
  for (PointId i = 0; i < engine.point_count(); ++i) points.push_back(engine.point(i));
  const PointSummary summary = summarize_points(points, std::max(kPointsListed, top));
  std::fprintf(out, "  observation points (%zu):", points.size());
  bool first = true;
  for (size_t i = 0; i < points.size(); ++i) {
    if (!summary.named[i]) continue;
    const PointInfo& p = points[i];
    std::fprintf(out, "%s %s [%s, %llu packets", first ? "" : ",", p.name.c_str(), role_text(p).c_str(),
                 (unsigned long long)p.packets);
    if (p.capture_dropped) std::fprintf(out, ", %llu dropped by the capture", (unsigned long long)p.capture_dropped);
    std::fprintf(out, "]");
    first = false;
  }
  if (summary.unnamed)
    std::fprintf(out, "; %zu more not listed (--top N lists up to N): %llu of unknown role, %llu packets",
                 summary.unnamed, (unsigned long long)summary.unnamed_unknown,
                 (unsigned long long)summary.unnamed_packets);
  std::fprintf(out, "\n");
}

void print_analysis(std::FILE* out, const Options& o, const Engine& engine, const SessionSummary& input,
                    const Analysis& analysis, const char* version) {
  const IoReport& report = analysis.ios;
  const FlowReport& flows = analysis.flows;
  const EngineStats& st = engine.stats();
  std::string files;
  for (size_t i = 0; i < o.captures.size(); ++i) files += (i ? ", " : "") + o.captures[i];
  std::fprintf(out, "rdmatel %s: %s\n", version, files.c_str());
  std::string formats;
  for (size_t i = 0; i < input.formats.size(); ++i) formats += (i ? ", " : "") + input.formats[i];
  double span = input.frames ? span_ns(input.first_ts, input.last_ts) / 1e9 : 0.0;
  std::fprintf(out, "  capture: %s, %llu frames, %llu RoCEv2, %llu malformed, %.6f s\n", formats.c_str(),
               (unsigned long long)st.frames, (unsigned long long)st.roce, (unsigned long long)st.malformed, span);
  print_points(out, engine, o.top);
  if (st.duplicates)
    std::fprintf(out, "  duplicates: %llu packets given twice were counted once\n", (unsigned long long)st.duplicates);
  if (st.mirror_copies)
    std::fprintf(out, "  mirror copies: %llu copies of packets recorded more than once at one point (--mirror-copy-window) "
                 "were left out\n",
                 (unsigned long long)st.mirror_copies);
  if (st.beyond_max_flows)
    std::fprintf(out, "  not measured: %llu RoCE packets of flows beyond --max-flows %llu (a flow counted once per point "
                 "that sees it)\n",
                 (unsigned long long)st.beyond_max_flows, (unsigned long long)o.settings.count("max_flows"));
  const IoGroupStats& t = report.total();
  std::fprintf(out, "  NVMe commands: %llu (read %llu, write %llu, other %llu), incomplete %llu, error status %llu\n",
               (unsigned long long)t.ios, (unsigned long long)t.reads, (unsigned long long)t.writes,
               (unsigned long long)t.others, (unsigned long long)t.incomplete, (unsigned long long)t.errors);
  uint64_t messages = 0, naks = 0, retrans = 0, packets = 0;
  for (const auto& [k, f] : flows.flows()) {
    messages += f.messages;
    naks += f.naks;
    retrans += f.retrans_packets;
    packets += f.packets;
  }
  std::fprintf(out, "  RDMA messages: %llu in %zu flow-points, %llu data packets, %llu retransmitted, %llu NAKs\n\n",
               (unsigned long long)messages, flows.flows().size(), (unsigned long long)packets,
               (unsigned long long)retrans, (unsigned long long)naks);
  std::fputs(render_diagnosis(analysis.diagnosis, o.top).c_str(), out);
  std::fputs(render_flow_diagnosis(flows, analysis.congestion, analysis.pfc, analysis.paths, engine, o.top).c_str(), out);
  std::fputs(render_lossy_links(analysis.paths, engine, 3).c_str(), out);
  if (t.ios == 0)
    std::fprintf(out, "No NVMe-oF I/O found (no SEND carrying an NVMe command with a matching completion).\n\n");
  else
    std::fputs(render_io_tables(report, o.top).c_str(), out);
  if (analysis.by) std::fputs(render_by_dimension(*analysis.by, engine, o.top).c_str(), out);
  if (!flows.flows().empty()) std::fputs(render_flow_tables(flows, engine, o.top).c_str(), out);
  std::fputs(render_alerts(analysis.alerts.per_rule, analysis.alerts.first, engine, o.top).c_str(), out);
  std::fputs(render_congestion(analysis.congestion, analysis.pfc, engine, o.top).c_str(), out);
  std::fputs(render_hops(analysis.paths, analysis.offsets, engine, o.top).c_str(), out);
  std::fputs(render_offsets(analysis.offsets, engine, o.top).c_str(), out);
}

}  // namespace rdmatel::cli
