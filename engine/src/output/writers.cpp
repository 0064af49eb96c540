// SPDX-License-Identifier: GPL-2.0-or-later
#include "rdmatel/writers.h"

#include <algorithm>
#include <charconv>
#include <cstring>

#include "engine/src/output/record_line.h"
#include "engine/src/util/decimal.h"
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

// Whether a string can go into JSON between quotes as it is (printable ASCII, no quote or
// backslash): names, ops and kinds always can.
bool json_plain(std::string_view s) {
  for (char c : s)
    if (c < 0x20 || c >= 0x7F || c == '"' || c == '\\') return false;
  return true;
}

// What makes a CSV field need quotes.
constexpr std::string_view kCsvSpecial = ",\"\n\r";

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
  if (s.find_first_of(kCsvSpecial) == std::string_view::npos) {
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

void LineFormat::put_string(Line& line, std::string_view s) {
  // Names, ops and kinds need no escaping and no quotes: straight into the line.
  if (json && json_plain(s)) {
    line.put('"');
    line.put(s);
    line.put('"');
    return;
  }
  if (!json && s.find_first_of(kCsvSpecial) == std::string_view::npos) {
    line.put(s);
    return;
  }
  cell.clear();
  if (json) append_json_string(cell, s);
  else append_csv_field(cell, s);
  line.put(cell);
}

const std::string& LineFormat::point_text(PointId point) {
  auto text = [&] {
    std::string name = names_ ? names_(point) : std::to_string(point);
    std::string out;
    if (json) append_json_string(out, name);
    else append_csv_field(out, name);
    return out;
  };
  if (point >= kCachedPoints) return uncached_ = text();
  if (point >= point_texts_.size()) point_texts_.resize(size_t(point) + 1);
  std::optional<std::string>& t = point_texts_[point];
  if (!t) t = text();
  return *t;
}

const LineFormat::AddressText& LineFormat::address_text(const IpAddress& a) {
  uint64_t lo, hi;
  std::memcpy(&lo, a.bytes.data(), 8);
  std::memcpy(&hi, a.bytes.data() + 8, 8);
  AddressText& t = addresses_[((lo ^ hi * 31) * 0x9E3779B97F4A7C15ull) >> 58];
  if (!t.size || !(t.address == a)) {
    char text[64];
    const size_t n = a.format(text);
    t.address = a;
    t.size = uint8_t(std::min(n, sizeof t.text));
    std::memcpy(t.text, text, t.size);
  }
  return t;
}

RecordWriter::RecordWriter(std::FILE* out, RecordFormat format, const RecordSchema& schema, PointNamer names)
    : out_(out), schema_(schema), format_(std::make_unique<LineFormat>(format, std::move(names))) {
  line_writer_ = format == RecordFormat::kJsonl ? schema_.lines.jsonl : schema_.lines.csv;
  for (const Column& c : schema_.columns) {
    Key k;
    std::string text = "\"";  // (appended: GCC 12 warns falsely of overlap on "\"" + std::string)
    text += c.name;
    text += "\":";
    k.long_text = text;
    k.size = text.size();
    if (text.size() <= sizeof k.text) std::memcpy(k.text, text.data(), text.size());
    keys_.push_back(k);
  }
  if (format == RecordFormat::kCsv) {
    std::string header;
    for (size_t i = 0; i < schema_.columns.size(); ++i) {
      if (i) header += ',';
      header += schema_.columns[i].name;
    }
    header += '\n';
    std::fwrite(header.data(), 1, header.size(), out_);
  }
}

RecordWriter::~RecordWriter() = default;

void RecordWriter::on_record(const Record& r) {
  if (r.provisional || r.schema != &schema_) return;
  write(r.data);
}

void RecordWriter::write(const void* record) {
  const size_t n = line_writer_ ? line_writer_(record, *format_) : write_columns(record);
  std::fwrite(format_->buffer.data(), 1, n, out_);
}

size_t RecordWriter::write_columns(const void* record) {
  LineFormat& f = *format_;
  Line line(f.buffer);
  if (f.json) line.put('{');
  bool first = true;
  for (size_t i = 0; i < schema_.columns.size(); ++i) {
    const Column& c = schema_.columns[i];
    Value v;
    const bool present = c.get(record, v);
    if (f.json) {
      if (!present) continue;
      if (!first) line.put(',');
      const Key& k = keys_[i];
      if (k.size <= sizeof k.text) line.put_slot(k.text, k.size);
      else line.put(k.long_text);
    } else {
      if (!first) line.put(',');
    }
    first = false;
    if (present) put_value(line, f, c.type, v);
  }
  if (f.json) line.put('}');
  line.put('\n');
  return line.size();
}

}  // namespace rdmatel
