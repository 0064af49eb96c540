// SPDX-License-Identifier: GPL-2.0-or-later
#include "rdmatel/writers.h"

#include <charconv>
#include <cstring>

#include "rdmatel/format.h"

namespace rdmatel {
namespace {

// Length of the valid UTF-8 sequence at s[i], or 0 when the bytes there are not one.
size_t utf8_sequence(std::string_view s, size_t i) {
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

void append_u64(std::string& out, uint64_t x) {
  char b[24];
  auto r = std::to_chars(b, b + sizeof b, x);
  out.append(b, r.ptr);
}

void append_i64(std::string& out, int64_t x) {
  char b[24];
  auto r = std::to_chars(b, b + sizeof b, x);
  out.append(b, r.ptr);
}

}  // namespace

void append_json_string(std::string& o, std::string_view s) {
  // JSON text is UTF-8: bytes that are not (an interface name from a Latin-1 system, a corrupt
  // capture) become U+FFFD.
  o += '"';
  for (size_t i = 0; i < s.size();) {
    size_t plain = i;  // a run of printable ASCII that needs no escape, appended at once
    while (plain < s.size() && s[plain] >= 0x20 && s[plain] < 0x7F && s[plain] != '"' && s[plain] != '\\') ++plain;
    if (plain > i) {
      o.append(s.data() + i, plain - i);
      i = plain;
      continue;
    }
    unsigned char c = static_cast<unsigned char>(s[i]);
    size_t n = utf8_sequence(s, i);
    if (n == 0) {
      o += "\\ufffd";
      ++i;
      continue;
    }
    if (n > 1) {
      o.append(s.substr(i, n));
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
  o += '"';
}

void append_csv_field(std::string& o, std::string_view s) {
  if (s.find_first_of(",\"\n\r") == std::string_view::npos) {
    o.append(s);
    return;
  }
  o += '"';
  for (char c : s) {
    if (c == '"') o += '"';
    o += c;
  }
  o += '"';
}

void append_value(std::string& out, ValueType type, const Value& v, const PointNamer& names) {
  char b[64];
  switch (type) {
    case ValueType::kBool: out += v.b ? "true" : "false"; return;
    case ValueType::kUnsigned: append_u64(out, v.u); return;
    case ValueType::kSigned: append_i64(out, v.i); return;
    case ValueType::kMicros: append_us(out, v.i); return;
    // to_chars with a precision is printf's "%.3f" and "%.12g" without the format parsing.
    case ValueType::kRate: out.append(b, std::to_chars(b, b + sizeof b, v.d, std::chars_format::fixed, 3).ptr); return;
    case ValueType::kRatio: out.append(b, std::to_chars(b, b + sizeof b, v.d, std::chars_format::general, 12).ptr); return;
    case ValueType::kString: out.append(v.s); return;
    case ValueType::kAddress:
      if (v.ip) {
        char a[64];
        out.append(a, v.ip->format(a));
      }
      return;
    case ValueType::kPoint: out += names ? names(v.point) : std::to_string(v.point); return;
  }
}

namespace {
bool quoted(ValueType t) { return t == ValueType::kString || t == ValueType::kAddress || t == ValueType::kPoint; }
}  // namespace

RecordWriter::RecordWriter(std::FILE* out, RecordFormat format, const RecordSchema& schema, PointNamer names)
    : out_(out), format_(format), schema_(schema), names_(std::move(names)) {
  if (format_ == RecordFormat::kCsv) {
    line_.clear();
    for (size_t i = 0; i < schema_.columns.size(); ++i) {
      if (i) line_ += ',';
      line_ += schema_.columns[i].name;
    }
    line_ += '\n';
    std::fwrite(line_.data(), 1, line_.size(), out_);
  }
}

void RecordWriter::on_record(const Record& r) {
  if (r.provisional || r.schema != &schema_) return;
  write(r.data);
}

void RecordWriter::write(const void* record) {
  line_.clear();
  std::string& cell = cell_;
  if (format_ == RecordFormat::kJsonl) {
    line_ += '{';
    bool first = true;
    for (const Column& c : schema_.columns) {
      Value v;
      if (!c.get(record, v)) continue;
      if (!first) line_ += ',';
      first = false;
      line_ += '"';
      line_ += c.name;
      line_ += "\":";
      if (quoted(c.type)) {
        cell.clear();
        append_value(cell, c.type, v, names_);
        append_json_string(line_, cell);
      } else {
        append_value(line_, c.type, v, names_);
      }
    }
    line_ += '}';
  } else {
    bool first = true;
    for (const Column& c : schema_.columns) {
      if (!first) line_ += ',';
      first = false;
      Value v;
      if (!c.get(record, v)) continue;
      if (quoted(c.type)) {
        cell.clear();
        append_value(cell, c.type, v, names_);
        append_csv_field(line_, cell);
      } else {
        append_value(line_, c.type, v, names_);
      }
    }
  }
  line_ += '\n';
  std::fwrite(line_.data(), 1, line_.size(), out_);
}

}  // namespace rdmatel
