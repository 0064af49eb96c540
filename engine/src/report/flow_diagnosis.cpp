// SPDX-License-Identifier: GPL-2.0-or-later
#include "rdmatel/flow_diagnosis.h"

#include <algorithm>
#include <map>
#include <tuple>

namespace rdmatel {
namespace {

using FlowId3 = std::tuple<IpAddress, IpAddress, uint32_t>;

}  // namespace

std::vector<FlowFinding> find_flow_findings(const FlowReport& flows, const std::vector<EcnRecord>& congestion,
                                            const std::vector<PfcRecord>& pfc, const std::vector<PathRecord>& hops,
                                            const SendingQpn& sending_qpn) {
  std::map<FlowId3, FlowFinding> by_flow;
  std::map<FlowId3, std::vector<PointId>> points;  // where each flow was seen
  auto at = [&](const IpAddress& s, const IpAddress& d, uint32_t q) -> FlowFinding& {
    FlowFinding& f = by_flow[{s, d, q}];
    f.src = s;
    f.dst = d;
    f.dst_qpn = q;
    return f;
  };
  for (const auto& [k, s] : flows.flows()) {
    FlowFinding& f = at(k.src, k.dst, k.dst_qpn);
    points[{k.src, k.dst, k.dst_qpn}].push_back(k.point);
    // The point that saw the largest share resent: the one nearest the loss's sender side
    // sees every resend.
    const double share = s.packets ? double(s.retrans_packets) / double(s.packets) : 0.0;
    if (f.retrans_point == kNoPoint || share > f.retrans_share()) {
      f.retrans_point = k.point;
      f.packets = s.packets;
      f.retrans_packets = s.retrans_packets;
      f.naks = s.naks;
      f.fnr = s.fnr();
    }
  }
  for (const EcnRecord& e : congestion) {
    auto it = by_flow.find({e.src, e.dst, e.dst_qpn});
    if (it == by_flow.end()) continue;  // not a message flow (no data packets: ACKs, CNPs)
    FlowFinding& f = it->second;
    const double share = e.packets ? double(e.ce_packets) / double(e.packets) : 0.0;
    if (f.ce_point == kNoPoint || share > f.ce_share()) {
      f.ce_point = e.point;
      f.ce_packets = e.ce_packets;
      f.ce_of = e.packets;
    }
    f.cnps_received = std::max(f.cnps_received, e.cnps_received.value_or(0));
  }
  auto lossier = [](const PathRecord& h, const std::optional<PathRecord>& than) {
    return h.lost && h.packets &&
           (!than || double(h.lost) / double(h.packets) > double(than->lost) / double(than->packets));
  };
  std::map<FlowId3, std::vector<const PathRecord*>> hops_of;
  for (const PathRecord& h : hops) hops_of[{h.src, h.dst, h.dst_qpn}].push_back(&h);
  for (auto& [key, f] : by_flow) {
    if (auto it = hops_of.find(key); it != hops_of.end())
      for (const PathRecord* h : it->second) {
        f.has_hops = true;
        f.hop_lost += h->lost;
        f.hop_packets += h->packets;
        if (lossier(*h, f.lossiest_hop)) f.lossiest_hop = *h;
      }
    const std::optional<uint32_t> peer = sending_qpn ? sending_qpn(f.src, f.dst, f.dst_qpn) : std::nullopt;
    if (!peer) continue;
    if (auto it = hops_of.find({f.dst, f.src, *peer}); it != hops_of.end())
      for (const PathRecord* h : it->second) {
        f.peer_hop_lost += h->lost;
        if (lossier(*h, f.peer_lossiest_hop)) f.peer_lossiest_hop = *h;
      }
  }
  std::vector<FlowFinding> out;
  for (auto& [key, f] : by_flow) {
    for (const PfcRecord& p : pfc) {
      const std::vector<PointId>& seen = points[key];
      if (p.pause_frames && std::find(seen.begin(), seen.end(), p.point) != seen.end()) f.pauses.push_back(p);
    }
    const bool loss = f.retrans_share() >= kFlowLossShare || (f.fnr && *f.fnr >= kFlowNakRate && f.naks > 0) ||
                      (f.hop_packets && double(f.hop_lost) / double(f.hop_packets) >= kFlowHopLossShare);
    const bool congested = f.ce_share() >= kFlowCeShare || f.cnps_received > 0;
    if (loss) f.kind = FlowFinding::Kind::kLoss;
    else if (congested) f.kind = FlowFinding::Kind::kCongestion;
    else if (!f.pauses.empty()) f.kind = FlowFinding::Kind::kPause;
    else continue;
    out.push_back(std::move(f));
  }
  auto pause_frames = [](const FlowFinding& f) {
    uint64_t n = 0;
    for (const PfcRecord& p : f.pauses) n += p.pause_frames;
    return n;
  };
  std::stable_sort(out.begin(), out.end(), [&](const FlowFinding& a, const FlowFinding& b) {
    if (a.kind != b.kind) return a.kind < b.kind;
    switch (a.kind) {
      case FlowFinding::Kind::kLoss:
        return a.retrans_share() > b.retrans_share();
      case FlowFinding::Kind::kCongestion:
        return a.ce_share() != b.ce_share() ? a.ce_share() > b.ce_share() : a.cnps_received > b.cnps_received;
      case FlowFinding::Kind::kPause:
        return pause_frames(a) > pause_frames(b);
    }
    return false;
  });
  return out;
}

}  // namespace rdmatel
