// SPDX-License-Identifier: GPL-2.0-or-later
#include "engine/report/record_writer.h"

#include "engine/report/number_format.h"

namespace rdmatel {

namespace {

// Length of the valid UTF-8 sequence at s[i], or 0 when the bytes there are not one.
size_t utf8_sequence(const std::string& s, size_t i) {
  auto b = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  unsigned char c = b(i);
  size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
  if (n == 0 || i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k)
    if ((b(i + k) >> 6) != 0x2) return 0;
  uint32_t cp = n == 1 ? c : n == 2 ? c & 0x1F : n == 3 ? c & 0x0F : c & 0x07;
  for (size_t k = 1; k < n; ++k) cp = cp << 6 | (b(i + k) & 0x3F);
  // Overlong forms, UTF-16 surrogates and values past U+10FFFF are not UTF-8.
  if ((n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
      (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF)
    return 0;
  return n;
}

}  // namespace

std::string json_quote(const std::string& s) {
  // JSON text is UTF-8: bytes that are not (an interface name from a Latin-1 system, a corrupt
  // capture) become U+FFFD.
  std::string o = "\"";
  for (size_t i = 0; i < s.size();) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    size_t n = utf8_sequence(s, i);
    if (n == 0) {
      o += "\\ufffd";
      ++i;
      continue;
    }
    if (n > 1) {
      o.append(s, i, n);
      i += n;
      continue;
    }
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
    ++i;
  }
  return o + "\"";
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string o = "\"";
  for (char c : s) o += c == '"' ? std::string("\"\"") : std::string(1, c);
  return o + "\"";
}

std::string format_rate(double bps) {
  char b[64];
  std::snprintf(b, sizeof b, "%.3f", bps);
  return b;
}

std::string format_ratio(double x) {
  char b[64];
  std::snprintf(b, sizeof b, "%.12g", x);
  return b;
}

RecordWriter::RecordWriter(std::FILE* out, RecordFormat format, std::vector<const char*> columns)
    : out_(out), format_(format), columns_(std::move(columns)) {
  if (format_ == RecordFormat::kCsv) {
    std::string h;
    for (size_t i = 0; i < columns_.size(); ++i) {
      if (i) h += ',';
      h += columns_[i];
    }
    std::fprintf(out_, "%s\n", h.c_str());
  }
}

void RecordWriter::write(const std::vector<Cell>& row) {
  std::string line;
  if (format_ == RecordFormat::kJsonl) {
    line = "{";
    bool first = true;
    for (size_t i = 0; i < columns_.size() && i < row.size(); ++i) {
      if (row[i].kind == Cell::kAbsent) continue;
      if (!first) line += ",";
      first = false;
      line += '"';
      line += columns_[i];
      line += "\":";
      line += row[i].kind == Cell::kString ? json_quote(row[i].text) : row[i].text;
    }
    line += "}";
  } else {
    for (size_t i = 0; i < columns_.size(); ++i) {
      if (i) line += ",";
      if (i < row.size() && row[i].kind != Cell::kAbsent)
        line += row[i].kind == Cell::kString ? csv_field(row[i].text) : row[i].text;
    }
  }
  line += "\n";
  std::fwrite(line.data(), 1, line.size(), out_);
}

namespace {

// Appends cells in column order.
struct RowBuilder {
  std::vector<Cell> cells;
  void str(const std::string& s) { cells.push_back({Cell::kString, s}); }
  void num(const std::string& s) { cells.push_back({Cell::kNumber, s}); }
  void u(uint64_t x) { num(std::to_string(x)); }
  void i(int64_t x) { num(std::to_string(x)); }
  void b(bool x) { num(x ? "true" : "false"); }
  void none() { cells.push_back({}); }
  void point(const PointRegistry& pts, PointId id) {
    if (id != kNoPoint && id < pts.size()) str(pts[id].name);
    else none();
  }
};

}  // namespace

const std::vector<const char*>& io_columns() {
  static const std::vector<const char*> c = {
      "op",       "opcode", "admin",   "host",    "storage", "qpn",    "host_qpn", "cid",       "status",
      "complete", "end",    "in_capsule", "length", "t1_ns", "t2_ns",  "t3_ns",    "t4_ns",     "t5_ns",
      "t6_ns",    "t7_ns",  "dal_us",  "dpl_us",  "iol1_us", "iol2_us", "rtt_us",  "iol_us",    "cmd_frame",
      "rsp_frame", "compute_point", "storage_point"};
  return c;
}

std::vector<Cell> io_row(const IoRecord& r, const PointRegistry& points) {
  RowBuilder w;
  w.str(r.op);
  w.u(r.opcode);
  w.b(r.admin);
  w.str(r.host.to_string());
  w.str(r.storage.to_string());
  w.u(r.qpn);
  if (r.host_qpn) w.u(*r.host_qpn); else w.none();
  w.u(r.cid);
  if (r.complete) w.u(r.status); else w.none();
  w.b(r.complete);
  w.str(io_end_name(r.end));
  w.b(r.in_capsule);
  w.u(r.length);
  for (int t = 1; t <= 7; ++t)
    if (r.t.has(t)) w.i(r.t[t]); else w.none();
  IoMetrics m = io_metrics(r);
  for (const auto* x : {&m.dal, &m.dpl, &m.iol1, &m.iol2, &m.rtt, &m.iol})
    if (*x) w.num(format_us(**x)); else w.none();
  if (r.cmd_frame) w.u(r.cmd_frame); else w.none();
  if (r.rsp_frame) w.u(r.rsp_frame); else w.none();
  w.point(points, r.compute_point);
  w.point(points, r.storage_point);
  return w.cells;
}

const std::vector<const char*>& message_columns() {
  static const std::vector<const char*> c = {
      "src",      "dst",     "dst_qpn", "point",  "kind",   "with_immediate", "complete", "first_psn",
      "last_psn", "first_ns", "last_ns", "fct_us", "bytes", "retrans_bytes",  "packets",  "retrans_packets",
      "naks",     "fet_bps", "fnr",     "first_frame", "last_frame"};
  return c;
}

std::vector<Cell> message_row(const MessageRecord& r, const PointRegistry& points) {
  RowBuilder w;
  w.str(r.src.to_string());
  w.str(r.dst.to_string());
  w.u(r.dst_qpn);
  w.point(points, r.point);
  w.str(message_kind_name(r.kind));
  w.b(r.with_immediate);
  w.b(r.complete);
  w.u(r.first_psn);
  w.u(r.last_psn);
  w.i(r.first_ns);
  w.i(r.last_ns);
  w.num(format_us(r.fct_ns()));
  w.u(r.bytes);
  w.u(r.retrans_bytes);
  w.u(r.packets);
  w.u(r.retrans_packets);
  w.u(r.naks);
  if (auto f = r.fet_bps()) w.num(format_rate(*f)); else w.none();
  if (auto f = r.fnr()) w.num(format_ratio(*f)); else w.none();
  w.u(r.first_frame);
  w.u(r.last_frame);
  return w.cells;
}

const std::vector<const char*>& flow_columns() {
  static const std::vector<const char*> c = {
      "src",     "dst",          "dst_qpn",         "point",         "period_start_ns", "period_s",
      "packets", "bytes",        "effective_bytes", "retrans_packets", "retrans_bytes", "naks",
      "oos_packets", "fet_bps"};
  return c;
}

std::vector<Cell> flow_row(const FlowPeriodRecord& r, const PointRegistry& points) {
  RowBuilder w;
  w.str(r.src.to_string());
  w.str(r.dst.to_string());
  w.u(r.dst_qpn);
  w.point(points, r.point);
  w.i(r.period_start_ns);
  w.num(format_ratio(double(r.period_ns) / 1e9));
  w.u(r.packets);
  w.u(r.bytes);
  w.u(r.effective_bytes());
  w.u(r.retrans_packets);
  w.u(r.retrans_bytes);
  w.u(r.naks);
  w.u(r.oos_packets);
  w.num(format_rate(r.fet_bps()));
  return w.cells;
}

}  // namespace rdmatel
