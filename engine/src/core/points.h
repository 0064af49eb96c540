// SPDX-License-Identifier: GPL-2.0-or-later
// Observation points: their names and configured roles, and each point's own clock as the
// engine knows it. Clocks of different points are never compared here.
//
// Per point:
//  - watermark: the newest stamp that arrived (one stamp far from the others — a bad clock, a
//    corrupt record — does not move it until confirmed; see observe());
//  - horizon: watermark - reorder window. Every packet of the point stamped at or before it has
//    been handled (the reorder buffer released it), so a component may treat the horizon as
//    "now" at that point;
//  - elapsed: watermark - first stamp. The capture's progress G is the largest elapsed of any
//    point; it measures how far the capture has advanced without comparing two clocks, and
//    tells when a point has gone quiet (idle).
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/src/core/mirror_copies.h"
#include "engine/src/core/reorder_buffer.h"
#include "rdmatel/types.h"

namespace rdmatel {

inline constexpr TimeNs kTimeMin = std::numeric_limits<TimeNs>::min() / 4;
inline constexpr TimeNs kTimeMax = std::numeric_limits<TimeNs>::max() / 4;

struct PointState {
  std::string name;
  uint32_t interface_id = 0;
  uint64_t speed_bps = 0;
  PointRole configured = PointRole::kUnknown;
  uint64_t packets = 0;
  uint64_t capture_dropped = 0;  ///< what the capture itself dropped (Engine::set_capture_dropped)
  bool seen = false;
  TimeNs first = 0;
  TimeNs watermark = 0;
  TimeNs horizon = kTimeMin;
  DurationNs declared_progress = 0;  ///< capture progress G when the point was declared
  DurationNs first_progress = 0;     ///< G when it carried its first packet
  DurationNs last_progress = 0;      ///< G when it carried its latest packet
  uint32_t jump_votes = 0;           ///< consecutive stamps far beyond the watermark
  /// Carried no packet while the capture advanced the idle time: its buffered packets have been
  /// handled, and nothing waits for it (cleared by its next packet).
  bool quiet = false;
  ReorderBuffer buffer;
  /// Until this stamp, the point's capture is seen giving packets twice (a copy of a request at its
  /// stamp): repeated ACKs there are copies too (engine.cpp, given_twice).
  TimeNs copies_until = kTimeMin;
  MirrorCopies mirror_copies;
  /// Spans in which the point captured nothing though the capture went on (Engine::capture_gap:
  /// a ring file of its capture missing), at most kMaxGaps.
  std::vector<std::pair<TimeNs, TimeNs>> gaps;
  static constexpr size_t kMaxGaps = 256;

  /// Whether a user names this point by `name`: its interface name or numeric interface id (as
  /// --point, --clock-offset and --point-speed do).
  /// By its name, or by its interface's number (not a point found inside an interface's traffic,
  /// an ERSPAN session's: kNoInterfaceId).
  bool named(const std::string& n) const {
    return n == name || (interface_id != kNoInterfaceId && n == std::to_string(interface_id));
  }
  static constexpr uint32_t kNoInterfaceId = UINT32_MAX;
};

class PointTable {
 public:
  static constexpr size_t kMaxPoints = 65536;  // the pcapng reader's limit on interfaces

  /// The point named `name`, declared on first use; kNoPoint at the limit.
  PointId declare(const std::string& name, uint32_t interface_id, uint64_t speed_bps);
  size_t size() const { return points_.size(); }
  /// Whether some point is named `name` (PointState::named).
  bool any_named(const std::string& name) const {
    for (const PointState& p : points_)
      if (p.named(name)) return true;
    return false;
  }
  PointState& operator[](PointId id) { return points_[id]; }
  const PointState& operator[](PointId id) const { return points_[id]; }

  /// Records a stamp that arrived at `id` (before reordering): advances its watermark.
  void observe(PointId id, TimeNs ts) {
    PointState& p = points_[id];
    if (!p.seen && !p.quiet) --awaited_;  // its first packet
    if (!p.seen || p.quiet) make_active(id);
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
  /// Where the point's horizon goes given the reorder window (monotonic), without moving it: the
  /// engine hands on the packets up to there first.
  TimeNs next_horizon(PointId id, DurationNs window) const {
    const PointState& p = points_[id];
    return p.seen ? std::max(p.horizon, p.watermark - window) : p.horizon;
  }
  /// Moves the point's horizon to next_horizon().
  TimeNs advance_horizon(PointId id, DurationNs window) {
    raise_horizon(id, next_horizon(id, window));
    return points_[id].horizon;
  }
  /// Moves the point's horizon to `t` if that is later. Every write of a horizon goes through here
  /// or set_horizon, for the change log.
  void raise_horizon(PointId id, TimeNs t) {
    if (t > points_[id].horizon) set_horizon(id, t);
  }
  void set_horizon(PointId id, TimeNs t) {
    points_[id].horizon = t;
    note_change(id);
  }

  /// The points whose horizon changed or that were made active or quiet, in order: what keeps the
  /// active points ordered by horizon (PointProgress) re-keys those since it last looked. Calls
  /// f(id) for each change since `seen` (duplicates included) and moves `seen` to the latest; false,
  /// calling nothing, when more changed than the log keeps (then every point may have).
  template <typename F>
  bool changes_since(uint64_t& seen, F&& f) const {
    ++read_epoch_;  // (see note_change)
    if (changes_ - seen > kChangeLog) {
      seen = changes_;
      return false;
    }
    for (; seen < changes_; ++seen) f(change_log_[seen & (kChangeLog - 1)]);
    return true;
  }
  /// Moves `seen` past every change so far without reading them (a reader that re-keys every
  /// point instead).
  void skip_changes(uint64_t& seen) const {
    ++read_epoch_;
    seen = changes_;
  }

  /// How long a point that carries packets but shares none with another yet is still waited for
  /// (its clock may run seconds behind, its copies come later in the input).
  static DurationNs discovery(DurationNs window) { return std::max<DurationNs>(kNsPerSec, 4 * window); }
  /// A point is new until it has handled `discovery` of its own traffic (its horizon, its own
  /// clock): before that it may share packets with any other point without having shown it.
  bool is_new(PointId id, DurationNs window) const {
    const PointState& p = points_[id];
    return p.horizon < p.first + discovery(window);
  }

  /// Capture progress G: the largest elapsed time of any point (clock-independent).
  DurationNs progress() const { return progress_; }
  /// True when the point carried no packet while the capture advanced `idle` (a declared point
  /// that never carried one counts from its declaration). Components use `quiet`, which the
  /// engine sets once it has handled such a point's buffered packets.
  bool idle(PointId id, DurationNs idle_ns) const {
    const PointState& p = points_[id];
    return progress_ - (p.seen ? p.last_progress : p.declared_progress) > idle_ns;
  }

  /// True for a declared point with no packet yet, until it goes quiet (the idle time without
  /// one): its first packet may come as far into a file merged by stamp as its clock runs behind
  /// the others'.
  bool awaited(PointId id) const {
    const PointState& p = points_[id];
    return !p.seen && !p.quiet;
  }
  /// Whether any point is awaited (counted as they change: asked at every settling of `paths`,
  /// which a file of tens of thousands of interfaces made a scan of all of them).
  bool any_awaited() const { return awaited_ > 0; }
  /// The engine handled what the point buffered and waits for it no more (PointState::quiet).
  void set_quiet(PointId id) {
    PointState& p = points_[id];
    if (!p.seen && !p.quiet) --awaited_;
    if (p.seen && !p.quiet) make_inactive(id);
    p.quiet = true;
  }
  /// The points that carried a packet and are not quiet, in no particular order: those whose
  /// progress holds results back. What asks "which point is furthest behind?" at every step
  /// reads these, not every point: 40,000 points going quiet in one scan each asked it over
  /// all of them (6 s).
  const std::vector<PointId>& active() const { return active_; }

  // A stamp this far beyond the watermark needs kJumpVotes consecutive confirmations (a real
  // pause in the traffic); alone it is an outlier and does not move the watermark.
  static constexpr TimeNs kMaxJump = 600 * kNsPerSec;
  static constexpr uint32_t kJumpVotes = 4;

 private:
  std::vector<PointState> points_;
  std::unordered_map<std::string, PointId> by_name_;
  DurationNs progress_ = 0;
  size_t awaited_ = 0;  ///< points awaited()
  std::vector<PointId> active_;
  std::vector<uint32_t> active_at_;  ///< by point: its place in active_ (while it is in it)
  static constexpr size_t kChangeLog = 4096;  // a power of two
  std::vector<PointId> change_log_ = std::vector<PointId>(kChangeLog);  ///< a ring (changes_since)
  uint64_t changes_ = 0;
  /// A point is logged once between two reads of the log (by any reader): each reader finds it
  /// after its own last read, which is all it asks (re-key it from what it is now). A horizon
  /// moves with every packet; the log is read about once a millisecond.
  mutable uint64_t read_epoch_ = 1;
  std::vector<uint64_t> logged_in_;  ///< by point: the read_epoch_ it was last logged in
  void note_change(PointId id) {
    if (logged_in_[id] == read_epoch_) return;
    logged_in_[id] = read_epoch_;
    change_log_[changes_++ & (kChangeLog - 1)] = id;
  }
  void make_active(PointId id) {
    note_change(id);
    if (id >= active_at_.size()) active_at_.resize(size_t(id) + 1);
    active_at_[id] = uint32_t(active_.size());
    active_.push_back(id);
  }
  void make_inactive(PointId id) {
    note_change(id);
    const uint32_t at = active_at_[id];
    active_[at] = active_.back();
    active_at_[active_[at]] = at;
    active_.pop_back();
  }
};

}  // namespace rdmatel
