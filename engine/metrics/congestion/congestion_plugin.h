// SPDX-License-Identifier: GPL-2.0-or-later
// congestion: ECN congestion-experienced marks and RoCEv2 CNPs (SPEC §6, first part): counted
// per flow and point, and noted on their frames.
#pragma once

#include <unordered_map>

#include "engine/core/metric_plugin.h"

namespace rdmatel::congestion {

struct CongestionCounts {
  uint64_t ecn_ce = 0;
  uint64_t cnp = 0;
};

class CongestionPlugin final : public MetricPlugin {
 public:
  explicit CongestionPlugin(const EngineConfig& cfg) : cfg_(cfg) {}
  const char* name() const override { return "congestion"; }
  void on_packet(EngineContext& ctx, const PacketContext& p) override;
  void on_housekeeping(EngineContext&) override {}
  void finish(EngineContext&) override {}
  /// Counts per (flow, point), keyed flow << 32 | point.
  const std::unordered_map<uint64_t, CongestionCounts>& counts() const { return counts_; }

 private:
  const EngineConfig& cfg_;
  std::unordered_map<uint64_t, CongestionCounts> counts_;
};

}  // namespace rdmatel::congestion
