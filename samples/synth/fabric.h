// SPDX-License-Identifier: GPL-2.0-or-later
// The network between the endpoints: a chain  side-0 endpoints — leaf A — spine — leaf B —
// side-1 endpoints. Leaf A and leaf B each have a host-facing port and an uplink port; 1-5
// of the five switch positions are observation points. Decides losses per link segment,
// stamps every packet copy at the points it passes (with each point's own clock offset),
// gives the IP TTL each point sees, and finally merges the per-point streams into file order.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "common.h"
#include "packet_encoder.h"

namespace synth {

struct PointInfo {
  std::string name;
  std::string role;  // compute | fabric | storage | mixed (--cross: compute side of some I/Os, storage of others)
};

// Switch positions along the chain, in side-0 -> side-1 order.
enum Pos : int { kLeafAHost = 0, kLeafAUp = 1, kSpine = 2, kLeafBUp = 3, kLeafBHost = 4, kNumPos = 5 };

struct Endpoint {
  EndpointWire wire{};
  int side = 0;            // 0: behind the compute leaf, 1: behind the storage leaf
  int64_t access_ns = 0;   // endpoint <-> its leaf, one way
  int64_t nic_free = 0;    // NIC egress busy until (serialisation)
  uint16_t ip_id = 0;
  uint16_t cm_port = 0;    // UDP source port of its QP1 (RDMA CM)
  uint32_t qp1_psn = 0;
  std::string ip_str;
};

// One sighting of a packet copy at a point.
struct Obs {
  int64_t t;      // true passage time (the point's passage order = its file order)
  int64_t stamp;  // what the capture records: t + jitter + the point's clock offset
  uint32_t em;    // emission index
  uint8_t ce = 0;  // the copy is marked congestion experienced here (--ecn-mark)
};

struct FabricConfig {
  int points = 2;                 // 1: leaf A; 2: + leaf B; 3: + spine; 4: + leaf A uplink; 5: + leaf B uplink
  double loss = 0.0;              // per packet, per lossy link segment
  int64_t jitter_ns = 0;          // stamp noise, uniform in [-j, +j]
  int64_t link_gbps = 100;
  int64_t host_access_min = 1000, host_access_max = 3000;
  int64_t stor_access_min = 1000, stor_access_max = 3000;
  int64_t hop_min = 1000, hop_max = 10000;   // leaf<->spine, each of the two hops
  int64_t switch_min = 300, switch_max = 900;  // host port <-> uplink port of one leaf (points >= 4)
  std::vector<int64_t> clock_offset_ns;      // per point id: added to every stamp there
  bool routed = false;                       // TTL / hop limit decremented by every switch
  // --drop-between A:B=RATE: a packet that passed point A is lost with probability RATE just
  // before it reaches point B (only in the direction A -> B; points by id).
  struct Drop {
    int from = -1, to = -1;
    double rate = 0;
  };
  std::vector<Drop> drops;
  // --ecn-mark A:B=RATE: a packet that passed point A is marked congestion experienced (ECN
  // 11) with probability RATE on its way to point B, and stays marked from B on.
  std::vector<Drop> marks;
};

class Fabric {
 public:
  Fabric(const FabricConfig& cfg, uint64_t seed);

  int add_endpoint(int side, const uint8_t ip[16], bool v6);
  // A faulty path between two endpoints (both directions): extra delay on the leaf-spine hop
  // and extra loss per lossy segment.
  void set_path_fault(int host_ep, int stor_ep, int64_t extra_ns, double loss);
  const std::vector<PointInfo>& points() const { return points_; }
  void set_points(std::vector<PointInfo> p) { points_ = std::move(p); }
  int num_points() const { return cfg_.points; }
  // Number of lossy segments on a path: before the first point, between consecutive points
  // (except two ports of one switch: nothing is lost inside a switch), after the last one.
  // Segment k (what forced_seg names) is the k-th lossy one in the packet's direction.
  int segments() const { return static_cast<int>(lossy_[0].size()); }
  // The point on the host-facing port of the leaf behind which endpoints of `side` sit
  // (side 0: leaf A, always point 0; side 1: leaf B, -1 with a single point).
  int host_port_point(int side) const { return pos_point_[side == 0 ? kLeafAHost : kLeafBHost]; }
  int64_t clock_offset(size_t point) const { return cfg_.clock_offset_ns[point]; }
  bool routed() const { return cfg_.routed; }
  // IPv4 TTL / IPv6 hop limit of emission `e` as point `point` records it (64 unrouted).
  uint8_t ttl_at(size_t point, const Emission& e) const;

  // Puts a packet on the wire at `now` (or when the sender's NIC is free). Returns the
  // arrival time at the destination endpoint, or -1 when the packet was lost.
  // forced_seg >= 0 loses this copy on that segment; no_loss exempts it from random loss.
  int64_t transmit(Emission e, int64_t now, int forced_seg, bool no_loss, uint32_t wire_len);

  std::vector<Emission> emissions;
  std::vector<Endpoint> endpoints;
  std::vector<std::vector<Obs>> obs;  // per point, in creation order until finalize()
  std::vector<PfcFrame> pfc_frames;   // what PFC_FRAME emissions carry

  // A PFC frame seen at `point` at true time `t` (stamped with the point's clock offset, no
  // jitter). The traffic is not paused by it: the frames are what a mirror shows.
  void add_pfc(int point, int64_t t, uint8_t enabled, const uint16_t (&quanta)[8]);

  // Sorts every point's sightings into passage order.
  void sort_points();
  // Drops sightings before `t0` (mid-stream capture start).
  void cut_before(int64_t t0);
  // File order: (point, index into obs[point]) per frame; frame number = position + 1.
  std::vector<std::pair<uint8_t, uint32_t>> file_order(bool blocks, uint64_t seed) const;

 private:
  int64_t ser_ns(uint32_t bytes) const { return (static_cast<int64_t>(bytes) + 20) * 8 / cfg_.link_gbps; }
  struct PairDelay {
    int64_t hop1, hop2;  // compute leaf <-> spine, spine <-> storage leaf
    double loss = 0;     // a path fault's extra loss
  };
  PairDelay& pair_delay(int a, int b);

  // One step of a path: reach switch position `pos` after `delay` + a per-packet variation
  // in [var_lo, var_hi] (+ serialisation when the packet crosses a link).
  enum Delay : uint8_t { kAccess, kHop1, kHop2, kSwitch };
  struct Stage {
    int pos;
    Delay delay;
    int64_t var_lo, var_hi;
    bool ser;
  };

  FabricConfig cfg_;
  std::vector<PointInfo> points_;
  int pos_point_[kNumPos];        // switch position -> point id, -1 when not observed
  std::vector<int> point_pos_;    // point id -> switch position
  std::vector<Stage> path_[2];    // [0]: side 0 -> side 1, [1]: side 1 -> side 0
  std::vector<int> lossy_[2];     // lossy segments per direction, as "points passed before"
  Rng rng_delay_, rng_loss_, rng_jitter_, rng_var_, rng_drop_;  // rng_drop_: only with --drop-between
  Rng rng_mark_;  // only with --ecn-mark
  std::map<std::pair<int, int>, PairDelay> pair_delays_;
  // FIFO per directed endpoint pair: last true time at each position (+ the destination).
  std::map<std::pair<int, int>, std::array<int64_t, kNumPos + 1>> last_at_;
};

}  // namespace synth
