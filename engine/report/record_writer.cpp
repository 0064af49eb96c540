// SPDX-License-Identifier: GPL-2.0-or-later
#include "engine/report/record_writer.h"

#include <vector>

#include "engine/report/number_format.h"

namespace rdmatel {

std::string json_quote(const std::string& s) {
  std::string o = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"': o += "\\\""; break;
      case '\\': o += "\\\\"; break;
      case '\n': o += "\\n"; break;
      case '\r': o += "\\r"; break;
      case '\t': o += "\\t"; break;
      default:
        if (c < 0x20) {
          char b[8];
          std::snprintf(b, sizeof b, "\\u%04x", c);
          o += b;
        } else {
          o += char(c);
        }
    }
  }
  return o + "\"";
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string o = "\"";
  for (char c : s) o += c == '"' ? std::string("\"\"") : std::string(1, c);
  return o + "\"";
}

namespace {

// One I/O record as ordered (name, JSON value) pairs; absent values are skipped in JSON and
// empty in CSV. The column list is fixed so CSV columns never shift.
const char* const kIoColumns[] = {
    "op",     "opcode",  "admin",  "host",   "storage", "qpn",    "host_qpn", "cid",       "status",
    "complete", "end",   "in_capsule", "length", "t1_ns", "t2_ns", "t3_ns",   "t4_ns",     "t5_ns",
    "t6_ns",  "t7_ns",   "dal_us", "dpl_us", "iol1_us", "iol2_us", "rtt_us",  "iol_us",    "cmd_frame",
    "rsp_frame", "compute_point", "storage_point"};
constexpr size_t kIoColumnCount = sizeof kIoColumns / sizeof kIoColumns[0];

struct Value {
  bool present = false;
  bool is_string = false;
  std::string text;
};

void io_values(const IoRecord& r, const PointRegistry& points, Value (&v)[kIoColumnCount]) {
  size_t i = 0;
  auto str = [&](const std::string& s) { v[i++] = {true, true, s}; };
  auto num = [&](const std::string& s) { v[i++] = {true, false, s}; };
  auto u = [&](uint64_t x) { num(std::to_string(x)); };
  auto b = [&](bool x) { num(x ? "true" : "false"); };
  auto none = [&] { v[i++] = {}; };
  str(r.op);
  u(r.opcode);
  b(r.admin);
  str(r.host.to_string());
  str(r.storage.to_string());
  u(r.qpn);
  if (r.host_qpn) u(*r.host_qpn); else none();
  u(r.cid);
  if (r.complete) u(r.status); else none();
  b(r.complete);
  str(io_end_name(r.end));
  b(r.in_capsule);
  u(r.length);
  for (int t = 1; t <= 7; ++t)
    if (r.t.has(t)) num(std::to_string(r.t[t])); else none();
  IoMetrics m = io_metrics(r);
  for (const auto* x : {&m.dal, &m.dpl, &m.iol1, &m.iol2, &m.rtt, &m.iol})
    if (*x) num(format_us(**x)); else none();
  if (r.cmd_frame) u(r.cmd_frame); else none();
  if (r.rsp_frame) u(r.rsp_frame); else none();
  if (r.compute_point != kNoPoint) str(points[r.compute_point].name); else none();
  if (r.storage_point != kNoPoint) str(points[r.storage_point].name); else none();
}

}  // namespace

IoRecordWriter::IoRecordWriter(std::FILE* out, RecordFormat format, const PointRegistry& points)
    : out_(out), format_(format), points_(points) {
  if (format_ == RecordFormat::kCsv) {
    std::string h;
    for (size_t i = 0; i < kIoColumnCount; ++i) h += (i ? "," : "") + std::string(kIoColumns[i]);
    std::fprintf(out_, "%s\n", h.c_str());
  }
}

void IoRecordWriter::write(const IoRecord& r) {
  Value v[kIoColumnCount];
  io_values(r, points_, v);
  std::string line;
  if (format_ == RecordFormat::kJsonl) {
    line = "{";
    bool first = true;
    for (size_t i = 0; i < kIoColumnCount; ++i) {
      if (!v[i].present) continue;
      if (!first) line += ",";
      first = false;
      line += "\"" + std::string(kIoColumns[i]) + "\":" + (v[i].is_string ? json_quote(v[i].text) : v[i].text);
    }
    line += "}";
  } else {
    for (size_t i = 0; i < kIoColumnCount; ++i) {
      if (i) line += ",";
      if (v[i].present) line += v[i].is_string ? csv_field(v[i].text) : v[i].text;
    }
  }
  line += "\n";
  std::fwrite(line.data(), 1, line.size(), out_);
}

}  // namespace rdmatel
