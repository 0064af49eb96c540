// SPDX-License-Identifier: GPL-2.0-or-later
// The diagnosis record's schema (channel "diagnosis") and the names it uses.
#include "engine/metrics/diagnosis/scope_stats.h"
#include "engine/src/output/column_line_writer.h"
#include "rdmatel/records.h"
#include "rdmatel/schema.h"

namespace rdmatel {

const char* diagnosis_scope_name(DiagnosisScope s) {
  switch (s) {
    case DiagnosisScope::kHost: return "host";
    case DiagnosisScope::kStorage: return "storage";
    case DiagnosisScope::kPair: return "pair";
    case DiagnosisScope::kJob: return "job";
  }
  return "";
}

std::string diagnosis_scope_text(const DiagnosisRecord& r) {
  auto ip = [](const std::optional<IpAddress>& a) { return a ? a->to_string() : std::string("?"); };
  switch (r.scope) {
    case DiagnosisScope::kHost: return "host " + ip(r.host);
    case DiagnosisScope::kStorage: return "storage " + ip(r.storage);
    case DiagnosisScope::kPair: return "pair " + ip(r.host) + " - " + ip(r.storage);
    case DiagnosisScope::kJob: return "job " + r.job;
  }
  return "";
}

const char* diagnosis_verdict_text(const DiagnosisRecord& r) {
  const std::string_view seg = r.segment;
  if (seg == "storage") return "the storage is slow";
  if (seg == "host") return "the host is slow to prepare write data";
  if (seg == "network") return std::string_view(r.metric) == "rtt" ? "the network is slow" : "the network loses packets";
  return "";
}

namespace diagnosis {
const char* segment_name(Segment s) {
  static const char* const kNames[] = {"storage", "network", "host"};
  return kNames[s];
}
const char* segment_metric(Segment s) {
  static const char* const kMetrics[] = {"dal", "rtt", "dpl"};
  return kMetrics[s];
}
}  // namespace diagnosis

namespace {

const DiagnosisRecord& dg(const void* p) { return *static_cast<const DiagnosisRecord*>(p); }

bool set_ip(const std::optional<IpAddress>& ip, Value& v) {
  if (!ip) return false;
  v.ip = &*ip;
  return true;
}
bool set_ratio(const std::optional<double>& d, Value& v) {
  if (!d) return false;
  v.d = *d;
  return true;
}
bool set_ns(const std::optional<DurationNs>& d, Value& v) {
  if (!d) return false;
  v.i = *d;
  return true;
}
bool set_text(std::string_view s, Value& v) {
  if (s.empty()) return false;
  v.s = s;
  return true;
}

constexpr Column kDiagnosisColumns[] = {
    {"scope", ValueType::kString, [](const void* p, Value& v) { v.s = diagnosis_scope_name(dg(p).scope); return true; },
     "What the record is about: host, storage, pair or job"},
    {"host", ValueType::kAddress, [](const void* p, Value& v) { return set_ip(dg(p).host, v); },
     "The host (compute) IP of a host or pair scope"},
    {"storage", ValueType::kAddress, [](const void* p, Value& v) { return set_ip(dg(p).storage, v); },
     "The storage IP of a storage or pair scope"},
    {"job", ValueType::kString, [](const void* p, Value& v) { return set_text(dg(p).job, v); },
     "The AI job of a job scope"},
    {"ios", ValueType::kUnsigned, [](const void* p, Value& v) { v.u = dg(p).ios; return true; },
     "Completed read and write I/Os of the scope"},
    {"split_ios", ValueType::kUnsigned, [](const void* p, Value& v) { v.u = dg(p).split_ios; return true; },
     "Of which seen at both the compute and the storage side (their latency can be split)"},
    {"storage_share", ValueType::kRatio, [](const void* p, Value& v) { return set_ratio(dg(p).storage_share, v); },
     "Share of IOL1 spent at the storage: IOL2 minus the host's DPL (0 to 1)"},
    {"network_share", ValueType::kRatio, [](const void* p, Value& v) { return set_ratio(dg(p).network_share, v); },
     "Share of IOL1 spent in the network: RTT (0 to 1)"},
    {"host_share", ValueType::kRatio, [](const void* p, Value& v) { return set_ratio(dg(p).host_share, v); },
     "Share of IOL1 spent at the host preparing write data: DPL (0 to 1)"},
    {"segment", ValueType::kString, [](const void* p, Value& v) { v.s = dg(p).segment; return true; },
     "The segment that stands out against the scope's peers: storage, network, host or none"},
    {"metric", ValueType::kString, [](const void* p, Value& v) { return set_text(dg(p).metric, v); },
     "The metric compared: dal (storage), rtt (network) or dpl (host)"},
    {"value_us", ValueType::kMicros, [](const void* p, Value& v) { return set_ns(dg(p).value_ns, v); },
     "The scope's mean of the metric, µs"},
    {"peer_median_us", ValueType::kMicros, [](const void* p, Value& v) { return set_ns(dg(p).peer_median_ns, v); },
     "The median of the other scopes' means of the metric, µs"},
    {"evidence", ValueType::kString, [](const void* p, Value& v) { return set_text(dg(p).evidence, v); },
     "The numbers behind the verdict, and retransmissions, NAKs, ECN marks and PFC seen on the path"},
    {"explained_by", ValueType::kString, [](const void* p, Value& v) { return set_text(dg(p).explained_by, v); },
     "The narrower or wider scope a finding belongs to (e.g. one slow path of a host)"},
    {"rank", ValueType::kUnsigned, [](const void* p, Value& v) { v.u = dg(p).rank; return true; },
     "1 for the finding that costs most, 2 the next, ...; 0 when the record names no culprit"},
    {"worst_frame", ValueType::kUnsigned,
     [](const void* p, Value& v) {
       v.u = dg(p).worst_frame;
       return v.u != 0;
     },
     "Where to look: the command frame of the scope's I/O with the highest metric (for a lossy path, the first "
     "frame of its message with the most retransmissions)"},
};

}  // namespace

const RecordSchema kDiagnosisSchema = {"diagnosis", "where the I/O time of a host, storage, pair or job goes, and who is to blame",
                                       kDiagnosisColumns, copy_as<DiagnosisRecord>(), line_writers<kDiagnosisColumns>()};

}  // namespace rdmatel
