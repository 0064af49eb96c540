// SPDX-License-Identifier: GPL-2.0-or-later
#include "engine/report/number_format.h"

#include <cmath>
#include <cstdio>

namespace rdmatel {

std::string format_us(DurationNs ns) {
  char buf[40];
  uint64_t m = ns < 0 ? uint64_t(0) - uint64_t(ns) : uint64_t(ns);
  std::snprintf(buf, sizeof buf, "%s%llu.%03llu", ns < 0 ? "-" : "", (unsigned long long)(m / 1000),
                (unsigned long long)(m % 1000));
  return buf;
}

std::string format_us(double ns) { return format_us(DurationNs(std::llround(ns))); }

}  // namespace rdmatel
