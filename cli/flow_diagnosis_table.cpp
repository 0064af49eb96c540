// SPDX-License-Identifier: GPL-2.0-or-later
// analyze's answer for RDMA message flows: which flows stand out and what the capture shows
// on their path, from rdmatel/flow_diagnosis.h.
#include <cstdio>
#include <string>

#include "cli/tables.h"
#include "rdmatel/flow_diagnosis.h"
#include "rdmatel/names.h"

namespace rdmatel::cli {

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
  const PointNamer name = [&](PointId p) -> const std::string& { return engine.point_name(p); };
  const CaptureDrops dropped = [&](PointId p) { return p < engine.point_count() ? engine.point(p).capture_dropped : 0; };
  size_t n = 0;
  for (const FlowFinding& f : findings) {
    if (n == top) {
      out += "  (" + std::to_string(top) + " of " + std::to_string(findings.size()) +
             " flows shown; --top N shows more)\n";
      break;
    }
    out += "  " + std::to_string(++n) + ". " + f.src.to_string() + " > " + f.dst.to_string() + " " +
           qpn_text(f.dst_qpn) + ": " + flow_finding_verdict(f, name, dropped) + ".\n     " + flow_finding_evidence(f, name) + ".\n";
  }
  return out + "\n";
}

}  // namespace rdmatel::cli
