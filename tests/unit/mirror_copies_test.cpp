// SPDX-License-Identifier: GPL-2.0-or-later
// Mirror copies (engine/src/core/mirror_copies.h) on packets built by hand: which packets are
// the copies is known from how they were made.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "engine/src/core/mirror_copies.h"

namespace rdmatel {
namespace {

constexpr DurationNs kWindow = 5 * kNsPerUs;  // mirror_copy_window's default

uint64_t packet_hash(uint64_t i) {  // distinct, well-spread identities (splitmix64)
  uint64_t z = i + 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

struct Arrival {
  uint64_t hash;
  TimeNs ts;
  bool copy;  // how the capture was made: the later of two recordings of one transmission
  bool ack = false;  // an RC ACKNOWLEDGE
  bool nak = false;  // ... that is a NAK (from the receiver of the data: the reverse IP pair)
  bool given_twice = false;  // at its twin's stamp: the engine drops it before the check (given_twice)
};

constexpr uint64_t kReversePair = 0x5EED;  // the data's reverse IP pair (MirrorCopies::pair_key)

// Feeds every packet to observe (arrival = stamp order here), then hands them on in stamp order
// as the engine does; returns the packets taken for copies, by index.
std::vector<bool> run(MirrorCopies& mc, std::vector<Arrival> packets, std::vector<MirrorCopies::Counts>& flows) {
  std::stable_sort(packets.begin(), packets.end(), [](const Arrival& a, const Arrival& b) { return a.ts < b.ts; });
  auto flow_of = [&](const Arrival& a) { return &flows[a.hash % flows.size()]; };
  for (const Arrival& a : packets) {
    if (a.nak) mc.nak(kReversePair, a.ts);
    mc.observe(flow_of(a), a.hash, a.ts, kWindow, a.ack, nullptr, kNoPoint, a.ack ? 0 : kReversePair);
  }
  std::vector<bool> taken;
  for (const Arrival& a : packets) taken.push_back(!a.given_twice && mc.is_copy(flow_of(a), a.hash, a.ts));
  for (size_t i = 0; i < packets.size(); ++i)
    EXPECT_EQ(taken[i], packets[i].copy) << "packet " << i << " at " << packets[i].ts;
  return taken;
}

// Every packet recorded again `delay(i)` later.
std::vector<Arrival> doubled(int n, DurationNs spacing, DurationNs (*delay)(int)) {
  std::vector<Arrival> out;
  for (int i = 0; i < n; ++i) {
    const TimeNs ts = TimeNs(i) * spacing;
    out.push_back({packet_hash(uint64_t(i)), ts, false});
    out.push_back({packet_hash(uint64_t(i)), ts + delay(i), true});
  }
  return out;
}

TEST(MirrorCopies, CopiesWithinTheWindowKeepIt) {
  MirrorCopies mc;
  std::vector<MirrorCopies::Counts> flows(4);
  run(mc, doubled(3000, 700, [](int i) { return DurationNs(300 + (i * 37) % 2700); }), flows);
  EXPECT_FALSE(mc.widened());
  EXPECT_EQ(mc.window(), kWindow);
}

TEST(MirrorCopies, CopiesFurtherApartWidenThePointsWindow) {
  // Two ports across the fabric, 12-20 us apart (a queue between them), packets 700 ns apart:
  // every copy beyond the 5 us window, and other packets between each and its original.
  MirrorCopies mc;
  std::vector<MirrorCopies::Counts> flows(4);
  run(mc, doubled(3000, 700, [](int i) { return DurationNs(12000 + (i * 7919) % 8000); }), flows);
  EXPECT_TRUE(mc.widened());
  EXPECT_GE(mc.window(), 20 * kNsPerUs);
  EXPECT_LE(mc.window(), MirrorCopies::kMaxWindow);
}

TEST(MirrorCopies, EveryPacketResentInOverlappingWindowsIsNoMirror) {
  // Go-back-N losing nearly every window (no IP ID tells a resend from its original): each packet
  // sent 2 to 6 times as the windows overlap, 30 to 450 us apart. Most packets have an identical
  // twin, as in a mirror, but in groups of every size: nothing is dropped.
  std::vector<Arrival> packets;
  std::mt19937 random(7);
  for (int i = 0; i < 3000; ++i) {
    const int sent = 2 + int(random() % 5);
    for (int k = 0; k < sent; ++k)
      packets.push_back({packet_hash(uint64_t(i)), TimeNs(i) * 700 + k * (30000 + TimeNs(random() % 420000)), false});
  }
  MirrorCopies mc;
  std::vector<MirrorCopies::Counts> flows(4);
  run(mc, packets, flows);
  EXPECT_FALSE(mc.widened());
  EXPECT_EQ(mc.copies(), 2u);
}

TEST(MirrorCopies, GoBackNResendingMostDataAtOneDelayIsNoMirror) {
  // A lossy IPv6 flow (no IP ID): 8 of every 10 data packets resent once, all 85 us after their
  // original (the sender resends at the pace it sent), so nearly every packet is in a group of
  // two, as in a mirror; but the acknowledgments coming back, one per 10 data packets, are not
  // doubled, which a mirror of the ports would do. Nothing is dropped.
  std::vector<Arrival> packets;
  for (int i = 0; i < 3000; ++i) {
    const TimeNs ts = TimeNs(i) * 700;
    packets.push_back({packet_hash(uint64_t(i)), ts, false});
    if (i % 10 < 8) packets.push_back({packet_hash(uint64_t(i)), ts + 85000, false});
    if (i % 10 == 9) packets.push_back({packet_hash(uint64_t(100000 + i)), ts + 350, false, true});
  }
  MirrorCopies mc;
  std::vector<MirrorCopies::Counts> flows(4);
  run(mc, packets, flows);
  EXPECT_FALSE(mc.widened());
}

TEST(MirrorCopies, AcknowledgmentsRecordedTwiceToo) {
  // The mirror of the test above: every packet, data and acknowledgment, recorded again 85 us
  // later. The window widens and every copy is dropped.
  std::vector<Arrival> packets;
  for (int i = 0; i < 3000; ++i) {
    const TimeNs ts = TimeNs(i) * 700;
    const bool ack = i % 10 == 9;
    packets.push_back({packet_hash(uint64_t(i)), ts, false, ack});
    packets.push_back({packet_hash(uint64_t(i)), ts + 85000, true, ack});
  }
  MirrorCopies mc;
  std::vector<MirrorCopies::Counts> flows(4);
  run(mc, packets, flows);
  EXPECT_TRUE(mc.widened());
}

TEST(MirrorCopies, ResendsThatFollowNaksAreNoMirror) {
  // The test above at one point, where no other point shows the repeats, as a go-back-N: every
  // data packet resent 85 us after its original, the duplicate requests re-acknowledged (ACKs
  // doubled too, as in a mirror), and a NAK from the receiver before each round of resends
  // (probe: one point, IPv6, 8 % loss: 5,151 resends dropped as copies). Nothing is dropped.
  std::vector<Arrival> packets;
  for (int i = 0; i < 3000; ++i) {
    const TimeNs ts = TimeNs(i) * 700;
    const bool ack = i % 10 == 9;
    packets.push_back({packet_hash(uint64_t(i)), ts, false, ack});
    packets.push_back({packet_hash(uint64_t(i)), ts + 85000, false, ack});
    if (i % 10 == 0) packets.push_back({packet_hash(uint64_t(100000 + i)), ts + 40000, false, true, true});
  }
  MirrorCopies mc;
  std::vector<MirrorCopies::Counts> flows(4);
  run(mc, packets, flows);
  EXPECT_FALSE(mc.widened());
}

TEST(MirrorCopies, ANakStormResendingEveryPacketWithinTheWindowIsNoMirror) {
  // Every round of 8 data packets (50 ns apart) NAKed by the receiver and resent at once, 450 ns
  // after their originals; one ACK in 50 rounds (helper probe, nakstorm: 470,040 resends dropped
  // as copies, 0 % retransmitted). Half of every flow's packets are twins within the 5 us window,
  // as at a mirror, but the resends follow NAKs: none is dropped once the sample shows it (its
  // first 8 copies of data), and the window stays.
  std::vector<Arrival> packets;
  TimeNs ts = 0;
  for (int round = 0; round < 500; ++round) {
    const TimeNs start = ts;
    for (int k = 0; k < 8; ++k) packets.push_back({packet_hash(uint64_t(round * 8 + k)), ts += 50, false});
    packets.push_back({packet_hash(uint64_t(1'000'000 + round)), ts += 50, false, true, true});  // the NAK
    for (int k = 0; k < 8; ++k) packets.push_back({packet_hash(uint64_t(round * 8 + k)), ts += 50, false});
    if (round % 50 == 0) packets.push_back({packet_hash(uint64_t(2'000'000 + round)), ts += 50, false, true});
    ts = start + 2000;
  }
  MirrorCopies mc;
  std::vector<MirrorCopies::Counts> flows(16);
  const std::vector<bool> taken = run(mc, packets, flows);
  EXPECT_EQ(std::count(taken.begin(), taken.end(), true), 0);
  EXPECT_FALSE(mc.widened());
}

TEST(RepeatsAcrossPoints, AResendRepeatsAtEveryPointAMirrorCopyAtOne) {
  // Point 0 records packets twice; point 1 sees them once (a mirror at 0), point 2 twice (the
  // network resent them: 2 is on their path too).
  RepeatsAcrossPoints mirror, resend;
  for (uint64_t i = 0; i < 400; ++i) {
    const uint64_t h = packet_hash(i);
    if (!RepeatsAcrossPoints::sampled(h)) continue;
    mirror.add(h, 0);
    mirror.add(h, 0);
    mirror.add(h, 1);
    resend.add(h, 0);
    resend.add(h, 0);
    resend.add(h, 2);
    resend.add(h, 2);
  }
  EXPECT_FALSE(mirror.repeated_elsewhere(0));
  EXPECT_TRUE(resend.repeated_elsewhere(0));
  EXPECT_FALSE(RepeatsAcrossPoints{}.repeated_elsewhere(0));  // one point: no evidence
}

TEST(MirrorCopies, ThreePortsGiveTwoCopiesOfEachPacket) {
  // A SPAN session of a host's port, the leaf's uplink and a spine's port into one interface:
  // each packet there three times, 1 and 10-14 us after the first.
  std::vector<Arrival> packets;
  for (int i = 0; i < 3000; ++i) {
    const TimeNs ts = TimeNs(i) * 700;
    packets.push_back({packet_hash(uint64_t(i)), ts, false});
    packets.push_back({packet_hash(uint64_t(i)), ts + 1000, true});
    packets.push_back({packet_hash(uint64_t(i)), ts + 10000 + (i * 7919) % 4000, true});
  }
  MirrorCopies mc;
  std::vector<MirrorCopies::Counts> flows(4);
  run(mc, packets, flows);
  EXPECT_EQ(mc.copies(), 3u);
  EXPECT_TRUE(mc.widened());
}

TEST(MirrorCopies, AResendAfterAPacketAndItsCopyStaysAResend) {
  // A mirror 1 us apart; packet 500 resent 3 us after it (its copy 1 us later again): the resend
  // pairs with its own copy, not with the original's pair.
  std::vector<Arrival> packets = doubled(1000, 10000, [](int) { return DurationNs(1000); });
  const TimeNs resent = 500 * 10000 + 3000;
  packets.push_back({packet_hash(500), resent, false});
  packets.push_back({packet_hash(500), resent + 1000, true});
  MirrorCopies mc;
  std::vector<MirrorCopies::Counts> flows(1);
  run(mc, packets, flows);
  EXPECT_FALSE(mc.widened());
}

TEST(MirrorCopies, AFileGivenTwiceIsNoMirror) {
  // A file merged with itself (mergecap -w x2 f f): every packet twice at its own stamp, the
  // second dropped by the engine as given twice. 1 packet in 20 resent 30 us after its original
  // (twice too). The copies at their twin's stamp were counted as a mirror's: every flow doubled,
  // the sample in groups of two but for the resends, the window widened to 61 us and every resend
  // dropped as a copy. Nothing is.
  std::vector<Arrival> packets;
  for (int i = 0; i < 3000; ++i) {
    const uint64_t h = packet_hash(uint64_t(i));
    for (const TimeNs ts : {TimeNs(i) * 700, TimeNs(i) * 700 + 30000}) {
      packets.push_back({h, ts, false});
      packets.push_back({h, ts, false, false, false, true});
      if (i % 20) break;
    }
  }
  MirrorCopies mc;
  std::vector<MirrorCopies::Counts> flows(4);
  run(mc, packets, flows);
  EXPECT_FALSE(mc.widened());
}

TEST(MirrorCopies, MicrosecondStampsStillShowAMirror) {
  // A mirror 300 ns to 1 us apart in a pcap stamped in microseconds: a copy at its packet's stamp
  // (dropped by the engine as given twice), or a microsecond on (a copy to drop here). The copies
  // at the stamp are evidence of the mirror as well: those a microsecond on are too few alone.
  std::vector<Arrival> packets;
  for (Arrival& a : doubled(3000, 700, [](int i) { return DurationNs(300 + (i * 37) % 700); })) {
    a.ts = a.ts / kNsPerUs * kNsPerUs;
    if (a.copy && !packets.empty() && packets.back().ts == a.ts) {
      a.copy = false;
      a.given_twice = true;
    }
    packets.push_back(a);
  }
  MirrorCopies mc;
  std::vector<MirrorCopies::Counts> flows(4);
  run(mc, packets, flows);
  EXPECT_FALSE(mc.widened());
}

}  // namespace
}  // namespace rdmatel
