// SPDX-License-Identifier: GPL-2.0-or-later
#include "engine/core/points.h"

#include <cctype>
#include <string>

namespace rdmatel {

const char* point_role_name(PointRole r) {
  switch (r) {
    case PointRole::kCompute: return "compute";
    case PointRole::kFabric: return "fabric";
    case PointRole::kStorage: return "storage";
    case PointRole::kUnknown: break;
  }
  return "unknown";
}

std::optional<PointRole> parse_point_role(std::string_view text) {
  std::string t;
  for (char c : text) t += char(std::tolower(static_cast<unsigned char>(c)));
  if (t == "compute") return PointRole::kCompute;
  if (t == "storage") return PointRole::kStorage;
  if (t == "fabric") return PointRole::kFabric;
  return std::nullopt;
}

PointId PointRegistry::resolve(uint32_t interface_id, const std::string& name) {
  std::string key = name.empty() ? "if" + std::to_string(interface_id) : name;
  auto it = by_name_.find(key);
  if (it != by_name_.end()) return it->second;
  if (points_.size() >= cfg_.max_points) return kNoPoint;
  Point p;
  p.name = key;
  p.interface_id = interface_id;
  for (const auto& o : cfg_.roles)
    if (o.name == key || o.name == std::to_string(interface_id)) p.configured = o.role;
  PointId id = PointId(points_.size());
  points_.push_back(std::move(p));
  by_name_.emplace(std::move(key), id);
  return id;
}

PointRole PointRegistry::role(PointId id) const {
  const Point& p = points_[id];
  if (p.configured != PointRole::kUnknown) return p.configured;
  if (p.inferred_compute == 0 && p.inferred_storage == 0) return PointRole::kUnknown;
  return p.inferred_compute >= p.inferred_storage ? PointRole::kCompute : PointRole::kStorage;
}

bool PointRegistry::idle(const Point& p) const {
  TimeNs last = p.seen ? p.watermark : first_ts_;
  return newest_ - last > cfg_.idle_point_ns;
}

bool PointRegistry::all_points_past(TimeNs t) const {
  for (const Point& p : points_) {
    if (idle(p)) continue;
    if (!p.seen || p.watermark <= t) return false;
  }
  return true;
}

bool PointRegistry::points_past(const PointId* ids, size_t n, TimeNs t) const {
  for (size_t i = 0; i < n; ++i) {
    const Point& p = points_[ids[i]];
    if (idle(p)) continue;
    if (!p.seen || p.watermark <= t) return false;
  }
  return true;
}

}  // namespace rdmatel
