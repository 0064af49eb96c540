// SPDX-License-Identifier: GPL-2.0-or-later
// The `point_speed` setting's values, NAME=GBPS: the link speed of observation point NAME (name
// or numeric interface id) for PFC pause times, in Gb/s. One parser for the engine and the front
// ends' usage errors.
#pragma once

#include <cstdlib>
#include <string>

namespace rdmatel {

/// Parses "NAME=GBPS" (GBPS a number > 0 and <= 1e6, e.g. 25, 400, 2.5); false when it is not one.
inline bool parse_point_speed(const std::string& spec, std::string& name, double& gbps) {
  const auto eq = spec.rfind('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size()) return false;
  const std::string v = spec.substr(eq + 1);
  char* end = nullptr;
  const double g = std::strtod(v.c_str(), &end);
  if (end != v.c_str() + v.size() || !(g > 0) || g > 1e6) return false;
  name = spec.substr(0, eq);
  gbps = g;
  return true;
}

}  // namespace rdmatel
