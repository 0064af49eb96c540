// SPDX-License-Identifier: GPL-2.0-or-later
#include "rdmatel/format.h"

#include <charconv>
#include <cmath>

namespace rdmatel {

void append_us(std::string& out, DurationNs ns) {
  uint64_t m = ns < 0 ? uint64_t(0) - uint64_t(ns) : uint64_t(ns);
  if (ns < 0) out += '-';
  char b[24];
  auto r = std::to_chars(b, b + sizeof b, m / 1000);
  out.append(b, r.ptr);
  uint64_t frac = m % 1000;
  out += '.';
  out += char('0' + frac / 100);
  out += char('0' + frac / 10 % 10);
  out += char('0' + frac % 10);
}

std::string format_us(DurationNs ns) {
  std::string s;
  append_us(s, ns);
  return s;
}

std::string format_us(double ns) { return format_us(DurationNs(std::llround(ns))); }

}  // namespace rdmatel
