// SPDX-License-Identifier: GPL-2.0-or-later
// One record's line being written (JSON Lines or CSV) and what the writer keeps between records
// to write it: the reused buffer, the points' and addresses' texts. Shared by the writer that
// walks any schema's columns (writers.cpp) and the writers made for one schema's columns at
// compile time (column_line_writer.h), so that both write the same characters.
#pragma once

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/src/util/decimal.h"
#include "rdmatel/writers.h"

namespace rdmatel {

// Values written at p, which has room for them (the widest each can be: value_width).
namespace line_text {

inline constexpr size_t kNumberWidth = 20;  // UINT64_MAX, INT64_MIN
inline constexpr size_t kMicrosWidth = 1 + kNumberWidth + 4;
inline constexpr size_t kDoubleWidth = 330;  // "%.3f" of 1e308
inline constexpr int64_t kGeneralWhole = 1000000000000;

// Whether d is a whole number that converts exactly (|d| < 2^53), and not -0 ("-0" as text).
inline bool whole(double d, int64_t& n) {
  if (!(d > -9007199254740992.0 && d < 9007199254740992.0) || d != std::trunc(d) || (d == 0 && std::signbit(d)))
    return false;
  n = int64_t(d);
  return true;
}

[[gnu::always_inline]] inline char* put(char* p, std::string_view s) {
  std::memcpy(p, s.data(), s.size());
  return p + s.size();
}
[[gnu::always_inline]] inline char* boolean(char* p, bool b) {
  return b ? put(p, std::string_view("true")) : put(p, std::string_view("false"));
}
// As append_us.
inline char* micros(char* p, DurationNs ns) {
  const uint64_t m = ns < 0 ? uint64_t(0) - uint64_t(ns) : uint64_t(ns);
  if (ns < 0) *p++ = '-';
  p = decimal::write(p, m / 1000);
  const uint64_t frac = m % 1000;
  p[0] = '.';
  p[1] = char('0' + frac / 100);
  p[2] = char('0' + frac / 10 % 10);
  p[3] = char('0' + frac % 10);
  return p + 4;
}
// "%.3f" and "%.12g" (std::to_chars with a precision: printf without the format parsing). A
// whole number (a count, 0) is written as an integer: the same characters, a tenth the work.
inline char* fixed3(char* p, double d) {
  if (int64_t n; whole(d, n)) return put(decimal::write(p, n), std::string_view(".000"));
  return std::to_chars(p, p + kDoubleWidth, d, std::chars_format::fixed, 3).ptr;
}
inline char* general12(char* p, double d) {
  // Twelve significant digits hold any whole number below 10^12 exactly, without exponent.
  if (int64_t n; whole(d, n) && n > -kGeneralWhole && n < kGeneralWhole) return decimal::write(p, n);
  return std::to_chars(p, p + kDoubleWidth, d, std::chars_format::general, 12).ptr;
}

}  // namespace line_text

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
  [[gnu::always_inline]] void put(std::string_view s) { p_ = line_text::put(room(s.size()), s); }
  // `n` <= N bytes of a text kept in an N-byte slot: one fixed-size copy.
  template <size_t N>
  [[gnu::always_inline]] void put_slot(const char (&text)[N], size_t n) {
    std::memcpy(room(N), text, N);
    p_ += n;
  }
  // For a writer that made room for what it writes next: no checks.
  char* cursor() const { return p_; }
  void advance_to(char* p) { p_ = p; }

  size_t size() const { return size_t(p_ - buf_.data()); }

 private:
  static constexpr size_t kInitial = 4096;
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

// What a line's values need besides themselves, kept between records.
class LineFormat {
 public:
  LineFormat(RecordFormat format, PointNamer names) : json(format == RecordFormat::kJsonl), names_(std::move(names)) {}

  const bool json;
  std::string buffer;  ///< the line's, reused
  std::string cell;    ///< scratch for a string that needs escaping or quoting

  /// A point's name as it appears in a line (quoted and escaped for JSON, as a CSV field):
  /// worked out once per point, where every record names one.
  const std::string& point_text(PointId point);

  /// An address and its text (at most 39 characters), in a 32-byte-copyable slot of 48.
  struct AddressText {
    IpAddress address;
    uint8_t size = 0;
    char text[48] = {};
  };
  /// From a small cache: records name the same few addresses again and again.
  const AddressText& address_text(const IpAddress& a);

  void put_string(Line& line, std::string_view s);  ///< quoted and escaped for JSON, as a CSV field

 private:
  PointNamer names_;
  std::array<AddressText, 64> addresses_{};
  static constexpr PointId kCachedPoints = 1 << 16;
  std::vector<std::optional<std::string>> point_texts_;  ///< by point: its name as written
  std::string uncached_;
};

// The widest text of a value of `type`, or 0 for the types whose text has no bound (strings,
// point names).
constexpr size_t value_width(ValueType type) {
  switch (type) {
    case ValueType::kBool: return 5;
    case ValueType::kUnsigned:
    case ValueType::kSigned: return line_text::kNumberWidth;
    case ValueType::kMicros: return line_text::kMicrosWidth;
    case ValueType::kRate:
    case ValueType::kRatio: return line_text::kDoubleWidth;
    case ValueType::kAddress: return sizeof(LineFormat::AddressText::text) + 2;
    case ValueType::kString:
    case ValueType::kPoint: return 0;
  }
  return 0;
}

// A value of a bounded type (value_width > 0) at p, which has room for it. With `type` known at
// compile time (column_line_writer.h) the switch folds away.
[[gnu::always_inline]] inline char* put_bounded_value(char* p, LineFormat& f, ValueType type, const Value& v) {
  switch (type) {
    case ValueType::kBool: return line_text::boolean(p, v.b);
    case ValueType::kUnsigned: return decimal::write(p, v.u);
    case ValueType::kSigned: return decimal::write(p, v.i);
    case ValueType::kMicros: return line_text::micros(p, v.i);
    case ValueType::kRate: return line_text::fixed3(p, v.d);
    case ValueType::kRatio: return line_text::general12(p, v.d);
    case ValueType::kAddress:  // digits, dots, hex and colons: nothing to escape
      if (f.json) *p++ = '"';
      if (v.ip) {
        const LineFormat::AddressText& t = f.address_text(*v.ip);
        std::memcpy(p, t.text, sizeof t.text);  // the whole slot: one fixed-size copy
        p += t.size;
      }
      if (f.json) *p++ = '"';
      return p;
    case ValueType::kString:
    case ValueType::kPoint: break;
  }
  return p;
}

// One present value of a column of type `type`, as both writers write it.
[[gnu::always_inline]] inline void put_value(Line& line, LineFormat& f, ValueType type, const Value& v) {
  switch (type) {
    case ValueType::kString: f.put_string(line, v.s); return;
    case ValueType::kPoint: line.put(f.point_text(v.point)); return;
    default: line.advance_to(put_bounded_value(line.room(value_width(type)), f, type, v));
  }
}

}  // namespace rdmatel
