// SPDX-License-Identifier: GPL-2.0-or-later
// The matching of one packet's sightings into copies and paths (engine/metrics/paths/
// copy_matcher.*): expected values worked out by hand from the sightings.
#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <vector>

#include "engine/metrics/paths/copy_matcher.h"
#include "rdmatel/notes.h"

namespace rdmatel::paths {
namespace {

using ExpectedDelay = std::function<std::optional<DurationNs>(PointId from, PointId to)>;

// One matcher for every test, as the engine keeps one for every identity: each test also checks
// that the buffers an earlier call left behind change nothing.
std::vector<Copy> match_copies(std::span<const Sighting> sightings, std::span<const PointId> order,
                               const ExpectedDelay& expected = {}) {
  static CopyMatcher matcher;
  const std::span<const Copy> copies =
      matcher.match(sightings, order, expected ? ExpectedDelayRef(expected) : ExpectedDelayRef());
  return {copies.begin(), copies.end()};
}

// path.hop's detail carries the raw flag and the previous point's frame as a distance: frames
// before and after the note's (file order in blocks puts a later point's copy first), none, and
// one too far away to say.
TEST(PathHopNote, DetailCarriesThePreviousFrameAndTheRawFlag) {
  struct Case {
    uint64_t frame, previous;
    bool raw;
    uint64_t decoded;
  };
  const uint64_t far = uint64_t(1) << 30;
  const Case cases[] = {
      {1000, 990, false, 990},     {1000, 990, true, 990},       {5, 4000000, true, 4000000},
      {1000, 0, true, 0},          {far + 10, 9, false, 0},      {10, far + 10, true, 0},
      {far + 10, 11, false, 11},   {7, far + 6, false, far + 6}, {UINT32_MAX, UINT32_MAX - 1, true, UINT32_MAX - 1},
  };
  for (const Case& c : cases) {
    const uint32_t d = path_hop_detail(c.raw, c.frame, c.previous);
    EXPECT_EQ(path_hop_raw(d), c.raw) << c.frame << " " << c.previous;
    EXPECT_EQ(path_hop_previous_frame(c.frame, d), c.decoded) << c.frame << " " << c.previous;
  }
}

constexpr PointId A = 0, B = 1, C = 2;

Sighting at(PointId p, TimeNs ts, uint64_t frame, TimeNs offset = 0) { return Sighting{p, ts, ts - offset, frame}; }

TEST(LearnOrder, OrdersPointsByReferenceStamp) {
  std::vector<PointId> order;
  // B's clock runs 1 s ahead: its raw stamp is later, its reference stamp (offset removed) too.
  std::vector<Sighting> s = {at(C, 300, 3), at(A, 100, 1), at(B, 1'000'000'200, 2, 1'000'000'000)};
  learn_order(order, s);
  EXPECT_EQ(order, (std::vector<PointId>{A, B, C}));
}

TEST(LearnOrder, KnownPointsKeepTheirPlaceNewOnesGoAfterTheirPredecessor) {
  std::vector<PointId> order = {A, C};
  // This packet says A, B, C: B goes between A and C.
  std::vector<Sighting> s = {at(A, 100, 1), at(B, 150, 2), at(C, 200, 3)};
  learn_order(order, s);
  EXPECT_EQ(order, (std::vector<PointId>{A, B, C}));
  // A packet that claims C before A (a clock glitch) changes nothing.
  std::vector<Sighting> glitch = {at(C, 50, 4), at(A, 100, 5)};
  learn_order(order, glitch);
  EXPECT_EQ(order, (std::vector<PointId>{A, B, C}));
  // A new point seen only before a known one goes just before it.
  std::vector<PointId> o2 = {B, C};
  std::vector<Sighting> s2 = {at(A, 10, 6), at(B, 20, 7)};
  learn_order(o2, s2);
  EXPECT_EQ(o2, (std::vector<PointId>{A, B, C}));
}

TEST(PathVotes, TheMajorityOrdersPointsOneJitteredPacketWouldSwap) {
  // Two ports of one switch 300 ns apart (0 then 1), then the spine (2); stamps jitter by up to
  // 400 ns, so one packet in the flow's first five shows port 1 before port 0.
  PathVotes v;
  const TimeNs gaps[][2] = {{300, 5000}, {250, 5100}, {-80, 4900}, {420, 5050}, {310, 4980}};
  uint64_t f = 1;
  for (const auto& g : gaps) {
    const TimeNs t = 1000000 * TimeNs(f);
    const Sighting s[] = {at(0, t, f), at(1, t + g[0], f + 1), at(2, t + g[1], f + 2)};
    EXPECT_TRUE(v.add(s));
    f += 3;
  }
  const Sighting alone[] = {at(2, 99, 99)};
  EXPECT_FALSE(v.add(alone));  // one point: no vote
  EXPECT_EQ(v.voters(), 5u);
  EXPECT_EQ(v.order(), (std::vector<PointId>{0, 1, 2}));
  // The misleading packet alone would have put port 1 first.
  std::vector<PointId> one;
  const Sighting third[] = {at(0, 0, 1), at(1, -80, 2), at(2, 4900, 3)};
  learn_order(one, third);
  EXPECT_EQ(one, (std::vector<PointId>{1, 0, 2}));
}

TEST(PathVotes, PairsKnownFromBothWaysOverruleTheVotes) {
  // Every packet's reference stamps put port 1 before port 0 (an offset estimate 1 µs off for
  // ports 300 ns apart); the flow's samples both ways say 0 comes first: that wins, and the
  // pairs it does not know keep their votes.
  PathVotes v;
  for (uint64_t f = 1; f < 20; f += 3) {
    const TimeNs t = 1000000 * TimeNs(f);
    const Sighting s[] = {at(0, t, f), at(1, t - 700, f + 1), at(2, t + 5000, f + 2)};
    EXPECT_TRUE(v.add(s));
  }
  EXPECT_EQ(v.order(), (std::vector<PointId>{1, 0, 2}));
  v.settle_pairs([](PointId a, PointId b) -> std::optional<bool> {
    if (a == 0 && b == 1) return true;
    if (a == 1 && b == 0) return false;
    return std::nullopt;
  });
  EXPECT_EQ(v.order(), (std::vector<PointId>{0, 1, 2}));
}

TEST(MatchCopies, OneCopyAlongThePath) {
  std::vector<PointId> order = {A, B, C};
  std::vector<Sighting> s = {at(B, 150, 2), at(C, 190, 3), at(A, 100, 1)};
  auto copies = match_copies(s, order);
  ASSERT_EQ(copies.size(), 1u);
  ASSERT_EQ(copies[0].size(), 3u);
  EXPECT_EQ(copies[0][0].frame, 1u);
  EXPECT_EQ(copies[0][1].frame, 2u);
  EXPECT_EQ(copies[0][2].frame, 3u);
}

TEST(MatchCopies, ARetransmissionIsACopyOfItsOwn) {
  // The original passes A at 100 and is lost before B; the resend passes A at 5000 and B at
  // 5040. B's sighting belongs to the resend (the nearest earlier copy), the original stops at A.
  std::vector<PointId> order = {A, B};
  std::vector<Sighting> s = {at(A, 100, 1), at(A, 5000, 7), at(B, 5040, 8)};
  auto copies = match_copies(s, order);
  ASSERT_EQ(copies.size(), 2u);
  ASSERT_EQ(copies[0].size(), 1u);
  EXPECT_EQ(copies[0][0].frame, 1u);
  ASSERT_EQ(copies[1].size(), 2u);
  EXPECT_EQ(copies[1][0].frame, 7u);
  EXPECT_EQ(copies[1][1].frame, 8u);
}

TEST(MatchCopies, BothCopiesDeliveredMatchInOrder) {
  std::vector<PointId> order = {A, B};
  std::vector<Sighting> s = {at(A, 100, 1), at(B, 140, 2), at(A, 5000, 3), at(B, 5030, 4)};
  auto copies = match_copies(s, order);
  ASSERT_EQ(copies.size(), 2u);
  EXPECT_EQ(copies[0][1].frame, 2u);
  EXPECT_EQ(copies[1][1].frame, 4u);
}

TEST(MatchCopies, ASightingBeforeEveryCopyStartsItsOwn) {
  // The capture at A began between the original and the resend: A saw only the resend (5000),
  // B both (the original at 40, the resend at 5040). B's original passed A before any copy A
  // saw: a copy of its own, not the resend's.
  std::vector<PointId> order = {A, B};
  std::vector<Sighting> s = {at(A, 5000, 3), at(B, 40, 1), at(B, 5040, 4)};
  auto copies = match_copies(s, order);
  ASSERT_EQ(copies.size(), 2u);
  ASSERT_EQ(copies[0].size(), 2u);
  EXPECT_EQ(copies[0][1].frame, 4u);
  ASSERT_EQ(copies[1].size(), 1u);
  EXPECT_EQ(copies[1][0].frame, 1u);
}

TEST(MatchCopies, SlackCoversAnUncertainOffset) {
  // B's reference stamp is 300 ns early (an estimated offset, uncertain by 500 ns), and A saw the
  // packet twice (a resend at 2000): B's sighting is the copy that passed A at 1000, not a copy
  // of its own (the resend, after it on every clock, was lost after A).
  std::vector<PointId> order = {A, B};
  Sighting b{B, 700, 700, 3, 500};
  std::vector<Sighting> s = {at(A, 1000, 1), at(A, 2000, 2), b};
  auto copies = match_copies(s, order);
  ASSERT_EQ(copies.size(), 2u);
  ASSERT_EQ(copies[0].size(), 2u);
  EXPECT_EQ(copies[0][1].frame, 3u);
  EXPECT_EQ(copies[1].size(), 1u);
  // Without the slack B's sighting passed before either: a copy of its own.
  s[2].slack = 0;
  EXPECT_EQ(match_copies(s, order).size(), 3u);
}

TEST(MatchCopies, CopiesCloserThanTheDelaysVaryPairInStampOrder) {
  // A responder's ACK sent twice, 100 ns apart, both delivered, with delays of 8,000 and 7,950
  // ns on a hop whose average so far is 7,900 ns. By the nearest average, B's first sighting
  // (8,000) would take A's second (100 + 7,900 = 8,000 exactly) and the copies would cross.
  std::vector<PointId> order = {A, B};
  std::vector<Sighting> s = {at(A, 0, 1), at(A, 100, 2), at(B, 8'000, 3), at(B, 8'050, 4)};
  ExpectedDelay d = [](PointId, PointId) -> std::optional<DurationNs> { return 7'900; };
  auto copies = match_copies(s, order, d);
  ASSERT_EQ(copies.size(), 2u);
  ASSERT_EQ(copies[0].size(), 2u);
  ASSERT_EQ(copies[1].size(), 2u);
  EXPECT_EQ(copies[0][0].frame, 1u);
  EXPECT_EQ(copies[0][1].frame, 3u);
  EXPECT_EQ(copies[1][0].frame, 2u);
  EXPECT_EQ(copies[1][1].frame, 4u);
}

TEST(MatchCopies, OneCopyStampedEarlierAtTheNextPortIsStillOneCopy) {
  // Two ports of one switch 300 ns apart, stamps within +-250 ns: the copy at B stamped 18 ns
  // before A's, before any delay of the hop is known. One sighting at each: one copy, not a
  // copy lost after A and another first seen at B.
  std::vector<PointId> order = {A, B};
  std::vector<Sighting> s = {at(A, 1'000, 1), at(B, 982, 2)};
  auto copies = match_copies(s, order);
  ASSERT_EQ(copies.size(), 1u);
  ASSERT_EQ(copies[0].size(), 2u);
  EXPECT_EQ(copies[0][1].frame, 2u);
}

TEST(PairSlack, TwoPortsOfALeafRelateThroughEachOtherNotThroughTheReference) {
  // A the reference; C reached through B: B 6,500 ns uncertain against A, C 113 ns against B.
  const PointId C = 2;
  std::vector<Sighting> s = {Sighting{A, 0, 0, 1, 0, kNoPoint}, Sighting{B, 0, 0, 2, 6'500, A},
                             Sighting{C, 0, 0, 3, 6'613, B}};
  EXPECT_EQ(pair_slack(s, s[1], s[2]), 113);
  EXPECT_EQ(pair_slack(s, s[2], s[1]), 113);
  EXPECT_EQ(pair_slack(s, s[0], s[2]), 6'613);
  // Unrelated points (no chain): each as uncertain as it is.
  std::vector<Sighting> apart = {Sighting{B, 0, 0, 2, 500, kNoPoint}, Sighting{C, 0, 0, 3, 700, kNoPoint}};
  EXPECT_EQ(pair_slack(apart, apart[0], apart[1]), 1'200);
}

TEST(MatchCopies, TheHopsDelayMatchesCopiesWhereTheClocksAreApart) {
  // B's clock runs 30 us behind A's and no offset is known: B's stamps come before A's. With the
  // hop's delay so far, -25 us on these clocks (5 us), B's sighting at 95 us is the resend's (A
  // at 120 us), not the original's (A at 100 us, lost before B).
  std::vector<PointId> order = {A, B};
  std::vector<Sighting> s = {at(A, 100'000, 1), at(A, 120'000, 2), at(B, 95'000, 3)};
  ExpectedDelay d = [](PointId, PointId) -> std::optional<DurationNs> { return -25'000; };
  auto copies = match_copies(s, order, d);
  ASSERT_EQ(copies.size(), 2u);
  ASSERT_EQ(copies[0].size(), 1u);
  EXPECT_EQ(copies[0][0].frame, 1u);
  ASSERT_EQ(copies[1].size(), 2u);
  EXPECT_EQ(copies[1][0].frame, 2u);
  EXPECT_EQ(copies[1][1].frame, 3u);
  // Without the delay the stamps say B saw it before A did: a copy of its own.
  EXPECT_EQ(match_copies(s, order).size(), 3u);
}

TEST(MatchCopies, ABurstOfCopiesKeepsItsOrderOverTheLink) {
  // A NAK repeated five times 100 ns apart passes A, then B with delays 1300 down to 990 ns (the
  // hop's average so far 1000 ns); a sixth copy, 5 us later, is lost before B. Matched one
  // sighting at a time, each B sighting took the copy nearest 1000 ns and crossed them (delays
  // 1000, 950, 1160, 1270, 1390 ns); no copy overtakes another on the link, so each pairs with
  // its own (1300, 1250, 1160, 1070, 990 ns).
  std::vector<PointId> order = {A, B};
  std::vector<Sighting> s;
  const TimeNs a[] = {0, 100, 200, 300, 400, 5000};
  const TimeNs b[] = {1300, 1350, 1360, 1370, 1390};
  for (uint64_t i = 0; i < 6; ++i) s.push_back(at(A, a[i], 1 + i));
  for (uint64_t i = 0; i < 5; ++i) s.push_back(at(B, b[i], 11 + i));
  ExpectedDelay d = [](PointId, PointId) -> std::optional<DurationNs> { return 1000; };
  auto copies = match_copies(s, order, d);
  ASSERT_EQ(copies.size(), 6u);
  for (const Copy& c : copies) {
    if (c[0].frame == 6) {
      EXPECT_EQ(c.size(), 1u);  // the lost one
      continue;
    }
    ASSERT_EQ(c.size(), 2u);
    EXPECT_EQ(c[1].frame, c[0].frame + 10) << "copy of A frame " << c[0].frame;
  }
}

TEST(MatchCopies, TheLostCopyOfABurstIsTheOneThatLeavesNoDelayFarOff) {
  // rdmatel-synth --scenario nvme-2point --ios 133 --points 4 --clock-offset leafB-stor=9945
  // --loss 0.03 --vlan 1 --ipv6 --snaplen 256 --seed 1367 (probe_combos): four identical ACKs
  // (IPv6: no IP ID tells them apart) pass a leaf's uplink A within 2 us, and the second is lost
  // before the spine B. Stamps (ns after 1795960800994834000) and the hop's average over the 123
  // copies before them (2484 ns) from the truth. The right pairs' delays are 2170, 2005 and
  // 1947 ns; taking the third copy for the lost one gives 2170, 3259 and 2560 ns, nearer the
  // average in sum (1165 against 1330 ns off) but with one delay 775 ns off.
  std::vector<PointId> order = {A, B};
  std::vector<Sighting> s;
  const TimeNs a[] = {989, 1152, 2406, 3019};
  const TimeNs b[] = {3159, 4411, 4966};
  for (uint64_t i = 0; i < 4; ++i) s.push_back(at(A, a[i], 1 + i));
  for (uint64_t i = 0; i < 3; ++i) s.push_back(at(B, b[i], 11 + i));
  ExpectedDelay d = [](PointId, PointId) -> std::optional<DurationNs> { return 2484; };
  auto copies = match_copies(s, order, d);
  ASSERT_EQ(copies.size(), 4u);
  std::map<uint64_t, uint64_t> next;  // A frame -> B frame (0: lost)
  for (const Copy& c : copies) next[c[0].frame] = c.size() > 1 ? c[1].frame : 0;
  EXPECT_EQ(next, (std::map<uint64_t, uint64_t>{{1, 11}, {2, 0}, {3, 12}, {4, 13}}));
}

TEST(MatchCopies, APacketFirstSeenLaterStartsItsOwnCopy) {
  // The capture at A started after this copy passed it: only B and C saw it.
  std::vector<PointId> order = {A, B, C};
  std::vector<Sighting> s = {at(B, 150, 2), at(C, 170, 3)};
  auto copies = match_copies(s, order);
  ASSERT_EQ(copies.size(), 1u);
  ASSERT_EQ(copies[0].size(), 2u);
  EXPECT_EQ(copies[0][0].point, B);
  EXPECT_EQ(copies[0][1].point, C);
}

}  // namespace
}  // namespace rdmatel::paths
