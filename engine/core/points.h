// SPDX-License-Identifier: GPL-2.0-or-later
// Observation points: one per capture interface, identified by interface name (so the same
// port in several pcapng sections is one point), with roles and per-point time watermarks.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/core/config.h"
#include "engine/core/point_role.h"
#include "engine/util/time.h"

namespace rdmatel {

using PointId = uint32_t;
inline constexpr PointId kNoPoint = 0xFFFFFFFF;

struct Point {
  std::string name;               ///< interface name, or "if<N>" when the capture has none
  uint32_t interface_id = 0;      ///< first interface id that mapped here
  PointRole configured = PointRole::kUnknown;
  uint64_t inferred_compute = 0;  ///< I/Os for which this point was inferred compute side
  uint64_t inferred_storage = 0;
  uint64_t packets = 0;
  bool seen = false;              ///< has carried a packet
  TimeNs watermark = 0;           ///< newest stamp seen at this point (outliers excluded)
  uint32_t jump_votes = 0;        ///< consecutive stamps far beyond the watermark
  uint32_t drop_votes = 0;        ///< consecutive stamps far below it (the watermark was the outlier)
  TimeNs drop_max = 0;            ///< newest of those
};

class PointRegistry {
 public:
  explicit PointRegistry(const EngineConfig& cfg) : cfg_(cfg) {}

  /// The point for a capture interface; created on first use. `name` may be empty.
  /// Returns kNoPoint when the configured limit on points is reached.
  PointId resolve(uint32_t interface_id, const std::string& name);

  const Point& operator[](PointId id) const { return points_[id]; }
  Point& operator[](PointId id) { return points_[id]; }
  size_t size() const { return points_.size(); }

  /// Role shown for a point: configured, else the role it was inferred to have most often.
  PointRole role(PointId id) const;

  /// Records that a packet was seen at `id` with stamp `ts` (advances watermarks). One stamp far
  /// from the others (a bad clock, a corrupt record) must not make the point look hours past
  /// everything: a jump beyond kMaxJump moves the watermark only once kJumpVotes consecutive
  /// packets confirm it (a real pause in the traffic); and when kDropVotes consecutive packets
  /// lie that far below the watermark, the watermark was the outlier and comes back down.
  void observe(PointId id, TimeNs ts) {
    Point& p = points_[id];
    ++p.packets;
    if (!p.seen) {
      p.seen = true;
      p.watermark = ts;
      if (!any_seen_ || ts < first_ts_) first_ts_ = ts;
    } else if (ts > p.watermark) {
      p.drop_votes = 0;
      if (ts - p.watermark <= kMaxJump || ++p.jump_votes >= kJumpVotes) {
        p.watermark = ts;
        p.jump_votes = 0;
      }
    } else {
      p.jump_votes = 0;
      if (p.watermark - ts > kMaxJump) {
        p.drop_max = p.drop_votes ? std::max(p.drop_max, ts) : ts;
        if (++p.drop_votes >= kDropVotes) {
          p.watermark = p.drop_max;
          p.drop_votes = 0;
          recompute_newest();
        }
      } else {
        p.drop_votes = 0;
      }
    }
    if (!any_seen_ || p.watermark > newest_) newest_ = p.watermark;
    any_seen_ = true;
  }

  static constexpr TimeNs kMaxJump = 600 * kNsPerSec;
  static constexpr uint32_t kJumpVotes = 4;
  // Stamps going back more than kMaxJump twice in a row never happen in a real capture (they
  // are stamped as packets arrive): the watermark was the outlier.
  static constexpr uint32_t kDropVotes = 2;

  /// Newest stamp seen anywhere.
  TimeNs newest() const { return newest_; }

  /// True when every non-idle point has seen stamps beyond `t` (so no point will still report
  /// an event that happened at or before `t`, within the reorder window).
  bool all_points_past(TimeNs t) const;

  /// True when every point in `ids` that is not idle has moved past `t`.
  bool points_past(const PointId* ids, size_t n, TimeNs t) const;

 private:
  bool idle(const Point& p) const;
  void recompute_newest() {
    bool any = false;
    for (const Point& q : points_)
      if (q.seen && (!any || q.watermark > newest_)) {
        newest_ = q.watermark;
        any = true;
      }
  }

  const EngineConfig& cfg_;
  std::vector<Point> points_;
  std::unordered_map<std::string, PointId> by_name_;
  bool any_seen_ = false;
  TimeNs first_ts_ = 0;
  TimeNs newest_ = 0;
};

}  // namespace rdmatel
