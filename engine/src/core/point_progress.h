// SPDX-License-Identifier: GPL-2.0-or-later
// The active observation points ordered by how far each has come, for the components that settle
// a result once every related point has passed its time (paths, io_quality). They asked this of
// every active point after every step: with 64 busy points that doubled the time of `analyze`,
// with 4,000 it was 83 % of it. Kept up to date instead from what changed since the last step
// (PointTable's change log, ClockRelations' version): a point re-keyed in its heap.
//
// Also counted per clock component (the points whose clocks are related): its active points and
// those still new (PointTable::is_new), which say whether some point not related to a given one
// may still hold copies of its packets.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/src/core/clock.h"
#include "engine/src/core/points.h"
#include "engine/src/util/point_heaps.h"

namespace rdmatel {

class PointProgress {
 public:
  /// `by_component`: least() per clock component; else over every active point.
  explicit PointProgress(bool by_component) : by_component_(by_component) {}

  /// Brings the order up to date. key(q): how far active point q has come, on a clock common to
  /// its component (by_component) or to every point. It may change only with q's horizon or
  /// activity, the clocks' relations, or where the caller says so (touch).
  template <typename Key>
  void sync(const PointTable& pts, const ClockRelations& clock, DurationNs window, Key&& key) {
    // Each point once, however often it changed since (a horizon moves with every packet, a
    // component may ask once a millisecond).
    ++sync_;
    auto update = [&](PointId q) {
      if (q >= entries_.size()) entries_.resize(size_t(q) + 1);
      if (entries_[q].synced == sync_) return;
      entries_[q].synced = sync_;
      this->update(q, pts, clock, window, key);
    };
    if (clock.version() != clock_version_ || !pts.changes_since(seen_changes_, update)) {
      // Every key (the clocks' offsets moved, or points joined a component) or too many changes
      // since the last look to know which.
      clear();
      ++sync_;
      clock_version_ = clock.version();
      pts.skip_changes(seen_changes_);
      for (const PointId q : pts.active()) update(q);
    }
    for (const PointId q : touched_) {
      entries_[q].touched = false;
      update(q);
    }
    touched_.clear();
  }
  /// Point q's key changed for a reason of the caller's own: re-keyed at the next sync.
  void touch(PointId q) {
    if (q >= entries_.size()) entries_.resize(size_t(q) + 1);
    if (entries_[q].touched) return;
    entries_[q].touched = true;
    touched_.push_back(q);
  }

  /// The least key of the active points of `root`'s component (by_component), or of them all.
  bool any_active(PointId root) const { return heaps_.size(group(root)) > 0; }
  int64_t least(PointId root) const { return heaps_.top_key(group(root)); }
  /// Whether a component other than `root`'s has an active point, or an active new one.
  bool any_active_outside(PointId root) const { return roots_active_ > (count(active_in_, root) > 0 ? 1u : 0u); }
  bool any_new_outside(PointId root) const { return roots_new_ > (count(new_in_, root) > 0 ? 1u : 0u); }
  /// The active points that were new when last re-keyed (every point still new is among them).
  const std::vector<PointId>& new_points() const { return new_points_; }

 private:
  struct PointEntry {
    PointId root = kNoPoint;  ///< kNoPoint: not active
    bool is_new = false;
    bool touched = false;  ///< in touched_
    uint32_t new_at = 0;   ///< its place in new_points_ while is_new
    uint64_t synced = 0;   ///< the sync_ that last re-keyed it
  };

  template <typename Key>
  void update(PointId q, const PointTable& pts, const ClockRelations& clock, DurationNs window, Key& key) {
    const PointState& ps = pts[q];
    if (!ps.seen || ps.quiet) {  // not active (PointTable::active)
      remove(q);
      return;
    }
    PointEntry& e = entries_[q];
    const PointId root = clock.root(q);
    if (e.root != root) {
      remove(q);
      e.root = root;
      if (add(active_in_, root) == 1) ++roots_active_;
    }
    const bool is_new = pts.is_new(q, window);
    if (is_new != e.is_new) {
      e.is_new = is_new;
      if (is_new) {
        if (add(new_in_, root) == 1) ++roots_new_;
        e.new_at = uint32_t(new_points_.size());
        new_points_.push_back(q);
      } else {
        drop_new(q, e);
      }
    }
    heaps_.set(q, group(root), key(q));
  }
  void remove(PointId q) {
    if (q >= entries_.size()) return;
    PointEntry& e = entries_[q];
    if (e.root == kNoPoint) return;
    if (e.is_new) {
      drop_new(q, e);
      e.is_new = false;
    }
    if (--active_in_[e.root] == 0) --roots_active_;
    e.root = kNoPoint;
    heaps_.erase(q);
  }
  void drop_new(PointId q, const PointEntry& e) {
    if (--new_in_[e.root] == 0) --roots_new_;
    const PointId last = new_points_.back();
    new_points_[e.new_at] = last;
    entries_[last].new_at = e.new_at;
    new_points_.pop_back();
    (void)q;
  }
  void clear() {
    heaps_.clear();
    for (PointEntry& e : entries_) e.root = kNoPoint, e.is_new = false;
    active_in_.clear();
    new_in_.clear();
    new_points_.clear();
    roots_active_ = roots_new_ = 0;
  }
  uint32_t group(PointId root) const { return by_component_ ? root : 0; }
  static uint32_t add(std::vector<uint32_t>& counts, PointId root) {
    if (root >= counts.size()) counts.resize(size_t(root) + 1, 0);
    return ++counts[root];
  }
  static uint32_t count(const std::vector<uint32_t>& counts, PointId root) {
    return root < counts.size() ? counts[root] : 0;
  }

  bool by_component_;
  PointHeaps heaps_;
  std::vector<PointEntry> entries_;  ///< by point
  std::vector<uint32_t> active_in_;  ///< by component root: its active points
  std::vector<uint32_t> new_in_;     ///< by component root: its active points still new
  uint32_t roots_active_ = 0;        ///< components with an active point
  uint32_t roots_new_ = 0;           ///< components with a new active point
  std::vector<PointId> new_points_;
  std::vector<PointId> touched_;
  uint64_t clock_version_ = UINT64_MAX;
  uint64_t seen_changes_ = 0;
  uint64_t sync_ = 0;  ///< syncs so far
};

}  // namespace rdmatel
