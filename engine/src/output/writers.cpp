// SPDX-License-Identifier: GPL-2.0-or-later
#include "rdmatel/writers.h"

#include <algorithm>
#include <charconv>
#include <cstring>

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

// A line built in place in a buffer kept between records: one capacity check per piece, numbers
// written where they go (a message record has two dozen columns; appending them to a std::string
// a character and a temporary at a time cost more than measuring the message).
class Line {
 public:
  explicit Line(std::string& buf) : buf_(buf) {
    if (buf_.size() < kInitial) buf_.resize(kInitial);
    p_ = buf_.data();
    end_ = p_ + buf_.size();
  }
  // Room for k more characters at p_. (Inlined by hand: called a few times per column, a call
  // each cost as much as the column.)
  [[gnu::always_inline]] char* room(size_t k) {
    if (size_t(end_ - p_) < k) [[unlikely]] grow(k);
    return p_;
  }
  [[gnu::always_inline]] void put(char c) { *room(1) = c, ++p_; }
  [[gnu::always_inline]] void put(std::string_view s) {
    std::memcpy(room(s.size()), s.data(), s.size());
    p_ += s.size();
  }
  [[gnu::always_inline]] void number(uint64_t x) { p_ = decimal::write(room(24), x); }
  [[gnu::always_inline]] void number(int64_t x) { p_ = decimal::write(room(24), x); }
  // A double's widest text: "%.3f" of 1e308 (fixed), or 12 significant digits and an exponent.
  void fixed3(double d) { p_ = std::to_chars(room(kDoubleRoom), end_, d, std::chars_format::fixed, 3).ptr; }
  void general12(double d) { p_ = std::to_chars(room(kDoubleRoom), end_, d, std::chars_format::general, 12).ptr; }
  // As append_us.
  void micros(DurationNs ns) {
    char* p = room(32);
    const uint64_t m = ns < 0 ? uint64_t(0) - uint64_t(ns) : uint64_t(ns);
    if (ns < 0) *p++ = '-';
    p = decimal::write(p, m / 1000);
    const uint64_t frac = m % 1000;
    p[0] = '.';
    p[1] = char('0' + frac / 100);
    p[2] = char('0' + frac / 10 % 10);
    p[3] = char('0' + frac % 10);
    p_ = p + 4;
  }
  void address(const IpAddress& a) { p_ = room(64) + a.format(p_); }
  // `n` <= N bytes of a text kept in an N-byte slot: one fixed-size copy.
  template <size_t N>
  [[gnu::always_inline]] void put_slot(const char (&text)[N], size_t n) {
    std::memcpy(room(N), text, N);
    p_ += n;
  }
  size_t size() const { return size_t(p_ - buf_.data()); }
  const char* data() const { return buf_.data(); }

 private:
  static constexpr size_t kInitial = 4096;
  static constexpr size_t kDoubleRoom = 330;
  void grow(size_t k) {
    const size_t used = size();
    buf_.resize(std::max(buf_.size() * 2, used + k + 256));
    p_ = buf_.data() + used;
    end_ = buf_.data() + buf_.size();
  }
  std::string& buf_;
  char* p_;
  char* end_;
};

// Whether a string can go into JSON between quotes as it is (printable ASCII, no quote or
// backslash): names, ops and kinds always can.
bool json_plain(std::string_view s) {
  for (char c : s)
    if (c < 0x20 || c >= 0x7F || c == '"' || c == '\\') return false;
  return true;
}

void put_json_string(Line& line, std::string_view s, std::string& scratch) {
  if (json_plain(s)) {
    line.put('"');
    line.put(s);
    line.put('"');
    return;
  }
  scratch.clear();
  append_json_string(scratch, s);
  line.put(scratch);
}

void put_csv_field(Line& line, std::string_view s, std::string& scratch) {
  scratch.clear();
  append_csv_field(scratch, s);
  line.put(scratch);
}

}  // namespace

RecordWriter::RecordWriter(std::FILE* out, RecordFormat format, const RecordSchema& schema, PointNamer names)
    : out_(out), format_(format), schema_(schema), names_(std::move(names)) {
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

// A point's name as it appears in a line (quoted and escaped for JSON, as a CSV field): worked
// out once per point, where every record names one.
const std::string& RecordWriter::point_text(PointId point) {
  auto text = [&] {
    std::string name = names_ ? names_(point) : std::to_string(point);
    std::string out;
    if (format_ == RecordFormat::kJsonl) append_json_string(out, name);
    else append_csv_field(out, name);
    return out;
  };
  if (point >= kCachedPoints) return uncached_ = text();
  if (point >= point_texts_.size()) point_texts_.resize(size_t(point) + 1);
  std::optional<std::string>& t = point_texts_[point];
  if (!t) t = text();
  return *t;
}

// An address's text, from a small cache: records name the same few addresses again and again.
const RecordWriter::AddressText& RecordWriter::address_text(const IpAddress& a) {
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

void RecordWriter::write(const void* record) {
  Line line(line_);
  const bool json = format_ == RecordFormat::kJsonl;
  if (json) line.put('{');
  bool first = true;
  for (size_t i = 0; i < schema_.columns.size(); ++i) {
    const Column& c = schema_.columns[i];
    Value v;
    const bool present = c.get(record, v);
    if (json) {
      if (!present) continue;
      if (!first) line.put(',');
      const Key& k = keys_[i];
      if (k.size <= sizeof k.text) line.put_slot(k.text, k.size);
      else line.put(k.long_text);
    } else {
      if (!first) line.put(',');
    }
    first = false;
    if (!present) continue;
    switch (c.type) {
      case ValueType::kBool: line.put(v.b ? std::string_view("true") : std::string_view("false")); break;
      case ValueType::kUnsigned: line.number(v.u); break;
      case ValueType::kSigned: line.number(v.i); break;
      case ValueType::kMicros: line.micros(v.i); break;
      case ValueType::kRate: line.fixed3(v.d); break;
      case ValueType::kRatio: line.general12(v.d); break;
      case ValueType::kString:
        if (json) put_json_string(line, v.s, cell_);
        else put_csv_field(line, v.s, cell_);
        break;
      case ValueType::kAddress:  // digits, dots, hex and colons: nothing to escape
        if (json) line.put('"');
        if (v.ip) {
          const AddressText& t = address_text(*v.ip);
          line.put_slot(t.text, t.size);
        }
        if (json) line.put('"');
        break;
      case ValueType::kPoint: line.put(point_text(v.point)); break;
    }
  }
  if (json) line.put('}');
  line.put('\n');
  std::fwrite(line.data(), 1, line.size(), out_);
}

}  // namespace rdmatel
