// SPDX-License-Identifier: GPL-2.0-or-later
// Observation points: name resolution, configured roles, watermarks robust to outlier stamps.
#include <gtest/gtest.h>

#include "engine/core/points.h"

namespace rdmatel {
namespace {

constexpr TimeNs kT = 1'700'000'000'000'000'000;
constexpr TimeNs kHour = 3600 * kNsPerSec;

TEST(Points, SameNameIsOnePointAndRolesApplyByNameOrId) {
  EngineConfig cfg;
  cfg.roles = {{"leafB", PointRole::kStorage}, {"2", PointRole::kFabric}};
  PointRegistry r(cfg);
  PointId a = r.resolve(0, "leafA");
  PointId b = r.resolve(1, "leafB");
  EXPECT_EQ(r.resolve(5, "leafA"), a);  // a second pcapng section, same port
  PointId c = r.resolve(2, "");
  EXPECT_EQ(r[c].name, "if2");
  EXPECT_EQ(r.role(b), PointRole::kStorage);
  EXPECT_EQ(r.role(c), PointRole::kFabric);
  EXPECT_EQ(r.role(a), PointRole::kUnknown);
}

TEST(Points, ForwardJumpNeedsConfirmation) {
  EngineConfig cfg;
  PointRegistry r(cfg);
  PointId p = r.resolve(0, "p");
  r.observe(p, kT);
  r.observe(p, kT + kHour);  // one stamp an hour ahead: not trusted yet
  EXPECT_EQ(r[p].watermark, kT);
  r.observe(p, kT + 10);
  EXPECT_EQ(r[p].watermark, kT + 10);
  for (int i = 1; i <= int(PointRegistry::kJumpVotes); ++i) r.observe(p, kT + kHour + i);  // a real pause
  EXPECT_EQ(r[p].watermark, kT + kHour + int(PointRegistry::kJumpVotes));
}

TEST(Points, OutlierFirstStampIsDropped) {
  EngineConfig cfg;
  PointRegistry r(cfg);
  PointId p = r.resolve(0, "p");
  PointId q = r.resolve(1, "q");
  r.observe(p, kT + 365 * 24 * kHour);  // the first packet carries a corrupt stamp
  EXPECT_EQ(r.newest(), kT + 365 * 24 * kHour);
  r.observe(p, kT);
  r.observe(p, kT + 5);
  EXPECT_EQ(r[p].watermark, kT + 5);
  r.observe(q, kT + 3);
  EXPECT_EQ(r.newest(), kT + 5);
  EXPECT_FALSE(r.all_points_past(kT + 4));
  r.observe(q, kT + 7);
  EXPECT_TRUE(r.all_points_past(kT + 4));
}

TEST(Points, SmallBackwardsStampsKeepTheWatermark) {
  EngineConfig cfg;
  PointRegistry r(cfg);
  PointId p = r.resolve(0, "p");
  r.observe(p, kT + 1000);
  r.observe(p, kT + 400);  // stamped when queued: goes back a little
  EXPECT_EQ(r[p].watermark, kT + 1000);
}

}  // namespace
}  // namespace rdmatel
