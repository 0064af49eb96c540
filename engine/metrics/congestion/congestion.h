// SPDX-License-Identifier: GPL-2.0-or-later
// congestion: ECN marks and CNPs per flow and point, and 802.1Qbb priority flow control per
// point and priority (pauses, resumes, pause time at the link speed, storms). Each count is of
// one point's packets; nothing compares the clocks of two points. The records are final at the
// end of the capture; each --period of a point's time the ones that changed are also emitted as
// provisional snapshots (every writer skips them; live mode's Prometheus counters follow them).
#pragma once

#include <cstdint>
#include <map>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "engine/src/core/component.h"
#include "engine/src/util/flat_map.h"
#include "rdmatel/records.h"

namespace rdmatel::congestion {

extern const ComponentSpec kSpec;

class Congestion final : public Component {
 public:
  explicit Congestion(Ctx&);
  void on_packet(const Packet& p, Ctx& ctx) override;
  void on_advance(PointId point, Ctx& ctx) override;
  void finish(Ctx& ctx) override;

 private:
  struct FlowEntry {
    EcnRecord rec;
    FlowId flow = kNoFlow;  ///< kNoFlow: no packet yet
    bool dirty = false;     ///< changed since the last snapshot
  };
  struct PriorityState {
    PfcRecord rec;
    bool dirty = false;
    bool paused = false;
    TimeNs pause_start = 0, paused_until = 0;
    uint64_t pause_frame = 0;  ///< the frame that began the current pause
  };
  void on_roce(const Packet& p, Ctx& ctx);
  void on_pfc(const Packet& p, Ctx& ctx);
  void count_cnp(const EcnRecord& flow, const Packet& p);
  void end_pause(PriorityState& s, Ctx& ctx);
  /// Pause times' speed: --point-speed, else the capture's if_speed, else --link-speed.
  uint64_t speed_of(PointId point, const Ctx& ctx);

  NoteKind note_ce_, note_cnp_, note_pfc_, note_storm_;
  DurationNs storm_;
  uint64_t default_speed_bps_;
  std::vector<std::string> speed_specs_;  ///< --point-speed NAME=GBPS as given
  static constexpr uint64_t kUnresolved = ~0ull;
  std::vector<uint64_t> given_speed_;     ///< per point: its --point-speed in bit/s, 0 for none
  std::vector<FlowEntry> flows_;  ///< by flow point (Packet::flow_point): every RoCE packet reads one
  std::unordered_map<uint64_t, PriorityState> pfc_;       ///< by point << 3 | priority
  struct CnpKey {
    IpAddress src, dst;
    PointId point;
    bool operator<(const CnpKey& o) const {
      return std::tie(src, dst, point) < std::tie(o.src, o.dst, o.point);
    }
  };
  struct CnpEntry {
    CnpRecord rec;
    bool dirty = false;
  };
  std::map<CnpKey, CnpEntry> cnp_pairs_;  ///< CNPs are rare (a few per congested flow per 50 µs)
  std::vector<const CnpRecord*> cnp_order_;  ///< first seen first
  // Snapshots: per point, what changed since its last one and when the next is due.
  struct Changed {
    std::vector<FlowPointId> flows;  ///< of flows_
    std::vector<uint64_t> pfc;       ///< keys of pfc_
    std::vector<CnpEntry*> cnps;
    TimeNs next = kTimeMin;  ///< kTimeMin: not scheduled yet
  };
  std::vector<Changed> changed_;
  DurationNs period_;
  Changed& changed(PointId point);
};

}  // namespace rdmatel::congestion
