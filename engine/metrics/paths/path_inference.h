// SPDX-License-Identifier: GPL-2.0-or-later
// The path of a flow none of whose packets reached a second observation point (a direction
// black-holed between two points, every packet lost on one hop): no packet of it shows where it
// was going, so its losses would show on no hop at all. The flows whose paths were seen tell it:
// another flow between the same two endpoints, or the reverse of one; else the point next to each
// endpoint (where paths to it end and paths from it start: the switch port facing the host) and
// a path seen between those two points, either way. Such a path is flagged as inferred
// (PathRecord::path_inferred): under ECMP a flow of other endpoints may take other switches.
// Paths only asks for one when the flow's receiver never answered it (a delivered flow's ACKs
// come back: it went a way the capture does not see, two hosts on one switch say).
#pragma once

#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

#include "engine/src/core/flows.h"
#include "engine/src/util/word_hash.h"
#include "rdmatel/types.h"

namespace rdmatel::paths {

class PathInference {
 public:
  /// A flow's path as decided from its own packets (two points at least).
  void learn(const FlowKey& key, const std::vector<PointId>& order);
  /// The likely path of a flow of `key` seen at one point only; nullopt when nothing learned
  /// tells it (or what was learned disagrees).
  std::optional<std::vector<PointId>> infer(const FlowKey& key) const;
  /// The point next to `ip` (where paths from it start; else where paths to it end); kNoPoint
  /// when unknown or the paths disagree.
  PointId side_of_endpoint(const IpAddress& ip) const;
  /// The point after `from` on a path seen from `from` to `to` (either way); nullopt when none.
  std::optional<PointId> next_towards(PointId from, PointId to) const;

 private:
  struct Side {
    PointId point = kNoPoint;
    bool mixed = false;  ///< paths put the endpoint next to different points: no side
  };
  static void vote(std::unordered_map<IpAddress, Side>& sides, const IpAddress& ip, PointId p);
  static PointId side_of(const std::unordered_map<IpAddress, Side>& sides, const IpAddress& ip);
  struct EndsHash {
    size_t operator()(const std::pair<PointId, PointId>& k) const noexcept {
      return size_t(hash_mix(uint64_t(k.first) << 32 | k.second));
    }
  };
  std::unordered_map<IpAddress, Side> first_point_from_;  ///< by source IP: where its paths start
  std::unordered_map<IpAddress, Side> last_point_to_;     ///< by destination IP: where its paths end
  /// The first path seen for each (source, destination) and for each (first point, last point).
  std::unordered_map<IpPair, std::vector<PointId>, IpPairHash> by_endpoints_;
  std::unordered_map<std::pair<PointId, PointId>, std::vector<PointId>, EndsHash> by_ends_;
  /// Every distinct path seen (a handful: flows share their paths), up to kMaxPaths.
  std::vector<std::vector<PointId>> paths_;
  static constexpr size_t kMaxPaths = 256;
};

}  // namespace rdmatel::paths
