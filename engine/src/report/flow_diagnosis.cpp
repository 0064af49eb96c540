// SPDX-License-Identifier: GPL-2.0-or-later
#include "rdmatel/flow_diagnosis.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <tuple>

#include "rdmatel/names.h"

namespace rdmatel {
namespace {

using FlowId3 = std::tuple<IpAddress, IpAddress, uint32_t>;


std::string percent(double share) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1f %%", share * 100.0);
  return b;
}

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
  // Only flows that may stand out are looked at (a flow-point of a million quiet ones took
  // 700 bytes here): those that resent or were NAKed somewhere, were CE-marked or told to slow
  // down, lost a packet on a hop, or crossed a point where some priority was paused. Nothing
  // else makes a finding below.
  std::vector<bool> paused_point;
  for (const PfcRecord& p : pfc)
    if (p.pause_frames) {
      if (p.point >= paused_point.size()) paused_point.resize(size_t(p.point) + 1);
      paused_point[p.point] = true;
    }
  std::set<FlowId3> marked;
  for (const EcnRecord& e : congestion)
    if (e.ce_packets || e.cnps_received.value_or(0)) marked.insert({e.src, e.dst, e.dst_qpn});
  for (const PathRecord& h : hops)
    if (h.lost) marked.insert({h.src, h.dst, h.dst_qpn});
  const auto& all = flows.flows();
  for (auto first = all.begin(); first != all.end();) {
    // The flow's rows at its points are side by side (sorted by flow, then point).
    auto last = first;
    bool candidate = false;
    for (; last != all.end() && last->first.src == first->first.src && last->first.dst == first->first.dst &&
           last->first.dst_qpn == first->first.dst_qpn;
         ++last)
      candidate = candidate || last->second.retrans_packets || last->second.naks ||
                  (last->first.point < paused_point.size() && paused_point[last->first.point]);
    const FlowId3 id{first->first.src, first->first.dst, first->first.dst_qpn};
    if (!candidate && !marked.count(id)) {
      first = last;
      continue;
    }
    for (; first != last; ++first) {
      const auto& [k, s] = *first;
      FlowFinding& f = at(k.src, k.dst, k.dst_qpn);
      points[id].push_back(k.point);
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
  }
  std::map<std::pair<FlowId3, PointId>, std::optional<uint8_t>> priority;  // per flow and point
  for (const EcnRecord& e : congestion) {
    auto it = by_flow.find({e.src, e.dst, e.dst_qpn});
    if (it == by_flow.end()) continue;  // not a message flow (no data packets: ACKs, CNPs)
    priority[{it->first, e.point}] = e.priority;
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
      if (!p.pause_frames || std::find(seen.begin(), seen.end(), p.point) == seen.end()) continue;
      const auto prio = priority.find({key, p.point});
      if (prio == priority.end() || !prio->second) f.pauses.push_back({p, false});  // untagged
      else if (*prio->second == p.priority) f.pauses.push_back({p, true});
      // else: a pause of another priority does not hold this flow's frames back
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
    for (const FlowFinding::Pause& p : f.pauses) n += p.pfc.pause_frames;
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

std::string flow_finding_verdict(const FlowFinding& f, const PointNamer& point_name,
                                 const CaptureDrops& capture_dropped) {
  std::string v;
  // A packet missing at the end of a hop may be the capture's loss there, not the network's.
  auto capture_caveat = [&](const PathRecord& hop) {
    const uint64_t n = capture_dropped ? capture_dropped(hop.to_point) : 0;
    if (n)
      v += " (or the capture does: it dropped " + std::to_string(n) + " packets at " + point_name(hop.to_point) + ")";
  };
  switch (f.kind) {
    case FlowFinding::Kind::kLoss:
      if (f.lossiest_hop) {
        const std::string where = point_name(f.lossiest_hop->from_point) + " and " +
                                  point_name(f.lossiest_hop->to_point);
        // A NAK asks for a resend after a loss: more NAKs than losses on the hops say the rest
        // were lost where no point saw them.
        v = "the network loses its packets";
        if (f.hop_lost >= f.naks) v += ", between " + where;
        else
          v += ", " + std::to_string(f.hop_lost) + " of its " + std::to_string(f.naks) + " NAKed losses between " + where +
               ", the others before its first observation point or after its last";
        capture_caveat(*f.lossiest_hop);
      } else if (f.peer_lossiest_hop) {
        // Nothing of its own lost between the points: the other direction's packets were (a READ
        // request lost has its response resent, an ACK lost its data).
        v = "the network loses its packets the other way: its queue pair's requests or acknowledgements, between " +
            point_name(f.peer_lossiest_hop->from_point) + " and " + point_name(f.peer_lossiest_hop->to_point);
        capture_caveat(*f.peer_lossiest_hop);
      } else if (f.has_hops) {
        v = "it is resent without a loss the capture locates: nothing of it or its queue pair was lost between the "
            "observation points (lost before the first or after the last, or resent after a timeout: a late ACK)";
      } else {
        v = "it retransmits (seen at one observation point: capture at more of its path to find where it loses packets)";
      }
      if (f.ce_share() >= kFlowCeShare || f.cnps_received) v += ", with congestion on its path (ECN marks, CNPs)";
      return v;
    case FlowFinding::Kind::kCongestion:
      return f.ce_share() >= kFlowCeShare ? "the network is congested on its path (ECN marks), nothing lost"
                                          : "its receiver tells its sender to slow down (CNPs), nothing lost";
    case FlowFinding::Kind::kPause:
      return f.pauses_matched()
                 ? "PFC pauses of its priority at the points it crosses may hold it back, nothing lost or marked"
                 : "PFC pauses at the points it crosses may hold it back (its frames carry no VLAN tag there, so the "
                   "pauses' priority could not be matched to its own), nothing lost or marked";
  }
  return v;
}

std::string flow_finding_evidence(const FlowFinding& f, const PointNamer& point_name) {
  std::string e;
  auto add = [&](const std::string& s) { e += (e.empty() ? "" : "; ") + s; };
  char b[256];
  if (f.retrans_packets || f.naks) {
    std::snprintf(b, sizeof b, "%s of its data packets retransmitted at %s", percent(f.retrans_share()).c_str(),
                  point_name(f.retrans_point).c_str());
    std::string s = b;
    if (f.naks && f.fnr) std::snprintf(b, sizeof b, ", %llu NAK%s (FNR %.4f)", (unsigned long long)f.naks, f.naks == 1 ? "" : "s", *f.fnr);
    else if (f.naks) std::snprintf(b, sizeof b, ", %llu NAK%s", (unsigned long long)f.naks, f.naks == 1 ? "" : "s");
    else std::snprintf(b, sizeof b, ", no NAK");
    add(s + b);
  }
  if (f.lossiest_hop) {
    const PathRecord& h = *f.lossiest_hop;
    std::snprintf(b, sizeof b, "lost on %s -> %s: %llu of %llu (%s)", point_name(h.from_point).c_str(),
                  point_name(h.to_point).c_str(), (unsigned long long)h.lost, (unsigned long long)h.packets,
                  percent(double(h.lost) / double(h.packets)).c_str());
    add(b);
  } else if (f.has_hops && f.kind == FlowFinding::Kind::kLoss) {
    add("none of its packets lost between the observation points");
  }
  if (!f.lossiest_hop && f.peer_lossiest_hop) {
    const PathRecord& h = *f.peer_lossiest_hop;
    std::snprintf(b, sizeof b, "%s > %s %s lost on %s -> %s: %llu of %llu (%s)", h.src.to_string().c_str(),
                  h.dst.to_string().c_str(), qpn_text(h.dst_qpn).c_str(), point_name(h.from_point).c_str(),
                  point_name(h.to_point).c_str(), (unsigned long long)h.lost, (unsigned long long)h.packets,
                  percent(double(h.lost) / double(h.packets)).c_str());
    add(b);
  }
  if (f.ce_packets) {
    std::snprintf(b, sizeof b, "CE-marked %s at %s (%llu of %llu packets)", percent(f.ce_share()).c_str(),
                  point_name(f.ce_point).c_str(), (unsigned long long)f.ce_packets, (unsigned long long)f.ce_of);
    add(b);
  }
  if (f.cnps_received)
    add("its sender was told to slow down " + (f.cnps_received == 1 ? std::string("once") : std::to_string(f.cnps_received) + " times") +
        " (CNPs)");
  for (const FlowFinding::Pause& pause : f.pauses) {
    const PfcRecord& p = pause.pfc;
    std::snprintf(b, sizeof b, "PFC pauses at %s (priority %u%s: %llu pause frames%s)", point_name(p.point).c_str(),
                  unsigned(p.priority), pause.matched ? ", its own" : ", its frames untagged there",
                  (unsigned long long)p.pause_frames, p.storm ? ", a storm" : "");
    add(b);
  }
  if (f.kind != FlowFinding::Kind::kLoss && !f.retrans_packets && !f.naks) add("no retransmission, no NAK");
  return e;
}

}  // namespace rdmatel
