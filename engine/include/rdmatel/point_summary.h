// SPDX-License-Identifier: GPL-2.0-or-later
// Which observation points a summary names when it cannot name every one (analyze's points line,
// the analyzer's overview): a file of 4,000 interfaces listed all of them (139 KB on one line).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "rdmatel/engine.h"

namespace rdmatel {

struct PointSummary {
  std::vector<bool> named;  ///< by point
  size_t unnamed = 0;
  uint64_t unnamed_unknown = 0;  ///< of them, of unknown role
  uint64_t unnamed_packets = 0;
};

/// Every point up to `limit`; beyond, those that tell something (a role, configured or learned,
/// or packets the capture dropped) first, then the others by number, `limit` in all.
inline PointSummary summarize_points(const std::vector<PointInfo>& points, size_t limit) {
  PointSummary s;
  const size_t count = points.size();
  s.named.assign(count, count <= limit);
  if (count <= limit) return s;
  auto has_role = [](const PointInfo& p) {
    return p.configured != PointRole::kUnknown || p.role != PointRole::kUnknown;
  };
  auto telling = [&](const PointInfo& p) { return has_role(p) || p.capture_dropped; };
  size_t shown = 0;
  for (int pass = 0; pass < 2; ++pass)
    for (size_t i = 0; i < count && shown < limit; ++i)
      if (!s.named[i] && (pass == 1 || telling(points[i]))) {
        s.named[i] = true;
        ++shown;
      }
  for (size_t i = 0; i < count; ++i)
    if (!s.named[i]) {
      ++s.unnamed;
      s.unnamed_unknown += !has_role(points[i]);
      s.unnamed_packets += points[i].packets;
    }
  return s;
}

}  // namespace rdmatel
