// SPDX-License-Identifier: GPL-2.0-or-later
#include "engine/metrics/paths/path_inference.h"

#include <algorithm>

namespace rdmatel::paths {

void PathInference::vote(std::unordered_map<IpAddress, Side>& sides, const IpAddress& ip, PointId p) {
  auto [it, added] = sides.try_emplace(ip, Side{p, false});
  if (!added && it->second.point != p) it->second.mixed = true;
}

PointId PathInference::side_of(const std::unordered_map<IpAddress, Side>& sides, const IpAddress& ip) {
  auto it = sides.find(ip);
  if (it == sides.end() || it->second.mixed) return kNoPoint;
  return it->second.point;
}

void PathInference::learn(const FlowKey& key, const std::vector<PointId>& order) {
  if (order.size() < 2) return;
  vote(first_point_from_, key.src, order.front());
  vote(last_point_to_, key.dst, order.back());
  by_endpoints_.try_emplace({key.src, key.dst}, order);
  by_ends_.try_emplace({order.front(), order.back()}, order);
  if (paths_.size() < kMaxPaths && std::find(paths_.begin(), paths_.end(), order) == paths_.end())
    paths_.push_back(order);
}

PointId PathInference::side_of_endpoint(const IpAddress& ip) const {
  // Where its own packets are first seen, first: a loss cuts short the paths to it, never the
  // start of the paths from it.
  PointId b = side_of(first_point_from_, ip);
  return b != kNoPoint ? b : side_of(last_point_to_, ip);
}

std::optional<PointId> PathInference::next_towards(PointId from, PointId to) const {
  for (const std::vector<PointId>& p : paths_) {
    auto f = std::find(p.begin(), p.end(), from);
    auto t = std::find(p.begin(), p.end(), to);
    if (f == p.end() || t == p.end()) continue;
    if (f < t) return *(f + 1);
    return *(f - 1);  // seen the other way: the point before `from` on it
  }
  return std::nullopt;
}

std::optional<std::vector<PointId>> PathInference::infer(const FlowKey& key) const {
  // Another queue pair between the same endpoints, the same way; else the other way, reversed.
  if (auto it = by_endpoints_.find({key.src, key.dst}); it != by_endpoints_.end()) return it->second;
  if (auto it = by_endpoints_.find({key.dst, key.src}); it != by_endpoints_.end()) {
    std::vector<PointId> path(it->second.rbegin(), it->second.rend());
    return path;
  }
  // The points next to the endpoints: where their paths start (else where paths to them end:
  // the port facing a host carries both its directions).
  const PointId a = side_of_endpoint(key.src);
  const PointId b = side_of_endpoint(key.dst);
  if (a == kNoPoint || b == kNoPoint || a == b) return std::nullopt;
  if (auto it = by_ends_.find({a, b}); it != by_ends_.end()) return it->second;
  if (auto it = by_ends_.find({b, a}); it != by_ends_.end()) {
    std::vector<PointId> path(it->second.rbegin(), it->second.rend());
    return path;
  }
  // No path seen between the two points: the endpoint's point may be only where its traffic
  // joins the captured part of the fabric (a host port not captured), not a way to it.
  return std::nullopt;
}

}  // namespace rdmatel::paths
