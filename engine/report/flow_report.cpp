// SPDX-License-Identifier: GPL-2.0-or-later
#include "engine/report/flow_report.h"

#include <algorithm>
#include <cstdio>
#include <vector>

#include "engine/report/number_format.h"

namespace rdmatel {

void FlowStats::add(const MessageRecord& m) {
  ++messages;
  if (!m.complete) ++partial;
  packets += m.packets;
  retrans_packets += m.retrans_packets;
  bytes += m.bytes;
  retrans_bytes += m.retrans_bytes;
  naks += m.naks;
  fct.add(m.fct_ns());
  if (m.fct_ns() > 0) {
    timed_effective += m.bytes - m.retrans_bytes;
    timed_fct += m.fct_ns();
  }
}

std::optional<double> FlowStats::fet_bps() const {
  if (timed_fct <= 0) return std::nullopt;
  return double(timed_effective) * 8e9 / double(timed_fct);
}

std::optional<double> FlowStats::fnr() const {
  uint64_t originals = packets - retrans_packets;
  if (!originals) return std::nullopt;
  return double(naks) / double(originals);
}

namespace {

std::string human_rate(std::optional<double> bps) {
  if (!bps) return "-";
  char b[32];
  if (*bps >= 1e9) std::snprintf(b, sizeof b, "%.2f Gb/s", *bps / 1e9);
  else if (*bps >= 1e6) std::snprintf(b, sizeof b, "%.2f Mb/s", *bps / 1e6);
  else std::snprintf(b, sizeof b, "%.2f kb/s", *bps / 1e3);
  return b;
}

using Row = std::pair<const FlowKeyAtPoint*, const FlowStats*>;

void table(std::string& out, const char* title, const std::vector<Row>& rows, const PointRegistry& points) {
  char line[512];
  out += title;
  out += "\n";
  std::snprintf(line, sizeof line, "  %-44s %-12s %8s %12s %7s %7s %6s %10s %12s %12s\n", "flow (src > dst qpn)",
                "point", "msgs", "bytes", "retx%", "naks", "fnr", "FET", "FCT avg µs", "FCT max µs");
  out += line;
  for (const auto& [k, s] : rows) {
    std::string flow = k->src.to_string() + " > " + k->dst.to_string() + " " + std::to_string(k->dst_qpn);
    double retx = s->packets ? 100.0 * double(s->retrans_packets) / double(s->packets) : 0.0;
    char fnr[16] = "-";
    if (auto f = s->fnr()) std::snprintf(fnr, sizeof fnr, "%.4f", *f);
    std::snprintf(line, sizeof line, "  %-44s %-12s %8llu %12llu %6.2f%% %7llu %6s %10s %12s %12s\n", flow.c_str(),
                  k->point < points.size() ? points[k->point].name.c_str() : "?", (unsigned long long)s->messages,
                  (unsigned long long)s->bytes, retx, (unsigned long long)s->naks, fnr, human_rate(s->fet_bps()).c_str(),
                  format_us(s->fct.mean()).c_str(), format_us(s->fct.max()).c_str());
    out += line;
  }
  out += "\n";
}

}  // namespace

std::string render_flow_tables(const FlowReport& report, const PointRegistry& points, size_t n) {
  std::vector<Row> all;
  for (const auto& [k, s] : report.flows()) all.emplace_back(&k, &s);
  std::string out;
  auto top = [&](auto better) {
    std::vector<Row> v = all;
    std::stable_sort(v.begin(), v.end(), better);
    if (v.size() > n) v.resize(n);
    return v;
  };
  table(out, "RDMA flows: top by bytes", top([](const Row& a, const Row& b) { return a.second->bytes > b.second->bytes; }),
        points);
  std::vector<Row> timed;
  for (const Row& r : all)
    if (r.second->fet_bps()) timed.push_back(r);
  std::stable_sort(timed.begin(), timed.end(),
                   [](const Row& a, const Row& b) { return *a.second->fet_bps() < *b.second->fet_bps(); });
  if (timed.size() > n) timed.resize(n);
  table(out, "RDMA flows: lowest effective throughput (FET)", timed, points);
  std::vector<Row> lossy;
  for (const Row& r : all)
    if (r.second->naks || r.second->retrans_packets) lossy.push_back(r);
  std::stable_sort(lossy.begin(), lossy.end(), [](const Row& a, const Row& b) {
    double fa = a.second->fnr().value_or(0), fb = b.second->fnr().value_or(0);
    if (fa != fb) return fa > fb;
    return a.second->retrans_packets > b.second->retrans_packets;
  });
  if (lossy.size() > n) lossy.resize(n);
  if (lossy.empty()) out += "RDMA flows with NAKs or retransmissions: none\n\n";
  else table(out, "RDMA flows: highest NAK rate (FNR), then retransmissions", lossy, points);
  return out;
}

}  // namespace rdmatel
