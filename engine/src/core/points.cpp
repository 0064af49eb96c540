// SPDX-License-Identifier: GPL-2.0-or-later
#include "engine/src/core/points.h"

#include <algorithm>

namespace rdmatel {

PointId PointTable::declare(const std::string& name, uint32_t interface_id, uint64_t speed_bps) {
  auto it = by_name_.find(name);
  if (it != by_name_.end()) {
    PointState& p = points_[it->second];
    if (!p.speed_bps) p.speed_bps = speed_bps;
    return it->second;
  }
  if (points_.size() >= kMaxPoints) return kNoPoint;
  PointId id = PointId(points_.size());
  PointState& p = points_.emplace_back();
  p.name = name;
  p.interface_id = interface_id;
  p.speed_bps = speed_bps;
  p.declared_progress = progress_;
  by_name_.emplace(name, id);
  ++awaited_;  // declared, no packet yet
  logged_in_.push_back(0);
  return id;
}

}  // namespace rdmatel
