// SPDX-License-Identifier: GPL-2.0-or-later
// The congestion component on hand-built packets: ECN marks and CNPs per flow and point, PFC per
// point and priority. Expected values are worked out by hand in the comments.
#include <gtest/gtest.h>

#include "rdmatel/records.h"
#include "tests/support/engine_harness.h"
#include "tests/support/frame_builder.h"

namespace rdmatel {
namespace {

using test::Bytes;
using test::RoceSpec;

constexpr TimeNs kT0 = 1'700'000'000'000'000'000;
constexpr TimeNs kUs = 1000;

Bytes write_only(uint32_t psn, uint8_t ecn) {
  RoceSpec s = test::up(0x0A, psn);
  s.ecn = ecn;
  s.ext = test::reth(0x1000, 0x77, 64);
  s.payload = Bytes(64, 0);
  return build_roce(s);
}

const EcnRecord* find(const test::Collector& out, const uint8_t (&src)[4]) {
  for (const EcnRecord& r : out.congestion)
    if (r.src == IpAddress::from_v4(src)) return &r;
  return nullptr;
}

// Host -> storage: 6 WRITE ONLY packets, ECN 10, 10, 10, 11, 11, 00: 5 ECN-capable, 2 CE -> ratio
// 0.4. Storage -> host: an ACK of the newest PSN (pairs the two directions) and 2 CNPs.
TEST(Congestion, EcnMarksAndCnpsPerFlowAndPoint) {
  test::Feeder f(test::settings_with({}), {"leaf"});
  const uint8_t ecn[6] = {2, 2, 2, 3, 3, 0};
  for (uint32_t i = 0; i < 6; ++i) f.push(0, kT0 + i * kUs, write_only(100 + i, ecn[i]));
  RoceSpec ack = test::down(0x11, 105);
  ack.ext = test::aeth(0, 1);
  f.push(0, kT0 + 10 * kUs, build_roce(ack));
  for (uint32_t i = 0; i < 2; ++i) {
    RoceSpec cnp = test::down(0x81, 0);
    cnp.payload = Bytes(16, 0);
    f.push(0, kT0 + (20 + i) * kUs, build_roce(cnp));
  }
  f.finish();
  ASSERT_EQ(f.out.congestion.size(), 2u);
  const EcnRecord* up = find(f.out, test::kHost);
  ASSERT_NE(up, nullptr);
  EXPECT_EQ(up->packets, 6u);
  EXPECT_EQ(up->ect_packets, 5u);
  EXPECT_EQ(up->ce_packets, 2u);
  ASSERT_TRUE(up->ce_ratio());
  EXPECT_DOUBLE_EQ(*up->ce_ratio(), 2.0 / 6.0);  // SPEC §6: CE-marked / RoCE packets
  EXPECT_EQ(up->first_ce_ns, kT0 + 3 * kUs);
  EXPECT_EQ(up->cnp_packets, 0u);
  ASSERT_TRUE(up->cnps_received);
  EXPECT_EQ(*up->cnps_received, 2u);
  const EcnRecord* down = find(f.out, test::kStorage);
  ASSERT_NE(down, nullptr);
  EXPECT_EQ(down->packets, 3u);
  EXPECT_EQ(down->cnp_packets, 2u);
  EXPECT_EQ(down->ce_packets, 0u);
  EXPECT_FALSE(down->first_ce_ns);
}

// Priority 3 at 100 Gb/s: one quantum = 512 bit times = 5.12 ns.
//   t = 0       pause 0xFFFF -> 65535 x 5.12 = 335,539 ns (paused until 335,539)
//   t = 100 us  pause 0xFFFF -> the timer restarts: paused until 435,539
//   t = 200 us  resume (priorities 3 and 5)  -> the pause lasted 200 us
//   t = 1 ms    pause 1000 -> 5,120 ns, still paused at the end: 5,120 ns
// frames 4, pauses 3, resumes 1, quanta 132,070, pause 2 x 335,539 + 5,120 = 676,198 ns,
// longest 200 us. Priority 5: one resume.
TEST(Congestion, PfcPausesResumesAndLongestPause) {
  for (const char* storm : {"100", "0.15"}) {  // ms: no storm, then a storm (200 us >= 150 us)
    // --link-speed 0: pause times only where the capture records the speed.
    test::Feeder f(test::settings_with({{"pfc_storm", storm}, {"link_speed", "0"}}), {"sw", "nospeed"},
                   {100'000'000'000ull, 0});
    const uint16_t full[8] = {0, 0, 0, 0xFFFF, 0, 0, 0, 0};
    const uint16_t none[8] = {};
    const uint16_t small[8] = {0, 0, 0, 1000, 0, 0, 0, 0};
    f.push(0, kT0, test::pfc_frame(0x08, full));
    f.push(0, kT0 + 100 * kUs, test::pfc_frame(0x08, full));
    f.push(0, kT0 + 200 * kUs, test::pfc_frame(0x28, none));
    f.push(0, kT0 + 1000 * kUs, test::pfc_frame(0x08, small));
    f.push(1, kT0, test::pfc_frame(0x08, full));  // link speed unknown: no pause times
    f.finish();
    ASSERT_EQ(f.out.pfc.size(), 3u) << storm;
    const PfcRecord& p3 = f.out.pfc[0];
    EXPECT_EQ(p3.point, f.id(0));
    EXPECT_EQ(p3.priority, 3);
    EXPECT_EQ(p3.frames, 4u);
    EXPECT_EQ(p3.pause_frames, 3u);
    EXPECT_EQ(p3.resume_frames, 1u);
    EXPECT_EQ(p3.quanta, 132070u);
    EXPECT_EQ(p3.pause_ns, DurationNs(676198));
    EXPECT_EQ(p3.longest_pause_ns, DurationNs(200000));
    EXPECT_EQ(p3.storm, std::string(storm) == "0.15");
    EXPECT_EQ(p3.first_frame, 1u);
    EXPECT_EQ(f.out.warned("PFC storm"), std::string(storm) == "0.15");
    const PfcRecord& p5 = f.out.pfc[1];
    EXPECT_EQ(p5.priority, 5);
    EXPECT_EQ(p5.frames, 1u);
    EXPECT_EQ(p5.resume_frames, 1u);
    EXPECT_EQ(p5.pause_frames, 0u);
    const PfcRecord& unknown = f.out.pfc[2];
    EXPECT_EQ(unknown.point, f.id(1));
    EXPECT_EQ(unknown.quanta, 65535u);
    EXPECT_FALSE(unknown.pause_ns);
    EXPECT_FALSE(unknown.longest_pause_ns);
  }
}

// By default (SPEC §6) a point without a recorded speed is taken as 100 Gb/s: 65535 quanta =
// 335,539 ns (335,539.2 truncated); the default storm threshold is 10 ms.
TEST(Congestion, DefaultLinkSpeedAndStormThreshold) {
  test::Feeder f(test::settings_with({}), {"sw"});
  const uint16_t full[8] = {0xFFFF, 0, 0, 0, 0, 0, 0, 0};
  // Refreshed every 300 us for 12 ms: paused without a break from 0 to 12.3355 ms, a storm.
  for (int i = 0; i <= 40; ++i) f.push(0, kT0 + i * 300 * kUs, test::pfc_frame(0x01, full));
  f.finish();
  ASSERT_EQ(f.out.pfc.size(), 1u);
  EXPECT_EQ(f.out.pfc[0].speed_bps, 100'000'000'000ull);
  EXPECT_EQ(f.out.pfc[0].pause_ns, DurationNs(41 * 335539));
  EXPECT_EQ(f.out.pfc[0].longest_pause_ns, DurationNs(12'000'000 + 335539));
  EXPECT_TRUE(f.out.pfc[0].storm);
}

// --link-speed supplies the speed where the capture has none: 65535 quanta at 25 Gb/s =
// 65535 x 20.48 ns = 1,342,156 ns (1,342,156.8 truncated).
TEST(Congestion, LinkSpeedSettingWhereTheCaptureHasNone) {
  test::Feeder f(test::settings_with({{"link_speed", "25"}}), {"sw"});
  const uint16_t full[8] = {0xFFFF, 0, 0, 0, 0, 0, 0, 0};
  f.push(0, kT0, test::pfc_frame(0x01, full));
  f.finish();
  ASSERT_EQ(f.out.pfc.size(), 1u);
  EXPECT_EQ(f.out.pfc[0].pause_ns, DurationNs(1342156));
  EXPECT_EQ(f.out.pfc[0].speed_bps, 25'000'000'000ull);
}

}  // namespace
}  // namespace rdmatel
