// SPDX-License-Identifier: GPL-2.0-or-later
// congestion: ECN congestion-experienced marks and RoCEv2 CNPs (SPEC §6, first part): counted
// per flow and point, and noted on their frames.
#pragma once

#include <unordered_map>

#include "engine/src/core/component.h"

namespace rdmatel::congestion {

extern const ComponentSpec kSpec;

struct CongestionCounts {
  uint64_t ecn_ce = 0;
  uint64_t cnp = 0;
};

class Congestion final : public Component {
 public:
  explicit Congestion(Ctx&);
  void on_packet(const Packet& p, Ctx& ctx) override;
  void on_advance(PointId, Ctx&) override {}
  void finish(Ctx&) override {}
  /// Counts per (flow, point), keyed flow << 32 | point.
  const std::unordered_map<uint64_t, CongestionCounts>& counts() const { return counts_; }

 private:
  NoteKind note_ce_, note_cnp_;
  std::unordered_map<uint64_t, CongestionCounts> counts_;
};

}  // namespace rdmatel::congestion
