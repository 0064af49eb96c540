// SPDX-License-Identifier: GPL-2.0-or-later
// analyze's answer for RDMA message flows: which flows stand out and what the capture shows
// on their path, from rdmatel/flow_diagnosis.h.
#include <cstdio>
#include <string>

#include "cli/tables.h"
#include "rdmatel/flow_diagnosis.h"
#include "rdmatel/names.h"

namespace rdmatel::cli {
namespace {

std::string percent(double share) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1f %%", share * 100.0);
  return b;
}

std::string verdict(const FlowFinding& f, const Engine& engine) {
  std::string v;
  switch (f.kind) {
    case FlowFinding::Kind::kLoss:
      if (f.lossiest_hop) {
        const std::string where = engine.point_name(f.lossiest_hop->from_point) + " and " +
                                  engine.point_name(f.lossiest_hop->to_point);
        // A NAK asks for a resend after a loss: more NAKs than losses on the hops say the rest
        // were lost where no point saw them.
        v = "the network loses its packets";
        if (f.hop_lost >= f.naks) v += ", between " + where;
        else
          v += ", " + std::to_string(f.hop_lost) + " of its " + std::to_string(f.naks) + " NAKed losses between " + where +
               ", the others before its first observation point or after its last";
      } else if (f.peer_lossiest_hop) {
        // Nothing of its own lost between the points: the other direction's packets were (a READ
        // request lost has its response resent, an ACK lost its data).
        v = "the network loses its packets the other way: its queue pair's requests or acknowledgements, between " +
            engine.point_name(f.peer_lossiest_hop->from_point) + " and " + engine.point_name(f.peer_lossiest_hop->to_point);
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
      return "PFC pauses at the points it crosses may hold it back (the pauses' priority is not matched to the "
             "flow's), nothing lost or marked";
  }
  return v;
}

std::string evidence(const FlowFinding& f, const Engine& engine) {
  std::string e;
  auto add = [&](const std::string& s) { e += (e.empty() ? "" : "; ") + s; };
  char b[256];
  if (f.retrans_packets || f.naks) {
    std::snprintf(b, sizeof b, "%s of its data packets retransmitted at %s", percent(f.retrans_share()).c_str(),
                  engine.point_name(f.retrans_point).c_str());
    std::string s = b;
    if (f.naks && f.fnr) std::snprintf(b, sizeof b, ", %llu NAK%s (FNR %.4f)", (unsigned long long)f.naks, f.naks == 1 ? "" : "s", *f.fnr);
    else if (f.naks) std::snprintf(b, sizeof b, ", %llu NAK%s", (unsigned long long)f.naks, f.naks == 1 ? "" : "s");
    else std::snprintf(b, sizeof b, ", no NAK");
    add(s + b);
  }
  if (f.lossiest_hop) {
    const PathRecord& h = *f.lossiest_hop;
    std::snprintf(b, sizeof b, "lost on %s -> %s: %llu of %llu (%s)", engine.point_name(h.from_point).c_str(),
                  engine.point_name(h.to_point).c_str(), (unsigned long long)h.lost, (unsigned long long)h.packets,
                  percent(double(h.lost) / double(h.packets)).c_str());
    add(b);
  } else if (f.has_hops && f.kind == FlowFinding::Kind::kLoss) {
    add("none of its packets lost between the observation points");
  }
  if (!f.lossiest_hop && f.peer_lossiest_hop) {
    const PathRecord& h = *f.peer_lossiest_hop;
    std::snprintf(b, sizeof b, "%s > %s %s lost on %s -> %s: %llu of %llu (%s)", h.src.to_string().c_str(),
                  h.dst.to_string().c_str(), qpn_text(h.dst_qpn).c_str(), engine.point_name(h.from_point).c_str(),
                  engine.point_name(h.to_point).c_str(), (unsigned long long)h.lost, (unsigned long long)h.packets,
                  percent(double(h.lost) / double(h.packets)).c_str());
    add(b);
  }
  if (f.ce_packets) {
    std::snprintf(b, sizeof b, "CE-marked %s at %s (%llu of %llu packets)", percent(f.ce_share()).c_str(),
                  engine.point_name(f.ce_point).c_str(), (unsigned long long)f.ce_packets, (unsigned long long)f.ce_of);
    add(b);
  }
  if (f.cnps_received)
    add("its sender was told to slow down " + (f.cnps_received == 1 ? std::string("once") : std::to_string(f.cnps_received) + " times") +
        " (CNPs)");
  for (const PfcRecord& p : f.pauses) {
    std::snprintf(b, sizeof b, "PFC pauses at %s (priority %u: %llu pause frames%s)", engine.point_name(p.point).c_str(),
                  unsigned(p.priority), (unsigned long long)p.pause_frames, p.storm ? ", a storm" : "");
    add(b);
  }
  if (f.kind != FlowFinding::Kind::kLoss && !f.retrans_packets && !f.naks) add("no retransmission, no NAK");
  return e;
}

}  // namespace

std::string render_flow_diagnosis(const FlowReport& flows, const std::vector<EcnRecord>& congestion,
                                  const std::vector<PfcRecord>& pfc, const std::vector<PathRecord>& hops,
                                  const Engine& engine, size_t top) {
  if (flows.flows().empty()) return "";
  const std::vector<FlowFinding> findings =
      find_flow_findings(flows, congestion, pfc, hops, [&](const IpAddress& s, const IpAddress& d, uint32_t q) {
        return engine.sending_qpn(s, d, q);
      });
  std::string out = "Diagnosis: RDMA message flows\n";
  if (findings.empty()) {
    char b[256];
    std::snprintf(b, sizeof b,
                  "  Nothing stands out: no flow retransmits %.0f %% of its packets or more, is CE-marked (%.0f %%), "
                  "told to slow down or paused by PFC.\n\n",
                  kFlowLossShare * 100, kFlowCeShare * 100);
    return out + b;
  }
  size_t n = 0;
  for (const FlowFinding& f : findings) {
    if (n == top) {
      out += "  (" + std::to_string(top) + " of " + std::to_string(findings.size()) +
             " flows shown; --top N shows more)\n";
      break;
    }
    out += "  " + std::to_string(++n) + ". " + f.src.to_string() + " > " + f.dst.to_string() + " " +
           qpn_text(f.dst_qpn) + ": " + verdict(f, engine) + ".\n     " + evidence(f, engine) + ".\n";
  }
  return out + "\n";
}

}  // namespace rdmatel::cli
