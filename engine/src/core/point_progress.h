// SPDX-License-Identifier: GPL-2.0-or-later
// The active observation points ordered by how far each has come, for the components that settle
// a result once every related point has passed its time (paths, io_quality). They asked this of
// every active point after every step: with 64 busy points that doubled the time of `analyze`,
// with 4,000 it was 83 % of it. Kept up to date instead from what changed since the last step
// (PointTable's change log, ClockRelations' change log): a point re-keyed in its heap.
//
// Also counted per clock component (the points whose clocks are related): its active points and
// those still new (PointTable::is_new), which say whether some point not related to a given one
// may still hold copies of its packets.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>
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
  /// second(q), where given: a second order of the same points (least_second_outside).
  template <typename Key, typename Second = std::nullptr_t>
  void sync(const PointTable& pts, const ClockRelations& clock, DurationNs window, Key&& key,
            Second&& second = nullptr) {
    // Each point once, however often it changed since (a horizon moves with every packet, a
    // component may ask once a millisecond).
    ++sync_;
    moved_.clear();
    all_moved_ = false;
    auto update = [&](PointId q) {
      if (q >= entries_.size()) entries_.resize(size_t(q) + 1);
      if (entries_[q].synced == sync_) return;
      entries_[q].synced = sync_;
      if (this->update(q, pts, clock, window, key)) {
        if constexpr (!std::is_same_v<std::decay_t<Second>, std::nullptr_t>) second_.set(q, 0, second(q));
      }
    };
    // The points whose horizon or activity changed, then those whose clock did (a component
    // joined another, an offset in its tree moved); every point when either log overflowed.
    bool every = !pts.changes_since(seen_changes_, update);
    if (!every && clock.version() != clock_version_) every = !clock.changes_since(seen_clock_changes_, update);
    clock_version_ = clock.version();
    if (every) {
      clear();
      ++sync_;
      all_moved_ = true;
      pts.skip_changes(seen_changes_);
      clock.skip_changes(seen_clock_changes_);
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
  /// What the last sync changed, for a caller that keeps things of its own by component and
  /// looks again only where something moved: every key (all_moved), or the groups (component
  /// roots, by_component) one of whose points was re-keyed; and counts_version(), which moves
  /// whenever any_active*() or any_new_outside() may answer differently.
  bool all_moved() const { return all_moved_; }
  const std::vector<uint32_t>& moved_groups() const { return moved_; }
  uint64_t counts_version() const { return counts_version_; }
  /// The active point of least second key outside `root`'s component (and new, with new_only),
  /// kNoPoint when there is none.
  PointId least_second_outside(PointId root, bool new_only) {
    return second_.least_where(
        0, [&](PointId q) { return entries_[q].root != root && (!new_only || entries_[q].is_new); }, scratch_);
  }

 private:
  struct PointEntry {
    PointId root = kNoPoint;  ///< kNoPoint: not active
    bool is_new = false;
    bool touched = false;  ///< in touched_
    uint64_t synced = 0;   ///< the sync_ that last re-keyed it
  };

  /// Whether q is active (and re-keyed).
  template <typename Key>
  bool update(PointId q, const PointTable& pts, const ClockRelations& clock, DurationNs window, Key& key) {
    const PointState& ps = pts[q];
    if (!ps.seen || ps.quiet) {  // not active (PointTable::active)
      remove(q);
      return false;
    }
    PointEntry& e = entries_[q];
    const PointId root = clock.root(q);
    if (e.root != root) {
      remove(q);
      e.root = root;
      if (add(active_in_, root) == 1) ++roots_active_;
      ++counts_version_;
    }
    const bool is_new = pts.is_new(q, window);
    if (is_new != e.is_new) {
      e.is_new = is_new;
      if (is_new) {
        if (add(new_in_, root) == 1) ++roots_new_;
      } else {
        drop_new(e);
      }
      ++counts_version_;
    }
    heaps_.set(q, group(root), key(q));
    note_moved(group(root));
    return true;
  }
  void note_moved(uint32_t g) {
    if (g >= moved_at_.size()) moved_at_.resize(size_t(g) + 1, 0);
    if (moved_at_[g] == sync_) return;
    moved_at_[g] = sync_;
    moved_.push_back(g);
  }
  void remove(PointId q) {
    if (q >= entries_.size()) return;
    PointEntry& e = entries_[q];
    if (e.root == kNoPoint) return;
    if (e.is_new) {
      drop_new(e);
      e.is_new = false;
    }
    if (--active_in_[e.root] == 0) --roots_active_;
    ++counts_version_;
    note_moved(group(e.root));
    e.root = kNoPoint;
    heaps_.erase(q);
    second_.erase(q);
  }
  void drop_new(const PointEntry& e) {
    if (--new_in_[e.root] == 0) --roots_new_;
  }
  void clear() {
    heaps_.clear();
    second_.clear();
    for (PointEntry& e : entries_) e.root = kNoPoint, e.is_new = false;
    active_in_.clear();
    new_in_.clear();
    roots_active_ = roots_new_ = 0;
    ++counts_version_;
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
  PointHeaps second_;  ///< group 0: every active point by the second key (when sync is given one)
  std::vector<uint32_t> scratch_;  ///< least_second_outside's
  std::vector<PointEntry> entries_;  ///< by point
  std::vector<uint32_t> active_in_;  ///< by component root: its active points
  std::vector<uint32_t> new_in_;     ///< by component root: its active points still new
  uint32_t roots_active_ = 0;        ///< components with an active point
  uint32_t roots_new_ = 0;           ///< components with a new active point
  std::vector<PointId> touched_;
  uint64_t clock_version_ = UINT64_MAX;
  uint64_t seen_changes_ = 0;
  uint64_t seen_clock_changes_ = 0;
  uint64_t sync_ = 0;  ///< syncs so far
  bool all_moved_ = false;
  std::vector<uint32_t> moved_;     ///< groups re-keyed by the last sync (unless all_moved_)
  std::vector<uint64_t> moved_at_;  ///< by group: the sync_ that put it in moved_
  uint64_t counts_version_ = 0;
};

}  // namespace rdmatel
