// SPDX-License-Identifier: GPL-2.0-or-later
// Who is to blame for RDMA message flows (GPU traffic, NCCL: no NVMe I/O to split into storage,
// network and host): the flows that lose packets, are marked or told to slow down, or run
// through PFC pauses, with what the capture shows of each on the same path, put together. The
// correlation users otherwise make by hand from retransmissions, hops, ECN, CNPs and PFC.
// docs/metrics.md "Message-flow diagnosis" has the rules and thresholds.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "rdmatel/records.h"
#include "rdmatel/report.h"
#include "rdmatel/writers.h"  // PointNamer

namespace rdmatel {

/// A flow retransmitting this share of its data packets at some point loses packets.
inline constexpr double kFlowLossShare = 0.01;
/// NAKs per original packet from which a flow counts as losing packets even with fewer resends.
inline constexpr double kFlowNakRate = 0.001;
/// A flow losing this share of its packets on its hops loses packets, resent or not.
inline constexpr double kFlowHopLossShare = 0.01;
/// A flow with this share of its packets CE-marked at some point is congested.
inline constexpr double kFlowCeShare = 0.01;

struct FlowFinding {
  IpAddress src, dst;
  uint32_t dst_qpn = 0;
  /// What it stands out by, most telling first: loss, then congestion, then pauses only.
  enum class Kind : uint8_t { kLoss, kCongestion, kPause } kind = Kind::kLoss;

  // Loss: at the point where the flow retransmitted the largest share of its packets.
  PointId retrans_point = kNoPoint;
  uint64_t packets = 0, retrans_packets = 0, naks = 0;
  std::optional<double> fnr;
  double retrans_share() const { return packets ? double(retrans_packets) / double(packets) : 0.0; }
  /// The flow's hops (seen at two points or more) and its lossiest one, if any lost a packet.
  bool has_hops = false;
  std::optional<PathRecord> lossiest_hop;
  uint64_t hop_lost = 0;  ///< lost on all its hops together: the losses the capture locates
  uint64_t hop_packets = 0;
  /// The other direction of its queue pair (READ requests, ACKs and NAKs): a lost READ request
  /// has the response resent, a lost ACK the data. Its lossiest hop, if it lost any.
  std::optional<PathRecord> peer_lossiest_hop;
  uint64_t peer_hop_lost = 0;

  // Congestion: at the point with the largest CE share.
  PointId ce_point = kNoPoint;
  uint64_t ce_packets = 0, ce_of = 0;
  uint64_t cnps_received = 0;  ///< the most at one point: how often its sender was told to slow down
  double ce_share() const { return ce_of ? double(ce_packets) / double(ce_of) : 0.0; }

  /// PFC pauses (pause frames > 0) at the points where the flow was seen, of its priority: the
  /// one in its VLAN tags there. Where its frames are untagged the switch takes the priority
  /// from the DSCP with a table the capture does not show: pauses of every priority count, and
  /// `matched` says the priority could not be checked.
  struct Pause {
    PfcRecord pfc;
    bool matched = false;  ///< the flow's frames at that point carry this priority
  };
  std::vector<Pause> pauses;
  bool pauses_matched() const {
    for (const Pause& p : pauses)
      if (!p.matched) return false;
    return true;
  }
};

/// The flows that stand out, worst first: losses by retransmitted share, then congestion by CE
/// share and CNPs, then flows only paused, by pause frames.
/// `sending_qpn` names a flow's source queue pair once its two directions are paired
/// (Engine::sending_qpn): the other direction's hops are then looked at too.
using SendingQpn = std::function<std::optional<uint32_t>(const IpAddress& src, const IpAddress& dst, uint32_t qpn)>;
std::vector<FlowFinding> find_flow_findings(const FlowReport& flows, const std::vector<EcnRecord>& congestion,
                                            const std::vector<PfcRecord>& pfc, const std::vector<PathRecord>& hops,
                                            const SendingQpn& sending_qpn);

/// The finding in a sentence (without the final period), as `analyze`, the analyzer and the docs
/// say it: "the network loses its packets, between leafA-gpu and spine1".
/// `capture_dropped` (optional): the packets the capture itself dropped at a point
/// (PointInfo::capture_dropped); a loss located on a hop into such a point says it may be the capture's.
using CaptureDrops = std::function<uint64_t(PointId)>;
std::string flow_finding_verdict(const FlowFinding& f, const PointNamer& point_name,
                                 const CaptureDrops& capture_dropped = nullptr);
/// Its numbers: the share retransmitted and where, NAKs, the hop's losses, CE marks, CNPs, pauses.
std::string flow_finding_evidence(const FlowFinding& f, const PointNamer& point_name);

}  // namespace rdmatel
