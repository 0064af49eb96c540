// SPDX-License-Identifier: GPL-2.0-or-later
// The tables of `rdmatel analyze`: I/O latency per host, storage and pair; the flows sections.
#include "cli/tables.h"

#include <algorithm>
#include <cstdio>
#include <span>
#include <string>
#include <vector>

#include "rdmatel/format.h"
#include "rdmatel/names.h"

namespace rdmatel::cli {

namespace {

// The mean latency a row is ranked by when not every row is shown: IOL1 (the I/O's latency
// at the compute side), else IOL (one point saw it); -1 for none.
double rank_latency(const IoGroupStats& g) {
  if (g[IoMetric::kIol1].count()) return g[IoMetric::kIol1].mean();
  if (g[IoMetric::kIol].count()) return g[IoMetric::kIol].mean();
  return -1;
}

void table(std::string& out, const char* title, const char* key_header, const char* what,
           std::vector<std::pair<std::string, const IoGroupStats*>> rows, size_t limit) {
  char line[512];
  out += title;
  out += "\n";
  // A fabric of a thousand hosts and fifty storage servers has 50,000 pairs: 300,000 lines.
  // Beyond `limit` rows the slowest are shown, slowest first, and the count said.
  const size_t all = rows.size();
  if (all > limit) {
    std::stable_sort(rows.begin(), rows.end(),
                     [](const auto& a, const auto& b) { return rank_latency(*a.second) > rank_latency(*b.second); });
    rows.resize(limit);
  }
  std::snprintf(line, sizeof line, "  %-33s %7s %6s %6s %6s %6s  %-5s %12s %12s %12s %12s %7s\n", key_header,
                "I/Os", "read", "write", "other", "incmpl", "", "avg", "p50", "p99", "max", "n");
  out += line;
  // A metric no group has (DAL ... IOL2 in a one-point capture) is left out and said why once.
  bool measured[size_t(IoMetric::kCount)] = {};
  for (const auto& [key, g] : rows)
    for (size_t i = 0; i < size_t(IoMetric::kCount); ++i) measured[i] |= g->metric[i].count() > 0;
  for (const auto& [key, g] : rows) {
    bool first = true;
    for (size_t i = 0; i < size_t(IoMetric::kCount); ++i) {
      const Distribution& d = g->metric[i];
      if (!measured[i] && IoMetric(i) != IoMetric::kIol) continue;
      // IOL equals IOL1 wherever roles are known; show it only for single-point I/Os.
      if (IoMetric(i) == IoMetric::kIol && d.count() == (*g)[IoMetric::kIol1].count()) continue;
      std::string avg = d.count() ? format_us(d.mean()) : "-";
      std::string p50 = d.count() ? format_us(d.percentile(50)) : "-";
      std::string p99 = d.count() ? format_us(d.percentile(99)) : "-";
      std::string mx = d.count() ? format_us(d.max()) : "-";
      if (first) {
        std::snprintf(line, sizeof line, "  %-33s %7llu %6llu %6llu %6llu %6llu  %-5s %12s %12s %12s %12s %7llu\n",
                      key.c_str(), (unsigned long long)(g->reads + g->writes), (unsigned long long)g->reads,
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
  std::string missing;
  for (size_t i = 0; i < size_t(IoMetric::kCount); ++i)
    if (!measured[i] && IoMetric(i) != IoMetric::kIol)
      missing += std::string(missing.empty() ? "" : ", ") + io_metric_name(IoMetric(i));
  if (!rows.empty() && !missing.empty())
    out += "  (" + missing + ": not measured. They need the I/O seen at the compute side and at the storage side; "
           "IOL is the latency at the one point that saw it.)\n";
  if (all > limit)
    out += "  (" + std::to_string(limit) + " of " + std::to_string(all) + " " + what +
           " shown, the slowest by mean IOL1 (or IOL) first; --top N shows more, export io every I/O)\n";
  out += "\n";
}

}  // namespace

std::string render_io_tables(const IoReport& report, size_t top) {
  std::string out;
  const size_t limit = std::max(top, kIoTableRows);
  std::vector<std::pair<std::string, const IoGroupStats*>> rows;
  for (const auto& [ip, g] : report.by_host()) rows.emplace_back(ip.to_string(), &g);
  table(out, "NVMe I/O latency per host IP (µs; read and write I/Os)", "host", "hosts", std::move(rows), limit);
  rows.clear();
  for (const auto& [ip, g] : report.by_storage()) rows.emplace_back(ip.to_string(), &g);
  table(out, "NVMe I/O latency per storage IP (µs; read and write I/Os)", "storage", "storage servers",
        std::move(rows), limit);
  rows.clear();
  for (const auto& [k, g] : report.by_pair()) rows.emplace_back(k.first.to_string() + " > " + k.second.to_string(), &g);
  table(out, "NVMe I/O latency per host > storage pair (µs; read and write I/Os)", "host > storage", "pairs",
        std::move(rows), limit);
  out += "  I/Os = read + write, as in Wireshark's tables; other = the other NVMe commands (admin, fabrics, flush, "
         "...), not in the latencies.\n\n";
  return out;
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

// "write", "send+read_resp", ...: the kinds of a flow's messages (a READ RESPONSE flow carries
// reads' data, not writes).
std::string kinds_text(uint8_t kinds) {
  static const char* const names[] = {"write", "send", "read_resp"};
  std::string out;
  for (unsigned k = 0; k < 3; ++k)
    if (kinds & (1u << k)) out += std::string(out.empty() ? "" : "+") + names[k];
  return out.empty() ? "-" : out;
}

void table(std::string& out, const char* title, const std::vector<Row>& rows, const Engine& engine) {
  char line[512];
  out += title;
  out += "\n";
  std::snprintf(line, sizeof line, "  %-44s %-12s %-10s %8s %12s %7s %7s %6s %11s %11s %12s %12s\n",
                "flow (src > dst qpn)", "point", "kind", "msgs", "bytes", "retx%", "naks", "fnr", "FET", "rate",
                "FCT avg µs", "FCT max µs");
  out += line;
  for (const auto& [k, s] : rows) {
    std::string flow = k->src.to_string() + " > " + k->dst.to_string() + " " + qpn_text(k->dst_qpn);
    double retx = s->packets ? 100.0 * double(s->retrans_packets) / double(s->packets) : 0.0;
    char fnr[16] = "-";
    if (auto f = s->fnr()) std::snprintf(fnr, sizeof fnr, "%.4f", *f);
    std::snprintf(line, sizeof line, "  %-44s %-12s %-10s %8llu %12llu %6.2f%% %7llu %6s %11s %11s %12s %12s\n",
                  flow.c_str(), engine.point_name(k->point).c_str(), kinds_text(s->kinds).c_str(),
                  (unsigned long long)s->messages, (unsigned long long)s->bytes, retx, (unsigned long long)s->naks, fnr,
                  human_rate(s->fet_bps()).c_str(), human_rate(s->rate_bps()).c_str(), format_us(s->fct.mean()).c_str(),
                  format_us(s->fct.max()).c_str());
    out += line;
  }
  out += "\n";
}

}  // namespace

std::string render_flow_tables(const FlowReport& report, const Engine& engine, size_t n) {
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
        engine);
  // Ranked by FET only where it speaks for most of the flow's data: a flow of single-packet
  // messages has an FET of its few multi-packet ones, which says little about it.
  std::vector<Row> timed;
  for (const Row& r : all)
    if (r.second->fet_bps() && r.second->fet_coverage() >= 0.5) timed.push_back(r);
  std::stable_sort(timed.begin(), timed.end(),
                   [](const Row& a, const Row& b) { return *a.second->fet_bps() < *b.second->fet_bps(); });
  if (timed.size() > n) timed.resize(n);
  table(out, "RDMA flows: lowest effective throughput (FET; flows whose multi-packet messages carry most of their data)",
        timed, engine);
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
  else table(out, "RDMA flows: highest NAK rate (FNR), then retransmissions", lossy, engine);
  if (!all.empty())
    out += "  FET = effective bytes of the flow's multi-packet messages * 8 / the sum of their FCTs (a single-packet\n"
           "  message has no FCT); rate = all its effective bytes * 8 / its span, as export flows gives per period.\n\n";
  return out;
}

}  // namespace rdmatel::cli

namespace rdmatel::cli {

std::string render_congestion(const std::vector<EcnRecord>& flows, const std::vector<PfcRecord>& pfc,
                              const Engine& engine, size_t n) {
  uint64_t ect = 0, ce = 0, cnps = 0, marked_points = 0;
  for (const EcnRecord& r : flows) {
    ect += r.ect_packets;
    ce += r.ce_packets;
    cnps += r.cnp_packets;
    if (r.ce_packets) ++marked_points;
  }
  std::string out = "Congestion (ECN, CNP, PFC)\n";
  char line[512];
  if (ce == 0 && cnps == 0 && pfc.empty()) return out + "  no CE-marked packet, no CNP, no PFC frame\n\n";
  std::snprintf(line, sizeof line,
                "  ECN: %llu of %llu ECN-capable packets marked CE (%.2f%%) in %llu of %zu flow-points; CNPs: %llu\n",
                (unsigned long long)ce, (unsigned long long)ect, ect ? 100.0 * double(ce) / double(ect) : 0.0,
                (unsigned long long)marked_points, flows.size(), (unsigned long long)cnps);
  out += line;
  // A ratio of a handful of packets (a connection's CM exchange) says little: flows with at
  // least kMinPackets come first, ranked by CE ratio, then by CE marks.
  constexpr uint64_t kMinPackets = 20;
  std::vector<const EcnRecord*> marked;
  for (const EcnRecord& r : flows)
    if (r.ce_packets) marked.push_back(&r);
  std::stable_sort(marked.begin(), marked.end(), [](const EcnRecord* a, const EcnRecord* b) {
    const bool big_a = a->packets >= kMinPackets, big_b = b->packets >= kMinPackets;
    if (big_a != big_b) return big_a;
    if (*a->ce_ratio() != *b->ce_ratio()) return *a->ce_ratio() > *b->ce_ratio();
    return a->ce_packets > b->ce_packets;
  });
  if (marked.size() > n) marked.resize(n);
  if (!marked.empty()) {
    out += "  flows: highest CE ratio (flows of at least 20 packets first)\n";
    std::snprintf(line, sizeof line, "  %-44s %-12s %10s %10s %9s %10s\n", "flow (src > dst qpn)", "point", "packets",
                  "CE", "CE ratio", "CNPs recv");
    out += line;
    for (const EcnRecord* r : marked) {
      std::string flow = r->src.to_string() + " > " + r->dst.to_string() + " " + qpn_text(r->dst_qpn);
      std::string recv = r->cnps_received ? std::to_string(*r->cnps_received) : "-";
      std::snprintf(line, sizeof line, "  %-44s %-12s %10llu %10llu %8.2f%% %10s\n", flow.c_str(),
                    engine.point_name(r->point).c_str(), (unsigned long long)r->packets,
                    (unsigned long long)r->ce_packets, 100.0 * r->ce_ratio().value_or(0), recv.c_str());
      out += line;
    }
  }
  if (pfc.empty()) {
    out += "  PFC: no PFC frame\n\n";
    return out;
  }
  out += "  PFC per point and priority (pause times at the link speed; - where it is unknown: --link-speed)\n";
  std::snprintf(line, sizeof line, "  %-20s %4s %10s %10s %10s %12s %12s  %s\n", "point", "prio", "frames", "pauses",
                "resumes", "pause ms", "longest ms", "storm");
  out += line;
  auto ms = [](const std::optional<DurationNs>& d) {
    if (!d) return std::string("-");
    char b[32];
    std::snprintf(b, sizeof b, "%.3f", double(*d) / 1e6);
    return std::string(b);
  };
  for (const PfcRecord& r : pfc) {
    std::snprintf(line, sizeof line, "  %-20s %4u %10llu %10llu %10llu %12s %12s  %s\n",
                  engine.point_name(r.point).c_str(), unsigned(r.priority), (unsigned long long)r.frames,
                  (unsigned long long)r.pause_frames, (unsigned long long)r.resume_frames, ms(r.pause_ns).c_str(),
                  ms(r.longest_pause_ns).c_str(), r.storm ? "STORM" : "");
    out += line;
  }
  out += "\n";
  return out;
}

std::string render_by_dimension(const DimensionReport& report, const Engine& engine, size_t top) {
  const Dimension dim = report.dimension();
  const char* what = dim == Dimension::kGpu ? "GPU" : dim == Dimension::kNode ? "node" : "AI job";
  const char* pair = dim == Dimension::kGpu ? "GPU pair" : dim == Dimension::kNode ? "node pair" : "job";
  char line[640];
  std::string out;
  auto us = [](const Distribution& d, double v) { return d.count() ? format_us(v) : std::string("-"); };
  auto p99 = [](const IoGroupStats& g) {
    const Distribution& d = g[IoMetric::kIol1];
    return d.count() ? d.percentile(99) : DurationNs(-1);
  };
  // The slowest effective throughput among a job's GPU pairs, "-" when none was timed.
  auto slowest_pair = [&](const std::string& job) {
    auto it = report.job_pairs().find(job);
    std::string best = "-";
    double best_fet = 0;
    if (it == report.job_pairs().end()) return best;
    for (const auto& [key, s] : it->second) {
      auto fet = s.fet_bps();
      if (!fet || (best != "-" && *fet >= best_fet)) continue;
      best_fet = *fet;
      char b[160];
      std::snprintf(b, sizeof b, "%s at %s (%.3f Gb/s)", key.first.c_str(), engine.point_name(key.second).c_str(),
                    *fet / 1e9);
      best = b;
    }
    return best;
  };
  std::vector<const std::pair<const std::string, IoGroupStats>*> rows;
  for (const auto& e : report.ios()) rows.push_back(&e);
  std::stable_sort(rows.begin(), rows.end(), [&](auto* a, auto* b) { return p99(a->second) > p99(b->second); });
  out += std::string("NVMe I/O latency per ") + what + " (µs; read and write I/Os of its hosts; highest IOL1 p99 first)\n";
  if (rows.empty()) out += "  no I/O from a host the GPU map binds\n";
  else {
    std::snprintf(line, sizeof line, "  %-20s %7s %12s %12s %12s %12s %12s %12s%s\n", what, "I/Os", "IOL1 avg",
                  "IOL1 p99", "IOL2 avg", "DAL avg", "RTT avg", "DPL avg",
                  dim == Dimension::kJob ? "  slowest GPU pair (lowest FET)" : "");
    out += line;
  }
  size_t shown = 0;
  for (auto* e : rows) {
    if (shown++ == top) break;
    const IoGroupStats& g = e->second;
    auto m = [&](IoMetric k) { return us(g[k], g[k].mean()); };
    std::snprintf(line, sizeof line, "  %-20s %7llu %12s %12s %12s %12s %12s %12s%s%s\n", e->first.c_str(),
                  (unsigned long long)(g.reads + g.writes), m(IoMetric::kIol1).c_str(),
                  us(g[IoMetric::kIol1], double(p99(g))).c_str(), m(IoMetric::kIol2).c_str(), m(IoMetric::kDal).c_str(),
                  m(IoMetric::kRtt).c_str(), m(IoMetric::kDpl).c_str(), dim == Dimension::kJob ? "  " : "",
                  dim == Dimension::kJob ? slowest_pair(e->first).c_str() : "");
    out += line;
  }
  out += "\n";
  std::vector<const std::pair<const std::pair<std::string, PointId>, FlowStats>*> msgs;
  for (const auto& e : report.messages()) msgs.push_back(&e);
  std::stable_sort(msgs.begin(), msgs.end(), [](auto* a, auto* b) {
    return a->second.fet_bps().value_or(1e30) < b->second.fet_bps().value_or(1e30);
  });
  out += std::string("RDMA messages per ") + pair + " and point (lowest effective throughput first)\n";
  if (msgs.empty()) {
    out += "  no message between IPs the GPU map binds\n\n";
    return out;
  }
  std::snprintf(line, sizeof line, "  %-28s %-12s %9s %14s %12s %12s %11s %7s %10s\n", pair, "point", "messages", "bytes",
                "FCT avg", "FCT p99", "FET (Gb/s)", "NAKs", "FNR");
  out += line;
  shown = 0;
  for (auto* e : msgs) {
    if (shown++ == top) break;
    const FlowStats& s = e->second;
    auto fet = s.fet_bps();
    auto fnr = s.fnr();
    char fet_text[32] = "-", fnr_text[32] = "-";
    if (fet) std::snprintf(fet_text, sizeof fet_text, "%.3f", *fet / 1e9);
    if (fnr) std::snprintf(fnr_text, sizeof fnr_text, "%.6f", *fnr);
    std::snprintf(line, sizeof line, "  %-28s %-12s %9llu %14llu %12s %12s %11s %7llu %10s\n", e->first.first.c_str(),
                  engine.point_name(e->first.second).c_str(), (unsigned long long)s.messages,
                  (unsigned long long)s.bytes, us(s.fct, s.fct.mean()).c_str(),
                  us(s.fct, double(s.fct.count() ? s.fct.percentile(99) : 0)).c_str(), fet_text,
                  (unsigned long long)s.naks, fnr_text);
    out += line;
  }
  return out + "\n";
}

std::string render_alerts(const std::map<std::string, uint64_t>& per_rule, const std::vector<AlertRecord>& first,
                          const Engine& engine, size_t top) {
  if (per_rule.empty()) return "";
  std::string out = "Alerts (rdmatel export alerts has every one)\n";
  char line[512];
  for (const auto& [rule, n] : per_rule) {
    std::snprintf(line, sizeof line, "  %-40s %8llu\n", rule.c_str(), (unsigned long long)n);
    out += line;
  }
  out += "  first alerts:\n";
  size_t shown = 0;
  for (const AlertRecord& a : first) {
    if (shown++ == top) break;
    std::string what;
    if (a.host) what = "I/O " + a.host->to_string() + " > " + a.storage->to_string() + " CID " + std::to_string(*a.cid);
    else if (a.src)
      what = "message " + a.src->to_string() + " > " + a.dst->to_string() + " QP " + qpn_text(*a.dst_qpn) + " at " +
             engine.point_name(a.point);
    else what = a.scope;
    char frame[32] = "";
    if (a.frame) std::snprintf(frame, sizeof frame, " (frame %llu)", (unsigned long long)a.frame);
    std::snprintf(line, sizeof line, "    %-9s %-4s %14.3f %s %-12.6g %s%s\n", a.kind, a.metric, a.value,
                  a.threshold ? "vs threshold" : "vs baseline ", a.threshold ? *a.threshold : a.baseline.value_or(0),
                  what.c_str(), frame);
    out += line;
  }
  return out + "\n";
}

// Why there is no finding: every scope was compared with its peers, or some had none (one host
// or one storage server), which only an absolute threshold can judge.
std::string nothing_stands_out(const std::vector<DiagnosisRecord>& records) {
  size_t hosts = 0, storages = 0;
  for (const DiagnosisRecord& r : records) {
    if (!r.split_ios) continue;
    hosts += r.scope == DiagnosisScope::kHost;
    storages += r.scope == DiagnosisScope::kStorage;
  }
  const char* hint = "     Set thresholds to judge against a number instead, e.g. --alert 'dal>200us' --alert 'rtt>50us'.\n";
  if (hosts < 2 && storages < 2)
    return std::string("  Nothing to compare with: one host and one storage server, so no peer to measure them against.\n") +
           hint;
  if (hosts < 2 || storages < 2)
    return std::string("  Nothing stands out among the ") + (hosts < 2 ? "storage servers" : "hosts") +
           "; the only " + (hosts < 2 ? "host" : "storage server") + " has no peer to compare with.\n" + hint;
  return "  Nothing stands out: no host, storage server or pair is slower than its peers in this capture.\n";
}

std::string render_diagnosis(const std::vector<DiagnosisRecord>& records, size_t top) {
  if (records.empty()) return "";
  auto scope = [](const DiagnosisRecord& r) { return diagnosis_scope_text(r); };
  std::vector<const DiagnosisRecord*> ranked;
  bool split = false;
  for (const DiagnosisRecord& r : records) {
    if (r.rank) ranked.push_back(&r);
    split |= r.split_ios > 0;
  }
  std::sort(ranked.begin(), ranked.end(), [](auto* a, auto* b) { return a->rank < b->rank; });
  std::string out = "Diagnosis: who is to blame\n";
  if (!split)
    return out +
           "  The I/Os were seen on one side only: their latency cannot be split into storage, network and host.\n"
           "  Capture at the compute side and at the storage side (two points) for a diagnosis.\n\n";
  if (ranked.empty()) out += nothing_stands_out(records);
  for (const DiagnosisRecord* r : ranked) {
    out += "  " + std::to_string(r->rank) + ". " + scope(*r) + ": " + diagnosis_verdict_text(*r) + ".\n     " +
           r->evidence + ".\n";
    std::string also;
    for (const DiagnosisRecord& e : records)
      if (e.explained_by == scope(*r)) also += (also.empty() ? "" : ", ") + scope(e);
    if (!also.empty()) out += "     The same finding on " + also + " comes from it.\n";
  }
  out += "\n  Where the time goes (completed reads and writes; share of IOL1: storage = IOL2 minus DPL, network = RTT, "
         "host = DPL)\n";
  char line[512];
  std::snprintf(line, sizeof line, "    %-33s %7s %9s %9s %9s  %s\n", "scope", "I/Os", "storage", "network", "host",
                "verdict");
  out += line;
  auto pct = [](const std::optional<double>& d) {
    if (!d) return std::string("-");
    char b[32];
    std::snprintf(b, sizeof b, "%.1f %%", *d * 100);
    return std::string(b);
  };
  size_t rows[3] = {0, 0, 0};
  for (const DiagnosisRecord& r : records) {
    if (r.scope == DiagnosisScope::kPair) continue;
    if (rows[r.scope == DiagnosisScope::kHost ? 0 : r.scope == DiagnosisScope::kStorage ? 1 : 2]++ >= top) continue;
    const std::string verdict = r.rank                 ? "#" + std::to_string(r.rank) + " " + r.segment
                                : r.explained_by.empty() ? "-"
                                                         : "see " + r.explained_by;
    std::snprintf(line, sizeof line, "    %-33s %7llu %9s %9s %9s  %s\n", scope(r).c_str(), (unsigned long long)r.ios,
                  pct(r.storage_share).c_str(), pct(r.network_share).c_str(), pct(r.host_share).c_str(),
                  verdict.c_str());
    out += line;
  }
  if (rows[0] > top || rows[1] > top || rows[2] > top)
    out += "    (" + std::to_string(top) + " of each shown; rdmatel export diagnosis has all)\n";
  return out + "\n";
}

namespace {
// The clock offset between two points when it is known to differ from 0 (estimated both ways,
// larger than its uncertainty): a raw delay between them then measures the clocks, not the hop.
const OffsetRecord* significant_offset(const std::vector<OffsetRecord>& offsets, PointId a, PointId b) {
  for (const OffsetRecord& o : offsets)
    if (((o.point == a && o.reference == b) || (o.point == b && o.reference == a)) && o.both_directions &&
        o.uncertainty_ns && (o.offset_ns < 0 ? -o.offset_ns : o.offset_ns) > *o.uncertainty_ns)
      return &o;
  return nullptr;
}
}  // namespace

namespace {
// The links (point A -> point B, every flow together): which one is bad, before which flows.
struct Link {
  PointId from, to;
  uint64_t flows = 0, packets = 0, lost = 0;
  bool inferred = false;  ///< some of its losses are on inferred paths
  double ratio() const { return packets ? double(lost) / double(packets) : 0.0; }
};

// Lossiest first (then most lost).
std::vector<Link> links_of(const std::vector<PathRecord>& hops) {
  std::vector<Link> links;
  for (const PathRecord& r : hops) {
    auto it = std::find_if(links.begin(), links.end(),
                           [&](const Link& l) { return l.from == r.from_point && l.to == r.to_point; });
    if (it == links.end()) it = links.insert(links.end(), Link{r.from_point, r.to_point});
    ++it->flows;
    it->packets += r.packets;
    it->lost += r.lost;
    it->inferred |= r.path_inferred && r.lost;
  }
  std::stable_sort(links.begin(), links.end(), [](const Link& a, const Link& b) {
    return a.ratio() != b.ratio() ? a.ratio() > b.ratio() : a.lost > b.lost;
  });
  return links;
}

// A link worth naming before the tables: it loses at least this share, and this many packets.
constexpr double kLossyLinkRatio = 0.01;
constexpr uint64_t kLossyLinkPackets = 20;
}  // namespace

std::string render_lossy_links(const std::vector<PathRecord>& hops, const Engine& engine, size_t n) {
  std::vector<Link> links = links_of(hops);
  std::string out;
  char line[512];
  size_t shown = 0;
  for (const Link& l : links) {
    if (l.ratio() < kLossyLinkRatio || l.lost < kLossyLinkPackets || shown == n) continue;
    if (out.empty()) out = "Where packets are lost (links between observation points, every flow together; see Hops)\n";
    ++shown;
    std::snprintf(line, sizeof line, "  %s -> %s loses %.1f %% of its packets: %llu of %llu, %llu %s%s\n",
                  engine.point_name(l.from).c_str(), engine.point_name(l.to).c_str(), 100.0 * l.ratio(),
                  (unsigned long long)l.lost, (unsigned long long)l.packets, (unsigned long long)l.flows,
                  l.flows == 1 ? "flow" : "flows",
                  l.inferred ? " (~ path inferred: some flows had no packet reach a second point)" : "");
    out += line;
  }
  return out.empty() ? out : out + "\n";
}

std::string render_hops(const std::vector<PathRecord>& hops, const std::vector<OffsetRecord>& offsets,
                        const Engine& engine, size_t n) {
  if (hops.empty()) return "";  // one observation point: no hop
  bool raw = false;
  uint64_t packets = 0, lost = 0;
  for (const PathRecord& r : hops) {
    raw = raw || !r.offset_applied_ns;
    packets += r.packets;
    lost += r.lost;
  }
  std::string out = "Hops (the same packet at two observation points; delay = its stamp at B - at A";
  bool estimated = false;
  for (const PathRecord& r : hops) estimated = estimated || r.offset_estimated;
  out += raw ? ", raw where no offset is given or estimated for A or B (--clock-offset, --estimate-offsets): *)\n"
             : estimated ? ", clocks corrected by --clock-offset or --estimate-offsets)\n"
                         : ", clocks corrected by --clock-offset)\n";
  char line[512];
  std::snprintf(line, sizeof line, "  %zu flow-hops, %llu packets, %llu lost (%.3f%%)\n", hops.size(),
                (unsigned long long)packets, (unsigned long long)lost,
                packets ? 100.0 * double(lost) / double(packets) : 0.0);
  out += line;
  const size_t inferred = size_t(std::count_if(hops.begin(), hops.end(), [](const PathRecord& r) { return r.path_inferred; }));
  if (inferred)
    out += "  ~ " + std::to_string(inferred) +
           " flow-hops of flows none of whose packets reached a second point: the path is the one other flows\n"
           "    show (between the same endpoints, or between the points next to them), all their packets lost on it\n";
  std::vector<Link> links = links_of(hops);
  if (links.size() > n) links.resize(n);
  out += "  links (every flow from one point to the next, lossiest first)\n";
  std::snprintf(line, sizeof line, "  %-31s %-14s %7s %11s %9s %8s\n", "from", "to", "flows", "packets", "lost", "lost %");
  out += line;
  for (const Link& l : links) {
    std::snprintf(line, sizeof line, "  %-31s %-14s %7llu %11llu %9llu %7.3f%%\n", engine.point_name(l.from).c_str(),
                  (engine.point_name(l.to) + (l.inferred ? "~" : "")).c_str(), (unsigned long long)l.flows,
                  (unsigned long long)l.packets, (unsigned long long)l.lost, 100.0 * l.ratio());
    out += line;
  }
  auto header = [&](const char* title) {
    out += title;
    std::snprintf(line, sizeof line, "  %-44s %-14s %-14s %9s %7s %11s %11s %11s\n", "flow (src > dst qpn)", "from",
                  "to", "packets", "lost", "min µs", "avg µs", "max µs");
    out += line;
  };
  auto row = [&](const PathRecord& r) {
    std::string flow = r.src.to_string() + " > " + r.dst.to_string() + " " + qpn_text(r.dst_qpn);
    auto us = [&](std::optional<DurationNs> d) {
      return d ? format_us(*d) + (r.offset_applied_ns ? " " : "*") : std::string("-");
    };
    std::optional<DurationNs> mn, mx;
    if (r.delivered) {
      mn = r.min_ns;
      mx = r.max_ns;
    }
    std::snprintf(line, sizeof line, "  %-44s %-14s %-14s %9llu %7llu %11s %11s %11s\n", flow.c_str(),
                  engine.point_name(r.from_point).c_str(),
                  (engine.point_name(r.to_point) + (r.path_inferred ? "~" : "")).c_str(),
                  (unsigned long long)r.packets, (unsigned long long)r.lost, us(mn).c_str(), us(r.avg_ns()).c_str(),
                  us(mx).c_str());
    out += line;
  };
  // Raw delays across clocks known to differ are left out of the ranking: they would rank the
  // clocks. Say which clocks and how to correct them.
  std::vector<const PathRecord*> slow;
  std::vector<const OffsetRecord*> skewed;
  size_t unranked = 0;
  for (const PathRecord& r : hops) {
    if (!r.delivered) continue;
    const OffsetRecord* o = r.offset_applied_ns ? nullptr : significant_offset(offsets, r.from_point, r.to_point);
    if (!o) {
      slow.push_back(&r);
      continue;
    }
    ++unranked;
    if (std::find(skewed.begin(), skewed.end(), o) == skewed.end()) skewed.push_back(o);
  }
  for (const OffsetRecord* o : skewed) {
    std::snprintf(line, sizeof line, "  the clocks of %s and %s differ by %.3f µs ± %.3f µs (see Clock offsets)\n",
                  engine.point_name(o->point).c_str(), engine.point_name(o->reference).c_str(),
                  double(o->offset_ns < 0 ? -o->offset_ns : o->offset_ns) / 1e3, double(*o->uncertainty_ns) / 1e3);
    out += line;
  }
  if (unranked)
    out += "  " + std::to_string(unranked) +
           " flow-hops between them have raw delays that measure the clocks, not the fabric: not ranked below;\n"
           "  --estimate-offsets (or --clock-offset NAME=NS with export offsets' offset_ns) corrects them\n";
  std::stable_sort(slow.begin(), slow.end(),
                   [](const PathRecord* a, const PathRecord* b) { return *a->avg_ns() > *b->avg_ns(); });
  if (slow.size() > n) slow.resize(n);
  if (!slow.empty()) {
    header("  slowest hops (average delay)\n");
    for (const PathRecord* r : slow) row(*r);
  }
  std::vector<const PathRecord*> lossy;
  for (const PathRecord& r : hops)
    if (r.lost) lossy.push_back(&r);
  auto ratio = [](const PathRecord* r) { return double(r->lost) / double(r->packets); };
  std::stable_sort(lossy.begin(), lossy.end(), [&](const PathRecord* a, const PathRecord* b) {
    return ratio(a) != ratio(b) ? ratio(a) > ratio(b) : a->lost > b->lost;
  });
  if (lossy.size() > n) lossy.resize(n);
  if (lossy.empty()) {
    out += "  no packet lost between observation points\n";
  } else {
    header("  lossiest hops (lost / packets)\n");
    for (const PathRecord* r : lossy) row(*r);
  }
  return out + "\n";
}

std::string render_offsets(const std::vector<OffsetRecord>& offsets, const Engine& engine, size_t top) {
  if (offsets.empty()) return "";
  // One line a pair of points: a capture of a thousand points has half a million (a helper's
  // probe): at most max(--top, 20) here, every one in `export offsets`.
  const size_t shown = std::min(offsets.size(), std::max<size_t>(top, 20));
  std::string out =
      "Clock offsets between observation points: add to the first point's stamps to get the second's clock (no\n"
      "metric needs them: each is measured on one clock; hop delays do, with --estimate-offsets or --clock-offset)\n";
  char line[512];
  for (const OffsetRecord& r : std::span(offsets).first(shown)) {
    if (r.uncertainty_ns)
      std::snprintf(line, sizeof line, "  %s -> %s: %+.3f µs ± %.3f µs (%llu packets)\n", engine.point_name(r.point).c_str(),
                    engine.point_name(r.reference).c_str(), double(r.offset_ns) / 1e3, double(*r.uncertainty_ns) / 1e3,
                    (unsigned long long)r.samples);
    else
      std::snprintf(line, sizeof line, "  %s -> %s: %+.3f µs (%llu packets, one direction only: includes the delay)\n",
                    engine.point_name(r.point).c_str(), engine.point_name(r.reference).c_str(), double(r.offset_ns) / 1e3,
                    (unsigned long long)r.samples);
    out += line;
  }
  if (shown < offsets.size())
    out += "  (" + std::to_string(shown) + " of " + std::to_string(offsets.size()) +
           " pairs of points shown; --top N shows more, export offsets every one)\n";
  return out + "\n";
}

}  // namespace rdmatel::cli
