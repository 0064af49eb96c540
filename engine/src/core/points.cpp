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
  return id;
}

void PointTable::observe(PointId id, TimeNs ts) {
  PointState& p = points_[id];
  ++p.packets;
  p.quiet = false;
  if (!p.seen) {
    p.seen = true;
    p.first = p.watermark = ts;
    p.first_progress = progress_;
  } else if (ts > p.watermark) {
    if (ts - p.watermark <= kMaxJump || ++p.jump_votes >= kJumpVotes) {
      p.watermark = ts;
      p.jump_votes = 0;
    }
  } else {
    p.jump_votes = 0;
  }
  progress_ = std::max(progress_, p.watermark - p.first);
  p.last_progress = progress_;
}

TimeNs PointTable::next_horizon(PointId id, DurationNs window) const {
  const PointState& p = points_[id];
  return p.seen ? std::max(p.horizon, p.watermark - window) : p.horizon;
}

TimeNs PointTable::advance_horizon(PointId id, DurationNs window) {
  return points_[id].horizon = next_horizon(id, window);
}

}  // namespace rdmatel
