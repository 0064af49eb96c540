// SPDX-License-Identifier: GPL-2.0-or-later
// The engine core's shared facts, each worked out by hand: observation points and their clocks,
// reorder buffers, roles from command-to-completion spans and TTLs, clock relations, settings.
#include <algorithm>
#include <random>
#include <gtest/gtest.h>

#include "engine/src/core/clock.h"
#include "engine/src/core/flows.h"
#include "engine/src/core/points.h"
#include "engine/src/core/reorder_buffer.h"
#include "engine/src/core/roles.h"
#include "rdmatel/settings.h"

namespace rdmatel {
namespace {

constexpr TimeNs kT = 1'700'000'000'000'000'000;
constexpr TimeNs kHour = 3600 * kNsPerSec;

IpAddress ip(uint8_t a, uint8_t b, uint8_t c, uint8_t d) {
  uint8_t x[4] = {a, b, c, d};
  return IpAddress::from_v4(x);
}

// ---- points ----

TEST(Points, SameNameIsOnePoint) {
  PointTable t;
  PointId a = t.declare("leafA", 0, 0);
  PointId b = t.declare("leafB", 1, 0);
  EXPECT_NE(a, b);
  EXPECT_EQ(t.declare("leafA", 5, 100), a);  // a second file or section, same port
  EXPECT_EQ(t[a].speed_bps, 100u);
}

// active(): the points that carried a packet and are not quiet, kept as they change (what
// holds results back is asked of them at every step, not of every point declared).
TEST(Points, ActiveAreThoseThatCarriedPacketsAndAreNotQuiet) {
  PointTable t;
  std::vector<PointId> p;
  for (int i = 0; i < 6; ++i) p.push_back(t.declare("p" + std::to_string(i), uint32_t(i), 0));
  auto active = [&] {
    std::vector<PointId> a = t.active();
    std::sort(a.begin(), a.end());
    return a;
  };
  EXPECT_TRUE(active().empty());
  for (int i : {3, 0, 5, 1}) t.observe(p[i], kT + i);
  t.observe(p[3], kT + 10);  // again: still once
  EXPECT_EQ(active(), (std::vector<PointId>{p[0], p[1], p[3], p[5]}));
  t.set_quiet(p[0]);
  t.set_quiet(p[5]);
  t.set_quiet(p[2]);  // never carried one: was not active
  EXPECT_EQ(active(), (std::vector<PointId>{p[1], p[3]}));
  t.set_quiet(p[0]);  // quiet twice
  EXPECT_EQ(active(), (std::vector<PointId>{p[1], p[3]}));
  t.observe(p[5], kT + 20);  // speaks again
  t.observe(p[2], kT + 20);  // its first packet after it went quiet
  EXPECT_EQ(active(), (std::vector<PointId>{p[1], p[2], p[3], p[5]}));
  for (PointId q : p) t.set_quiet(q);
  EXPECT_TRUE(active().empty());
}

TEST(Points, ForwardJumpNeedsConfirmation) {
  PointTable t;
  PointId p = t.declare("p", 0, 0);
  t.observe(p, kT);
  t.observe(p, kT + kHour);  // one stamp an hour ahead: not trusted yet
  EXPECT_EQ(t[p].watermark, kT);
  t.observe(p, kT + 10);
  EXPECT_EQ(t[p].watermark, kT + 10);
  for (int i = 1; i <= int(PointTable::kJumpVotes); ++i) t.observe(p, kT + kHour + i);  // a real pause
  EXPECT_EQ(t[p].watermark, kT + kHour + int(PointTable::kJumpVotes));
}

TEST(Points, ProgressAndIdleDoNotCompareClocks) {
  PointTable t;
  PointId a = t.declare("a", 0, 0), b = t.declare("b", 1, 0);
  // b's clock is two hours ahead of a's: progress counts each point from its own first stamp.
  t.observe(a, kT);
  t.observe(b, kT + 2 * kHour);
  t.observe(a, kT + 5 * kNsPerSec);
  EXPECT_EQ(t.progress(), 5 * kNsPerSec);
  EXPECT_FALSE(t.idle(b, 10 * kNsPerSec));
  t.observe(a, kT + 16 * kNsPerSec);  // a went on 11 s more while b stayed silent
  EXPECT_TRUE(t.idle(b, 10 * kNsPerSec));
  EXPECT_FALSE(t.idle(a, 10 * kNsPerSec));
  // Horizons lag each point's own watermark by the window.
  EXPECT_EQ(t.advance_horizon(a, kNsPerSec), kT + 15 * kNsPerSec);
  EXPECT_EQ(t.advance_horizon(b, kNsPerSec), kT + 2 * kHour - kNsPerSec);
}

// ---- flow points ----

RoceFrame frame_of_flow(uint32_t qpn) {
  RoceFrame f;
  f.kind = FrameKind::kRoce;
  f.src = ip(10, 0, 0, 1);
  f.dst = ip(10, 0, 0, 2);
  f.bth.dest_qp = qpn;
  return f;
}

// Each (flow, point) gets its own id, numbered densely in order of first sight and the same at
// every later packet, also for a flow seen at more points than it looks through (a table then).
TEST(FlowPoints, DenseIdsPerFlowAndPoint) {
  FlowTable t(100);
  Flow& a = *t.get(frame_of_flow(0x11));
  Flow& b = *t.get(frame_of_flow(0x22));
  EXPECT_EQ(t.flow_point(a, 0), 0u);
  EXPECT_EQ(t.flow_point(b, 0), 1u);
  EXPECT_EQ(t.flow_point(a, 7), 2u);
  EXPECT_EQ(t.flow_point(a, 0), 0u);
  EXPECT_EQ(t.flow_point(b, 0), 1u);
  // Flow a at 20 more points: ids 3..22, stable when asked again in another order.
  for (PointId p = 100; p < 120; ++p) EXPECT_EQ(t.flow_point(a, p), FlowPointId(3 + (p - 100)));
  for (PointId p = 119; p >= 100; --p) EXPECT_EQ(t.flow_point(a, p), FlowPointId(3 + (p - 100)));
  EXPECT_EQ(t.flow_point(b, 119), 23u);
  EXPECT_EQ(t.flow_point_count(), 24u);
  EXPECT_EQ(t.flow_point_of(2), std::make_pair(a.id, PointId(7)));
  EXPECT_EQ(t.flow_point_of(23), std::make_pair(b.id, PointId(119)));
}

// max_flows bounds flow-points, not only flows: state is kept per flow and point, and a flow
// crossing many points must not multiply it past the limit. At the limit a flow keeps its
// points (also those beyond the ones it looks through), gets no new one, and no new flow is made.
TEST(FlowPoints, MaxFlowsBoundsFlowsTimesPoints) {
  FlowTable t(12);
  Flow& a = *t.get(frame_of_flow(0x11));
  for (PointId p = 0; p < 10; ++p) EXPECT_EQ(t.flow_point(a, p), FlowPointId(p));
  Flow& b = *t.get(frame_of_flow(0x22));
  EXPECT_EQ(t.flow_point(b, 0), 10u);
  EXPECT_EQ(t.flow_point(b, 1), 11u);
  EXPECT_EQ(t.flow_point(b, 2), kNoFlowPoint);  // 12 flow-points: the 13th is refused
  EXPECT_EQ(t.flow_point(a, 10), kNoFlowPoint);
  EXPECT_EQ(t.get(frame_of_flow(0x33)), nullptr);  // two flows, but no room for a third's point
  for (PointId p = 0; p < 10; ++p) EXPECT_EQ(t.flow_point(a, p), FlowPointId(p));  // kept, table too
  EXPECT_EQ(t.flow_point(b, 1), 11u);
  EXPECT_EQ(t.get(frame_of_flow(0x22)), &b);
  EXPECT_EQ(t.flow_point_count(), 12u);
  EXPECT_EQ(t.stats().flow_points_refused, 2u);
  EXPECT_EQ(t.stats().flows_refused, 1u);
}

// ---- reorder buffer ----

Packet pkt(TimeNs ts, uint32_t seq, uint64_t key = 0, uint32_t len = 100) {
  Packet p;
  p.ts = ts;
  p.seq = seq;
  p.order_key = key;
  p.wire_len = len;
  return p;
}

// Drains the buffer: the arrival numbers in release order, copies left out.
std::vector<uint32_t> drain(ReorderBuffer& b, size_t* repeats = nullptr) {
  std::vector<uint32_t> order;
  while (!b.empty()) {
    if (b.front_repeats().any()) {
      if (repeats) ++*repeats;
    } else {
      order.push_back(b.front().seq);
    }
    b.pop_front();
  }
  return order;
}

TEST(ReorderBuffer, ReleasesInStampOrderAndTiesByFlowAndPsn) {
  ReorderBuffer b;
  b.insert(pkt(30, 0), 1);
  b.insert(pkt(10, 1), 2);
  b.insert(pkt(20, 2, 7), 3);
  b.insert(pkt(20, 3, 5), 4);  // same stamp, smaller key: first
  EXPECT_EQ(drain(b), (std::vector<uint32_t>{1, 3, 2, 0}));
}

// Back-to-back packets of one flow stamped alike across the PSN wrap leave in PSN order:
// 0xFFFFFF before 0, whatever order they arrived in.
TEST(ReorderBuffer, TiesAcrossThePsnWrapInPsnOrder) {
  const uint64_t flow = uint64_t(0x1234) << 24;
  ReorderBuffer b;
  b.insert(pkt(20, 0, flow | 0x000000), 1);
  b.insert(pkt(20, 1, flow | 0xFFFFFF), 2);
  b.insert(pkt(20, 2, flow | 0x000001), 3);
  b.insert(pkt(20, 3, flow | 0xFFFFFE), 4);
  EXPECT_EQ(drain(b), (std::vector<uint32_t>{3, 1, 0, 2}));
}

TEST(ReorderBuffer, DropsTheSamePacketGivenTwice) {
  ReorderBuffer b;
  b.insert(pkt(10, 0, 1), 42);
  b.insert(pkt(10, 1, 2), 43);   // same stamp, other bytes: kept
  b.insert(pkt(10, 2, 1), 42);   // same stamp, bytes and length: a copy
  b.insert(pkt(10, 3, 1, 60), 42);  // same stamp and bytes, other length: kept
  b.insert(pkt(11, 4, 1), 42);   // same bytes later: a resend, kept
  size_t repeats = 0;
  EXPECT_EQ(drain(b, &repeats), (std::vector<uint32_t>{0, 3, 1, 4}));
  EXPECT_EQ(repeats, 1u);
}

// A NAK and its repeat stamped in one microsecond, given by two files: each copy is told by which
// capture gave the identical packets before it (engine.cpp decides what is a copy from that).
TEST(ReorderBuffer, CountsIdenticalPacketsBeforeTheFrontByCapture) {
  ReorderBuffer b;
  auto from = [](Packet p, uint16_t source) {
    p.source = source;
    return p;
  };
  b.insert(from(pkt(1000, 0, 7), 0), 42);
  b.insert(from(pkt(1000, 1, 7), 0), 42);
  b.insert(from(pkt(1000, 2, 7), 1), 42);
  b.insert(from(pkt(1000, 3, 7), 1), 42);
  const std::vector<std::pair<uint32_t, uint32_t>> want = {{0, 0}, {1, 0}, {0, 2}, {1, 2}};
  for (const auto& [same, other] : want) {
    ASSERT_FALSE(b.empty());
    EXPECT_EQ(b.front_repeats().same_source, same) << "packet " << b.front().seq;
    EXPECT_EQ(b.front_repeats().other_sources, other) << "packet " << b.front().seq;
    b.pop_front();
  }
  EXPECT_TRUE(b.empty());
}

// Files merged with an overlap, not in stamp order: the overlap's copies arrive far behind the
// capture's newest packets (in the heap), an ACK's before the first request's. Seen as they
// arrive, the capture gives packets twice from that ACK's stamp (else the ACKs before the first
// request copy counted twice: phantom losses on a hop); a NAK repeated at its stamp with packets
// given once after it is no copy.
TEST(ReorderBuffer, ToldAtArrivalWhereItsCaptureGivesPacketsTwice) {
  ReorderBuffer b;
  uint32_t seq = 0;
  auto arrive = [&](TimeNs ts, uint64_t key, bool request) {
    b.emplace(ts, key, seq++, 100, key)->source = 0;
    const bool copy = b.placed_after_identical();
    b.arrived(ts, copy, copy && request, kNsPerMs);
    return copy;
  };
  EXPECT_FALSE(arrive(100, 1, false));
  EXPECT_TRUE(arrive(100, 1, false));  // the NAK repeated
  for (TimeNs ts = 200; ts < 7000; ts += 100) EXPECT_FALSE(arrive(ts, uint64_t(ts), ts % 200 == 0));
  EXPECT_TRUE(arrive(3000, 3000, false));  // the overlap: an ACK again, then a request
  EXPECT_TRUE(arrive(3100, 3100, true));
  EXPECT_FALSE(b.given_twice_around(100));
  EXPECT_FALSE(b.given_twice_around(2900));
  EXPECT_TRUE(b.given_twice_around(3000));
  EXPECT_TRUE(b.given_twice_around(3100 + kNsPerMs));
  EXPECT_FALSE(b.given_twice_around(3101 + kNsPerMs));
  // From another capture, it is no copy of this one's (given_twice counts those apart).
  b.emplace(4000, 4000, seq++, 100, 4000)->source = 1;
  EXPECT_FALSE(b.placed_after_identical());
}

// Stamps running backwards (a hostile or broken file) put every packet at the front: they go to
// the heap, and still leave in stamp order, copies dropped, ring and heap interleaved.
TEST(ReorderBuffer, BackwardsStampsLeaveInOrder) {
  ReorderBuffer b;
  uint32_t seq = 0;
  for (TimeNs t = 1000; t > 0; t -= 2) b.insert(pkt(t, seq++, 1), uint64_t(t));
  for (TimeNs t = 1000; t > 0; t -= 2) b.insert(pkt(t, seq++, 1), uint64_t(t));  // copies, late too
  for (TimeNs t = 1; t < 1000; t += 2) b.insert(pkt(t, seq++, 1), uint64_t(t));  // in order
  size_t repeats = 0;
  std::vector<uint32_t> order = drain(b, &repeats);
  EXPECT_EQ(repeats, 500u);
  ASSERT_EQ(order.size(), 1000u);
  // Stamps 1, 2, 3, ... : odd ones from the third run (seq 1000 + (t-1)/2), even ones from the first.
  for (size_t i = 0; i < order.size(); ++i) {
    TimeNs t = TimeNs(i) + 1;
    uint32_t want = t % 2 ? uint32_t(1000 + (t - 1) / 2) : uint32_t((1000 - t) / 2);
    ASSERT_EQ(order[i], want) << "stamp " << t;
  }
}

// ---- roles ----

// Roles::summarize's three answers for one point.
struct RoleSummary {
  uint64_t compute = 0, storage = 0;
  bool ranked = false;
};
RoleSummary summary_of(const Roles& r, PointId point) {
  RoleSummary s;
  r.summarize(point, s.compute, s.storage, &s.ranked);
  return s;
}

TEST(Roles, LongestSpanIsNearestTheHost) {
  PointTable pts;
  PointId leaf_a = pts.declare("leafA", 0, 0), spine = pts.declare("spine", 1, 0), leaf_b = pts.declare("leafB", 2, 0);
  Roles r;
  IpAddress h = ip(10, 1, 0, 1), s = ip(10, 2, 0, 1);
  // Spans 900 > 800 > 700 µs: leafA nearest the host, leafB nearest the storage server.
  Roles::Sighting sg[3] = {{leaf_a, true, 900}, {spine, true, 800}, {leaf_b, true, 700}};
  for (int i = 0; i < 2; ++i) r.add_evidence(h, s, sg);  // two I/Os: one vote alone decides nothing
  PointId seen[3] = {leaf_a, spine, leaf_b};
  Roles::Sides sides = r.sides(h, s, seen, pts, false);
  EXPECT_EQ(sides.compute, leaf_a);
  EXPECT_EQ(sides.storage, leaf_b);
  // An I/O that never reached the storage leaf: the spine is never its storage side.
  PointId partial[2] = {leaf_a, spine};
  sides = r.sides(h, s, partial, pts, false);
  EXPECT_EQ(sides.compute, leaf_a);
  EXPECT_EQ(sides.storage, kNoPoint);
  EXPECT_TRUE(sides.storage_known);
  EXPECT_EQ(r.role_for(pts, spine, h, s), PointRole::kFabric);
}

TEST(Roles, PerEndpointLeafMirror) {
  // leafA faces host h1 and storage s2, leafB faces h2 and s1: each leaf is the compute side
  // of its host and the storage side of its storage server.
  PointTable pts;
  PointId a = pts.declare("leafA", 0, 0), b = pts.declare("leafB", 1, 0);
  Roles r;
  IpAddress h1 = ip(10, 1, 0, 1), h2 = ip(10, 1, 0, 2), s1 = ip(10, 2, 0, 1), s2 = ip(10, 2, 0, 2);
  Roles::Sighting io1[2] = {{a, true, 500}, {b, true, 400}};  // h1 -> s1
  Roles::Sighting io2[2] = {{a, true, 300}, {b, true, 350}};  // h2 -> s2
  for (int i = 0; i < 2; ++i) {
    r.add_evidence(h1, s1, io1);
    r.add_evidence(h2, s2, io2);
  }
  PointId both[2] = {a, b};
  EXPECT_EQ(r.sides(h1, s1, both, pts, false).compute, a);
  EXPECT_EQ(r.sides(h2, s2, both, pts, false).compute, b);
  EXPECT_EQ(r.sides(h2, s2, both, pts, false).storage, a);
  // An I/O of h1 seen at leafA only (its command at the end of the capture): still compute.
  PointId only_a[1] = {a};
  Roles::Sides one = r.sides(h1, s1, only_a, pts, false);
  EXPECT_EQ(one.compute, a);
  EXPECT_EQ(one.storage, kNoPoint);
  // h1 with s2, both behind leafA: one point cannot be both sides; it is the compute side.
  Roles::Sides same = r.sides(h1, s2, only_a, pts, false);
  EXPECT_EQ(same.compute, a);
  EXPECT_EQ(same.storage, kNoPoint);
  const RoleSummary sa = summary_of(r, a);
  EXPECT_EQ(sa.compute, 1u);
  EXPECT_EQ(sa.storage, 1u);
  EXPECT_TRUE(sa.ranked);
}

TEST(Roles, APointBetweenTheSidesIsRankedButNearestToNone) {
  PointTable pts;
  PointId a = pts.declare("leafA", 0, 0), m = pts.declare("spine", 1, 0), b = pts.declare("leafB", 2, 0);
  PointId other = pts.declare("elsewhere", 3, 0);
  Roles r;
  IpAddress h = ip(10, 1, 0, 1), s = ip(10, 2, 0, 1);
  // Spans completion - command at each point: longest nearest the host, shortest nearest the storage.
  Roles::Sighting io[3] = {{a, true, 500}, {m, true, 450}, {b, true, 400}};
  for (int i = 0; i < 2; ++i) r.add_evidence(h, s, io);
  const RoleSummary between = summary_of(r, m);
  EXPECT_EQ(between.compute + between.storage, 0u);
  EXPECT_TRUE(between.ranked);
  EXPECT_EQ(summary_of(r, a).compute, 1u);
  EXPECT_EQ(summary_of(r, b).storage, 1u);
  // A point that never saw an I/O complete alongside another is not ranked: its role is unknown.
  const RoleSummary elsewhere = summary_of(r, other);
  EXPECT_EQ(elsewhere.compute + elsewhere.storage, 0u);
  EXPECT_FALSE(elsewhere.ranked);
}

TEST(Roles, TtlOrdersPointsWhereTheFabricIsRouted) {
  PointTable pts;
  PointId a = pts.declare("a", 0, 0), b = pts.declare("b", 1, 0);
  Roles r;
  IpAddress h = ip(10, 1, 0, 1), s = ip(10, 2, 0, 1);
  // No completion anywhere (no spans): the command's TTL is higher nearer the host.
  Roles::Sighting sg[2] = {{b, false, 0, 61, -1}, {a, false, 0, 63, -1}};
  for (int i = 0; i < 2; ++i) r.add_evidence(h, s, sg);
  PointId seen[2] = {a, b};
  EXPECT_EQ(r.sides(h, s, seen, pts, false).compute, a);
}

// Two ports of the storage leaf a few hundred ns apart, stamps noisier than that: the first I/O
// seen at both may vote the wrong way round. Sides wait until every pair with the nearest point
// is outvoted by two votes (or take the evidence as it is at the end: fallback); the first I/O
// of a capture was reported with its storage side at the uplink port (probe seed 23029).
TEST(Roles, OneVoteAloneDecidesNoSide) {
  PointTable pts;
  PointId up = pts.declare("leafB-up", 0, 0), stor = pts.declare("leafB-stor", 1, 0);
  Roles r;
  IpAddress h = ip(10, 1, 0, 1), s = ip(10, 2, 0, 1);
  Roles::Sighting wrong[2] = {{up, true, 500'000}, {stor, true, 500'300}};  // the uplink's span shorter
  Roles::Sighting right[2] = {{up, true, 500'900}, {stor, true, 500'000}};
  PointId both[2] = {up, stor};
  r.add_evidence(h, s, wrong);
  EXPECT_FALSE(r.sides(h, s, both, pts, false).storage_known);
  EXPECT_EQ(r.sides(h, s, both, pts, true).storage, up);  // at the end, what there is
  const uint64_t before = r.version();
  r.add_evidence(h, s, right);  // 1 : 1
  EXPECT_FALSE(r.sides(h, s, both, pts, false).storage_known);
  r.add_evidence(h, s, right);  // 1 : 2, one vote apart
  EXPECT_FALSE(r.sides(h, s, both, pts, false).storage_known);
  r.add_evidence(h, s, right);  // 1 : 3: settled
  Roles::Sides sides = r.sides(h, s, both, pts, false);
  EXPECT_TRUE(sides.storage_known);
  EXPECT_EQ(sides.storage, stor);
  EXPECT_EQ(sides.compute, up);
  EXPECT_GT(r.version(), before);  // deferred I/Os hear of it
}

TEST(Roles, ContradictionsAndConfiguredRolesAreReported) {
  PointTable pts;
  PointId a = pts.declare("a", 0, 0), b = pts.declare("b", 1, 0);
  pts[a].configured = PointRole::kStorage;  // the user says a faces the storage: the spans disagree
  Roles r;
  IpAddress h = ip(10, 1, 0, 1), s = ip(10, 2, 0, 1);
  Roles::Sighting ok[2] = {{a, true, 500}, {b, true, 400}};
  Roles::Sighting odd[2] = {{a, true, 300}, {b, true, 400}};
  for (int i = 0; i < 3; ++i) r.add_evidence(h, s, ok);
  r.add_evidence(h, s, odd);
  PointId seen[2] = {a, b};
  Roles::Sides sides = r.sides(h, s, seen, pts, false);
  EXPECT_EQ(sides.storage, a);  // configured wins
  auto text = r.contradictions(pts);
  ASSERT_EQ(text.size(), 3u);  // the host's and the storage server's votes, and the override
  EXPECT_NE(text[0].find("3 of 4"), std::string::npos) << text[0];
  EXPECT_NE(text[2].find("--point a=storage contradicts"), std::string::npos) << text[2];
}

// A caller's memo of one endpoint pair (io_quality: per queue) gives what the evidence gives
// without it, whatever came in between: no evidence yet, votes that unsettle and settle an
// endpoint, I/Os seen at other points, and sides the vote counts choose between candidates.
TEST(Roles, PairMemoGivesTheSidesOfTheEvidence) {
  PointTable pts;
  PointId a = pts.declare("a", 0, 0), b = pts.declare("b", 1, 0), c = pts.declare("c", 2, 0);
  PointId d = pts.declare("d", 3, 0), e = pts.declare("e", 4, 0);
  pts[d].configured = pts[e].configured = PointRole::kCompute;  // two configured: votes choose
  Roles with, without;
  IpAddress h = ip(10, 1, 0, 1), s = ip(10, 2, 0, 1);
  const Roles::Sighting ab[2] = {{a, true, 500}, {b, true, 400}},
                        ba[2] = {{a, true, 300}, {b, true, 400}};
  const Roles::Sighting bc[2] = {{b, true, 500}, {c, true, 400}};
  // c nearer the host than d and e, by as many votes as come: which of d, e is its compute side
  // changes with the counts alone.
  const Roles::Sighting cd[2] = {{c, true, 500}, {d, true, 400}},
                        ce[2] = {{c, true, 500}, {e, true, 400}};
  const PointId seen_ab[2] = {a, b}, seen_ba[2] = {b, a}, seen_bc[2] = {b, c}, seen_a[1] = {a};
  const PointId seen_de[2] = {d, e}, seen_abc[3] = {a, b, c};
  const std::span<const PointId> seens[] = {seen_ab, seen_ba, seen_bc, seen_a, seen_de, seen_abc};
  Roles::PairMemo shared, own[std::size(seens)];  // one for every I/O, one per set of points
  auto same = [&](size_t i, Roles::PairMemo& memo) {
    for (int twice = 0; twice < 2; ++twice) {  // the second one from the memo
      Roles::Sides x = with.sides(h, s, seens[i], pts, false, &memo),
                   y = without.sides(h, s, seens[i], pts, false);
      EXPECT_EQ(x.compute, y.compute) << i;
      EXPECT_EQ(x.storage, y.storage) << i;
      EXPECT_EQ(x.compute_known, y.compute_known) << i;
      EXPECT_EQ(x.storage_known, y.storage_known) << i;
    }
  };
  for (size_t i = 0; i < std::size(seens); ++i) same(i, own[i]);  // no evidence yet
  for (const auto* sg : {ab, ab, ba, ba, ba, ba, bc, bc, bc, cd, cd, cd, ce, ce, ce, ce, cd, cd}) {
    with.add_evidence(h, s, std::span(sg, 2), &shared);
    without.add_evidence(h, s, std::span(sg, 2));
    for (size_t i = 0; i < std::size(seens); ++i) {
      same(i, shared);
      same(i, own[i]);
    }
  }
  EXPECT_EQ(with.version(), without.version());
}

// ---- clock relations ----

TEST(ClockRelations, OffsetBetweenTheTwoDirectionsMinimalDelays) {
  ClockRelations c;
  // b's clock runs 5 ms ahead of a's; packets take 2..9 µs from a to b and 3..7 µs back.
  const DurationNs off = 5 * kNsPerMs;
  for (DurationNs d : {2000, 5000, 9000}) c.add_sample(0, kT, 1, kT + off + d, 0);  // a -> b
  for (DurationNs d : {3000, 7000}) c.add_sample(0, kT + d, 1, kT + off, 1);        // b -> a
  auto e = c.estimate(0, 1);
  ASSERT_TRUE(e);
  EXPECT_TRUE(e->both_directions);
  // Minimal delays 2 and 3 µs: the offset is off + (2 - 3) / 2 µs, within +-2.5 µs.
  EXPECT_EQ(e->offset, off - 500);
  EXPECT_EQ(e->uncertainty, 2500);
  EXPECT_EQ(c.estimate(1, 0)->offset, -(off - 500));
  EXPECT_TRUE(c.related(0, 1));
  EXPECT_EQ(c.map(kT, 0, 1), kT + off - 500);
}

TEST(ClockRelations, EndpointPairsBracketTheOffsetWhateverWayTheyCross) {
  // b runs 3 ms ahead of a. Pair 1 (host h1 behind a, storage s1 behind b) and pair 2 (h2 behind
  // b, s2 behind a) both send host -> storage as direction 0, so direction 0 travels a -> b in pair
  // 1 and b -> a in pair 2: sorted by direction alone the samples overlap and say nothing.
  ClockRelations c;
  const DurationNs off = 3 * kNsPerMs;
  for (DurationNs d : {4000, 6000}) c.add_sample(0, kT, 1, kT + off + d, 0, 1);  // h1 -> s1: a -> b
  for (DurationNs d : {5000, 8000}) c.add_sample(0, kT + d, 1, kT + off, 1, 1);  // s1 -> h1: b -> a
  for (DurationNs d : {3000, 9000}) c.add_sample(0, kT + d, 1, kT + off, 0, 2);  // h2 -> s2: b -> a
  for (DurationNs d : {7000}) c.add_sample(0, kT, 1, kT + off + d, 1, 2);        // s2 -> h2: a -> b
  auto e = c.estimate(0, 1);
  ASSERT_TRUE(e);
  EXPECT_TRUE(e->both_directions);
  EXPECT_EQ(e->samples, 7u);
  // Pair 1 brackets [off - 5 µs, off + 4 µs], pair 2 [off - 3 µs, off + 7 µs]: together
  // [off - 3 µs, off + 4 µs], the offset off + 0.5 µs within ± 3.5 µs.
  EXPECT_EQ(e->offset, off + 500);
  EXPECT_EQ(e->uncertainty, 3500);
  // Seen one way only, a pair brackets nothing: the middle of all samples.
  ClockRelations one;
  for (DurationNs d : {2000, 4000}) one.add_sample(0, kT, 1, kT + off + d, 0, 5);
  EXPECT_FALSE(one.estimate(0, 1)->both_directions);
  EXPECT_EQ(one.estimate(0, 1)->offset, off + 3000);
}

TEST(ClockRelations, WhichWayAPairCrossesTwoPointsFromTheSamplesAlone) {
  // Two ports of one switch, 300 ns apart, b's clock 11 µs ahead, stamps jittered by ±400 ns:
  // single samples (and the offset's bracket) can point either way, the averages cannot.
  ClockRelations c;
  const DurationNs off = 11'000;
  const DurationNs jitter[] = {-400, 350, -120, 400, 60, -390, 210, -30};
  for (size_t i = 0; i < 8; ++i) {
    c.add_sample(0, kT, 1, kT + off + 300 + jitter[i], 0, 7);      // pair 7, direction 0: a -> b
    c.add_sample(0, kT + 300, 1, kT + off + jitter[7 - i], 1, 7);  // pair 7, direction 1: b -> a
  }
  ASSERT_TRUE(c.passes_first(0, 1, 7, 0));
  EXPECT_TRUE(*c.passes_first(0, 1, 7, 0));
  EXPECT_FALSE(*c.passes_first(1, 0, 7, 0));  // asked the other way round
  EXPECT_FALSE(*c.passes_first(0, 1, 7, 1));
  EXPECT_TRUE(*c.passes_first(1, 0, 7, 1));
  // A resend seen first at b, a millisecond late, only pushes its direction further its way.
  c.add_sample(0, kT, 1, kT + off + kNsPerMs, 0, 7);
  EXPECT_TRUE(*c.passes_first(0, 1, 7, 0));
  // Not sampled both ways, or another pair, or other points: not known.
  c.add_sample(0, kT, 1, kT + off + 300, 0, 8);
  EXPECT_FALSE(c.passes_first(0, 1, 8, 0));
  EXPECT_FALSE(c.passes_first(0, 1, 9, 0));
  EXPECT_FALSE(c.passes_first(0, 2, 7, 0));
}

TEST(ClockRelations, OverlappingDirectionsShowHowFarTheStampsStray) {
  // Exact clocks (offset 0), ports 100 ns apart, stamps off by up to ±250 ns: pair 1's two
  // directions overlap by 120 ns and bracket nothing; pair 2's happen not to overlap and bracket
  // [50, 58], which misses the true offset 0. So the closest samples are not to be trusted: the
  // directions' means bracket it. Pair 1: a -> b averages 190, b -> a -100; pair 2: 179 and -75;
  // together [-75, 179], the offset 52 within ±127 (0 is inside).
  ClockRelations c;
  for (DurationNs d : {-20, 400}) c.add_sample(0, kT, 1, kT + d, 0, 1);   // pair 1, a -> b
  for (DurationNs d : {-300, 100}) c.add_sample(0, kT, 1, kT + d, 1, 1);  // pair 1, b -> a
  for (DurationNs d : {58, 300}) c.add_sample(0, kT, 1, kT + d, 0, 2);    // pair 2, a -> b
  for (DurationNs d : {-200, 50}) c.add_sample(0, kT, 1, kT + d, 1, 2);   // pair 2, b -> a
  auto e = c.estimate(0, 1);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->offset, 52);
  EXPECT_EQ(e->uncertainty, 127);
  EXPECT_EQ(e->noise, 120);
  EXPECT_EQ(c.estimate(1, 0)->offset, -52);
  // Without the noisy pair, nothing shows the stamps stray: the closest samples' bracket.
  ClockRelations clean;
  for (DurationNs d : {58, 300}) clean.add_sample(0, kT, 1, kT + d, 0, 2);
  for (DurationNs d : {-200, 50}) clean.add_sample(0, kT, 1, kT + d, 1, 2);
  EXPECT_EQ(clean.estimate(0, 1)->noise, 0);
  EXPECT_EQ(clean.estimate(0, 1)->offset, 54);
  EXPECT_EQ(clean.estimate(0, 1)->uncertainty, 4);
}

TEST(ClockRelations, StampsOutOfOrderAtAPointMakeItsEstimatesNoisy) {
  // The clean bracket of the test above ([50, 58]: 54 ± 4) misses the true offset 0 when the
  // stamps stray, and nothing in the samples shows it. Point a's stamps were seen 300 ns out of
  // a flow's order, b's 200 ns: the estimate takes the means' bracket ([-75, 179]: 52 ± 127) and
  // may be off by (300 + 200) / 2 = 250 at least.
  ClockRelations c;
  for (DurationNs d : {58, 300}) c.add_sample(0, kT, 1, kT + d, 0, 2);
  for (DurationNs d : {-200, 50}) c.add_sample(0, kT, 1, kT + d, 1, 2);
  EXPECT_EQ(c.estimate(0, 1)->offset, 54);  // worked out (and kept) before the noise is known
  c.note_stamp_noise(0, 300);
  c.note_stamp_noise(1, 200);
  c.note_stamp_noise(1, 100);  // smaller: changes nothing
  auto e = c.estimate(0, 1);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->noise, 250);
  EXPECT_EQ(e->offset, 52);
  EXPECT_EQ(e->uncertainty, 127);
  EXPECT_EQ(e->within(), 250);
}

TEST(ClockRelations, BracketsThatMissEachOtherFallBackToTheMeans) {
  // No pair's directions overlap, but pair 1 brackets [-90, -80] and pair 2 [30, 40]: with exact
  // stamps both would hold the offset, so the stamps stray (true offset 0). Means: pair 1 a -> b
  // (-80 + 600) / 2 = 260, b -> a (-90 - 610) / 2 = -350; pair 2 (40 + 500) / 2 = 270 and
  // (30 - 430) / 2 = -200: together [-200, 260], the offset 30 within ±230.
  ClockRelations c;
  for (DurationNs d : {-80, 600}) c.add_sample(0, kT, 1, kT + d, 0, 1);
  for (DurationNs d : {-90, -610}) c.add_sample(0, kT, 1, kT + d, 1, 1);
  for (DurationNs d : {40, 500}) c.add_sample(0, kT, 1, kT + d, 0, 2);
  for (DurationNs d : {30, -430}) c.add_sample(0, kT, 1, kT + d, 1, 2);
  auto e = c.estimate(0, 1);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->noise, 0);
  EXPECT_EQ(e->offset, 30);
  EXPECT_EQ(e->uncertainty, 230);
  // The estimate follows every sample, not only those that moved a range's ends.
  c.add_sample(0, kT, 1, kT + 300, 0, 2);  // pair 2 a -> b now averages 280: the bracket is [-200, 260] still
  c.add_sample(0, kT, 1, kT - 200, 1, 1);  // pair 1 b -> a: -300
  EXPECT_EQ(c.estimate(0, 1)->offset, 30);
  c.add_sample(0, kT, 1, kT + 0, 0, 1);  // pair 1 a -> b: (-80 + 600 + 0) / 3 = 173.3: [-200, 174]
  EXPECT_EQ(c.estimate(0, 1)->offset, -13);
  EXPECT_EQ(c.estimate(0, 1)->uncertainty, 187);
}

// State is bounded whatever the points: pairs of points are sampled up to kMaxLinks, beyond
// which a pair is kept only when it relates two points not related yet. Points 0..199 fully
// meshed (19,900 pairs), then point 200 with 201: they join no component but their own.
TEST(ClockRelations, PairsOfPointsAreBoundedButEveryPointStillRelates) {
  ClockRelations c;
  const PointId n = 200;
  uint64_t samples = 0;
  for (PointId p = 0; p < n; ++p)
    for (PointId q = p + 1; q < n; ++q, ++samples) c.add_sample(p, kT, q, kT + 1000 * (q - p), 0);
  const size_t kept = c.pairs().size();
  EXPECT_EQ(kept, ClockRelations::kMaxLinks);
  EXPECT_EQ(c.samples_refused(), samples - kept);
  for (PointId q = 1; q < n; ++q) EXPECT_TRUE(c.related(0, q)) << q;
  EXPECT_EQ(c.map(kT, 0, n - 1), kT + 1000 * (n - 1));  // along the kept pairs
  // A sample of a kept pair still counts.
  EXPECT_EQ(c.estimate(0, 1)->samples, 1u);
  c.add_sample(0, kT, 1, kT + 1000, 0);
  EXPECT_EQ(c.estimate(0, 1)->samples, 2u);
  // A pair beyond the limit that relates points not related yet is kept.
  c.add_sample(n, kT, n + 1, kT + 5, 0);
  EXPECT_TRUE(c.related(n, n + 1));
  EXPECT_FALSE(c.related(0, n));
  c.add_sample(0, kT, n, kT + 7, 0);
  EXPECT_TRUE(c.related(1, n + 1));
  EXPECT_EQ(c.pairs().size(), ClockRelations::kMaxLinks + 2);
  EXPECT_FALSE(c.estimate(n - 2, n - 1));  // refused: never sampled as far as the table knows
}

TEST(ClockRelations, ComponentsMapThroughIntermediatePoints) {
  ClockRelations c;
  c.add_sample(0, 1000, 1, 2'001'000, 0);  // 1 is 2 ms ahead of 0
  c.add_sample(2, 5000, 1, 1'005'000, 0);  // 1 is 1 ms ahead of 2
  EXPECT_TRUE(c.related(0, 2));
  EXPECT_FALSE(c.related(0, 3));
  EXPECT_EQ(c.map(0, 0, 2), 1'000'000);  // so 2 is 1 ms ahead of 0
  EXPECT_EQ(c.map(0, 2, 0), -1'000'000);
}

// Fixed bug (fuzz_engine, UBSan): samples and offsets near the ends of the stamps' span
// overflowed 64 bits (a sample's difference to the first, offsets summed along a chain of points,
// a stamp mapped by them). Samples further apart than 2^61 ns are no clock's offset and relate
// nothing; a sniffer whose clock starts at 1970 against one in 2026 still relates exactly.
TEST(ClockRelations, OffsetsAtTheEndsOfTheStampsSpanStayWithinIt) {
  constexpr TimeNs kLimit = (TimeNs(1) << 62) - (TimeNs(1) << 48);  // the engine's stamp clamp
  ClockRelations far;
  far.add_sample(0, -kLimit, 1, kLimit, 0);  // 2^63 - 2^49 apart
  far.add_sample(0, kLimit, 1, -kLimit, 1);
  EXPECT_FALSE(far.related(0, 1));
  EXPECT_FALSE(far.estimate(0, 1));

  // 1970 (a clock that was never set) against 2026: 1.8e18 ns, 1 us each way.
  constexpr TimeNs k2026 = 1'796'000'000'000'000'000;
  ClockRelations epoch;
  epoch.add_sample(0, k2026, 1, 0 + 1000, 0);
  epoch.add_sample(0, k2026 + 1000, 1, 0, 1);
  ASSERT_TRUE(epoch.related(0, 1));
  EXPECT_EQ(epoch.estimate(0, 1)->offset, -k2026);
  EXPECT_EQ(epoch.map(k2026 + 5, 0, 1), 5);

  // A chain of points each 2^61 - 1 ahead of the one before: the offsets sum beyond 64 bits,
  // a stamp mapped along them stays at the end of the span.
  ClockRelations chain;
  constexpr DurationNs kStep = (DurationNs(1) << 61) - 1;
  for (PointId p = 0; p < 5; ++p) {
    chain.add_sample(p, -kLimit, p + 1, -kLimit + kStep, 0);
    chain.add_sample(p, -kLimit + 10, p + 1, -kLimit + kStep, 1);
  }
  ASSERT_TRUE(chain.related(0, 5));
  EXPECT_EQ(chain.map(kLimit, 0, 5), TimeNs(1) << 62);
  EXPECT_EQ(chain.map(-kLimit, 5, 0), -(TimeNs(1) << 62));
}

// The change log names every point whose root() or to_root() changed since a reader last
// looked (PointProgress re-keys only those): random samples among 300 points, which join
// components, re-root trees and move offsets in them, checked against every point's mapping
// before and after each batch. Fails when a re-rooted chain or a subtree below a moved link is
// left out (the children lists the log walks gone stale).
TEST(ClockRelations, ChangeLogNamesEveryPointWhoseMappingChanged) {
  constexpr PointId kPoints = 300;
  std::mt19937_64 rng(20261207);
  ClockRelations c;
  uint64_t seen = 0;
  auto mapping = [&](PointId q) { return std::make_pair(c.root(q), c.to_root(q)); };
  std::vector<std::pair<PointId, DurationNs>> before(kPoints);
  for (PointId q = 0; q < kPoints; ++q) before[q] = mapping(q);
  std::vector<DurationNs> true_offset(kPoints);
  for (auto& o : true_offset) o = DurationNs(rng() % 2'000'000) - 1'000'000;
  size_t overflows = 0, batches = 0, changed_total = 0;
  for (int batch = 0; batch < 400; ++batch) {
    // A few samples: mostly between points near each other (chains that later join), some far.
    const int n = 1 + int(rng() % (batch < 200 ? 3 : 40));
    for (int i = 0; i < n; ++i) {
      const PointId p = PointId(rng() % kPoints);
      const PointId q = rng() % 4 ? PointId((p + 1 + rng() % 7) % kPoints) : PointId(rng() % kPoints);
      const TimeNs t = TimeNs(rng() % 1'000'000'000);
      const DurationNs delay = DurationNs(rng() % 5000);  // a wider bracket, narrowed by later samples
      const int way = int(rng() % 2);
      c.add_sample(p, t, q, t + true_offset[q] - true_offset[p] + (way ? -delay : delay), way, p ^ q);
    }
    std::vector<bool> logged(kPoints, false);
    const bool complete = c.changes_since(seen, [&](PointId q) { logged[q] = true; });
    ++batches;
    overflows += !complete;
    for (PointId q = 0; q < kPoints; ++q) {
      const auto now = mapping(q);
      if (now != before[q]) {
        ++changed_total;
        EXPECT_TRUE(!complete || logged[q]) << "batch " << batch << ": point " << q << " moved from root " << before[q].first
                                            << " (" << before[q].second << ") to " << now.first << " (" << now.second
                                            << ") unlogged";
      }
      before[q] = now;
    }
  }
  EXPECT_GT(changed_total, size_t(kPoints));  // the test saw unions and offset moves
  EXPECT_LT(overflows, batches / 10);
  EXPECT_TRUE(c.related(0, kPoints - 1));
}

// ---- settings ----

TEST(Settings, ParsedInTheirUnitWithBounds) {
  Settings s;
  EXPECT_EQ(s.duration("reorder_window"), 250 * kNsPerMs);
  EXPECT_EQ(s.duration("io_timeout"), 10 * kNsPerSec);
  std::string error;
  EXPECT_TRUE(s.set("io_timeout", "0.5", error));
  EXPECT_EQ(s.duration("io_timeout"), 500 * kNsPerMs);
  EXPECT_FALSE(s.set("io_timeout", "-1", error));
  EXPECT_NE(error.find("--io-timeout"), std::string::npos) << error;
  EXPECT_FALSE(s.set("max_ios", "1.5", error));
  EXPECT_FALSE(s.set("no_such_setting", "1", error));
  EXPECT_TRUE(s.set("point", "a=compute", error));
  EXPECT_TRUE(s.set("point", "b=storage", error));
  EXPECT_EQ(s.list("point").size(), 2u);
  s.reset("point");
  EXPECT_TRUE(s.list("point").empty());
}

}  // namespace
}  // namespace rdmatel
