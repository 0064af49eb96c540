// SPDX-License-Identifier: GPL-2.0-or-later
// The order of active points by how far they have come (engine/src/core/point_progress.h, over
// engine/src/util/point_heaps.h), which paths and io_quality ask after every step instead of
// scanning every point (the least elapsed outside a component too): over long random runs of points declared, carrying packets, advancing,
// going quiet and coming back, and clocks related and re-estimated, every answer equals the scan
// it replaced, worked out here point by point.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "engine/src/core/clock.h"
#include "engine/src/core/point_progress.h"
#include "engine/src/core/points.h"
#include "engine/src/util/point_heaps.h"

namespace rdmatel {
namespace {

TEST(PointHeaps, LeastKeyOfEachGroupAsPointsMoveBetweenThem) {
  std::mt19937_64 rng(7);
  PointHeaps heaps;
  std::map<PointId, std::pair<uint32_t, int64_t>> truth;  // point -> (group, key)
  for (int step = 0; step < 20000; ++step) {
    const PointId p = PointId(rng() % 200);
    if (rng() % 4 == 0) {
      heaps.erase(p);
      truth.erase(p);
    } else {
      const uint32_t g = uint32_t(rng() % 5);
      const int64_t key = int64_t(rng() % 1000) - 500;
      heaps.set(p, g, key);
      truth[p] = {g, key};
    }
    for (uint32_t g = 0; g < 6; ++g) {
      std::vector<int64_t> keys;
      for (const auto& [point, gk] : truth)
        if (gk.first == g) keys.push_back(gk.second);
      ASSERT_EQ(heaps.size(g), keys.size()) << "step " << step << " group " << g;
      if (!keys.empty()) {
        ASSERT_EQ(heaps.top_key(g), *std::min_element(keys.begin(), keys.end()));
      }
    }
    ASSERT_EQ(heaps.contains(p), truth.count(p) == 1);
  }
  heaps.clear();
  for (uint32_t g = 0; g < 5; ++g) EXPECT_EQ(heaps.size(g), 0u);
  heaps.set(3, 1, 10);  // usable again after clear
  EXPECT_EQ(heaps.top_key(1), 10);
}

// What io_quality and paths worked out by scanning PointTable::active() at every step.
struct Scan {
  std::map<PointId, int64_t> least;  ///< by root
  int64_t least_all = 0;
  std::set<PointId> active_roots, new_roots, new_points;
};

Scan scan(const PointTable& pts, const ClockRelations& clock, DurationNs window) {
  Scan s;
  bool any = false;
  for (const PointId q : pts.active()) {
    const PointId root = clock.root(q);
    const int64_t key = pts[q].horizon + clock.to_root(q);
    auto [it, inserted] = s.least.try_emplace(root, key);
    if (!inserted) it->second = std::min(it->second, key);
    s.least_all = any ? std::min(s.least_all, key) : key;
    any = true;
    s.active_roots.insert(root);
    if (pts.is_new(q, window)) {
      s.new_roots.insert(root);
      s.new_points.insert(q);
    }
  }
  return s;
}

void run_random_capture(uint64_t seed, size_t points, bool burst_of_changes) {
  constexpr DurationNs kWindow = 250 * kNsPerMs;
  std::mt19937_64 rng(seed);
  PointTable pts;
  ClockRelations clock;
  std::vector<DurationNs> skew(points);  // each point's clock, ahead of a true time
  for (size_t i = 0; i < points; ++i) {
    pts.declare("p" + std::to_string(i), uint32_t(i), 0);
    skew[i] = DurationNs(rng() % 2000) * kNsPerMs;
  }
  PointProgress by_component(true), over_all(false);
  TimeNs now = 1'000'000 * kNsPerSec;
  for (int step = 0; step < 6000; ++step) {
    now += DurationNs(rng() % 3) * kNsPerMs;
    const PointId q = PointId(rng() % points);
    const uint64_t what = rng() % 100;
    if (what < 70) {  // a packet, then its horizon moves
      pts.observe(q, now + skew[q]);
      pts.advance_horizon(q, kWindow);
    } else if (what < 80) {  // a packet seen at two points relates (and re-estimates) their clocks
      const PointId r = PointId(rng() % points);
      const DurationNs delay = DurationNs(rng() % 5000);
      clock.add_sample(q, now + skew[q], r, now + skew[r] + delay, 0, 1);
      clock.add_sample(r, now + skew[r], q, now + skew[q] + delay, 1, 1);
    } else if (what < 85) {
      if (pts[q].seen) pts.set_quiet(q);
    } else if (burst_of_changes && what < 86) {  // more changes than the log keeps
      for (int i = 0; i < 5000; ++i) {
        const PointId r = PointId(rng() % points);
        pts.observe(r, now + skew[r]);
        pts.advance_horizon(r, kWindow);
      }
    }
    if (pts.any_awaited()) continue;  // (io_quality asks nothing then)
    auto key = [&](PointId p) { return pts[p].horizon + clock.to_root(p); };
    auto elapsed = [&](PointId p) { return pts[p].horizon - pts[p].first; };
    by_component.sync(pts, clock, kWindow, key);
    over_all.sync(pts, clock, kWindow, key, elapsed);
    const Scan s = scan(pts, clock, kWindow);
    ASSERT_EQ(over_all.any_active(0), !s.least.empty()) << "step " << step;
    if (!s.least.empty()) {
      ASSERT_EQ(over_all.least(0), s.least_all) << "step " << step;
    }
    for (PointId p = 0; p < points; ++p) {
      const PointId root = clock.root(p);
      const auto it = s.least.find(root);
      ASSERT_EQ(by_component.any_active(root), it != s.least.end()) << "step " << step << " point " << p;
      if (it != s.least.end()) {
        ASSERT_EQ(by_component.least(root), it->second) << "step " << step;
      }
      const bool active_outside = s.active_roots.size() > s.active_roots.count(root);
      const bool new_outside = s.new_roots.size() > s.new_roots.count(root);
      ASSERT_EQ(by_component.any_active_outside(root), active_outside) << "step " << step << " point " << p;
      ASSERT_EQ(by_component.any_new_outside(root), new_outside) << "step " << step << " point " << p;
      ASSERT_EQ(over_all.any_active_outside(root), active_outside);
    }
    // The least elapsed outside a component, of every active point or of the new ones.
    for (const PointId root : s.active_roots) {
      for (const bool new_only : {false, true}) {
        std::optional<int64_t> least;
        for (const PointId p : pts.active())
          if (clock.root(p) != root && (!new_only || s.new_points.count(p)))
            least = std::min(least.value_or(INT64_MAX), elapsed(p));
        const PointId found = over_all.least_second_outside(root, new_only);
        ASSERT_EQ(found != kNoPoint, least.has_value()) << "step " << step << " root " << root;
        if (least) {
          ASSERT_EQ(elapsed(found), *least) << "step " << step << " root " << root;
          ASSERT_NE(clock.root(found), root);
        }
      }
    }
  }
}

TEST(PointProgress, AnswersAsTheScanOfEveryActivePoint) {
  for (uint64_t seed = 1; seed <= 6; ++seed) run_random_capture(seed, 12, false);
}

TEST(PointProgress, ManyPointsAndMoreChangesThanTheLogKeeps) {
  run_random_capture(42, 300, true);
}

}  // namespace
}  // namespace rdmatel
