// SPDX-License-Identifier: GPL-2.0-or-later
// The `clock_offset` setting's values, NAME=NS: what to add to observation point NAME's stamps
// to get the reference clock (the reference's clock minus NAME's, export offsets' offset_ns). One parser for the engine and the front ends' usage errors.
#pragma once

#include <charconv>
#include <cstdint>
#include <string>

namespace rdmatel {

/// Parses "NAME=NS" (NS an integer, optionally signed); false when it is not one.
inline bool parse_clock_offset(const std::string& spec, std::string& name, int64_t& ns) {
  const auto eq = spec.rfind('=');
  if (eq == std::string::npos || eq == 0) return false;
  const char* b = spec.data() + eq + 1;
  const char* e = spec.data() + spec.size();
  if (b < e && *b == '+') ++b;
  int64_t v = 0;
  const auto r = std::from_chars(b, e, v);
  if (b == e || r.ec != std::errc() || r.ptr != e) return false;
  name = spec.substr(0, eq);
  ns = v;
  return true;
}

}  // namespace rdmatel
