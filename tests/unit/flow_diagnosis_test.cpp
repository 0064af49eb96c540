// SPDX-License-Identifier: GPL-2.0-or-later
// The message-flow diagnosis on hand-built records: PFC pauses hold back only the flows of their
// priority (the 802.1p priority in the flows' VLAN tags at that point); a flow whose frames are
// untagged there cannot be matched, so it is listed with every pause and says so.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "rdmatel/flow_diagnosis.h"

namespace rdmatel {
namespace {

IpAddress ip(const char* text) {
  IpAddress a;
  EXPECT_TRUE(IpAddress::parse(text, a));
  return a;
}

// One clean message (no resend, no NAK) of flow 10.0.0.1 -> 10.0.0.2 `qpn` at `point`, and its
// congestion record there: nothing marked, the VLAN priority `prio` (none: untagged).
void add_flow(FlowReport& flows, std::vector<EcnRecord>& ecn, uint32_t qpn, PointId point,
              std::optional<uint8_t> prio) {
  MessageRecord m;
  m.src = ip("10.0.0.1");
  m.dst = ip("10.0.0.2");
  m.dst_qpn = qpn;
  m.point = point;
  m.complete = true;
  m.packets = 8;
  m.bytes = 8 * 4096;
  m.first_ns = 1000;
  m.last_ns = 9000;
  flows.add(m);
  EcnRecord e;
  e.src = m.src;
  e.dst = m.dst;
  e.dst_qpn = qpn;
  e.point = point;
  e.packets = 8;
  e.ect_packets = 8;
  e.priority = prio;
  e.dscp = 26;
  ecn.push_back(e);
}

PfcRecord pauses(PointId point, uint8_t prio, uint64_t frames) {
  PfcRecord p;
  p.point = point;
  p.priority = prio;
  p.frames = p.pause_frames = frames;
  return p;
}

const std::string kNames[] = {"leaf", "spine"};
const PointNamer kNamer = [](PointId p) -> const std::string& { return kNames[p]; };

TEST(FlowDiagnosis, PausesHoldBackOnlyTheFlowsOfTheirPriority) {
  FlowReport flows;
  std::vector<EcnRecord> ecn;
  add_flow(flows, ecn, 1, 0, 3);             // priority 3 at the leaf
  add_flow(flows, ecn, 2, 0, 5);             // priority 5 at the leaf
  add_flow(flows, ecn, 3, 0, std::nullopt);  // untagged at the leaf
  add_flow(flows, ecn, 4, 1, 3);             // priority 3, but only at the spine
  // Priority 3 paused 4 times at the leaf; priority 0 twice at the spine (nobody's class there).
  const std::vector<PfcRecord> pfc = {pauses(0, 3, 4), pauses(1, 0, 2)};
  const std::vector<FlowFinding> found = find_flow_findings(flows, ecn, pfc, {}, nullptr);
  std::map<uint32_t, const FlowFinding*> by_qpn;
  for (const FlowFinding& f : found) by_qpn[f.dst_qpn] = &f;
  ASSERT_EQ(by_qpn.size(), 2u);  // 2 runs in another class, 4 is paused by nothing of its own

  ASSERT_TRUE(by_qpn.count(1));
  const FlowFinding& own = *by_qpn[1];
  EXPECT_EQ(own.kind, FlowFinding::Kind::kPause);
  ASSERT_EQ(own.pauses.size(), 1u);
  EXPECT_TRUE(own.pauses[0].matched);
  EXPECT_EQ(own.pauses[0].pfc.pause_frames, 4u);
  EXPECT_EQ(flow_finding_verdict(own, kNamer),
            "PFC pauses of its priority at the points it crosses may hold it back, nothing lost or marked");
  EXPECT_EQ(flow_finding_evidence(own, kNamer),
            "PFC pauses at leaf (priority 3, its own: 4 pause frames); no retransmission, no NAK");

  ASSERT_TRUE(by_qpn.count(3));
  const FlowFinding& untagged = *by_qpn[3];
  EXPECT_EQ(untagged.kind, FlowFinding::Kind::kPause);
  ASSERT_EQ(untagged.pauses.size(), 1u);
  EXPECT_FALSE(untagged.pauses[0].matched);
  EXPECT_NE(flow_finding_verdict(untagged, kNamer).find("could not be matched"), std::string::npos);
  EXPECT_NE(flow_finding_evidence(untagged, kNamer).find("priority 3, its frames untagged there: 4 pause frames"),
            std::string::npos);
}

}  // namespace
}  // namespace rdmatel
