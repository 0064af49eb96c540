// SPDX-License-Identifier: GPL-2.0-or-later
// The network between the endpoints: a chain  compute-side endpoints — compute leaf —
// spine — storage leaf — storage-side endpoints, with 1-3 of those switch positions being
// observation points. Decides losses per link segment, stamps every packet copy at the
// points it passes, and finally merges the per-point streams into file order.
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
  std::string role;  // compute | fabric | storage
};

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
  int64_t t;      // true passage time (defines the point's packet order)
  int64_t stamp;  // what the capture records (t + jitter)
  uint32_t em;    // emission index
};

struct FabricConfig {
  int points = 2;                 // 1: compute leaf; 2: + storage leaf; 3: + spine
  double loss = 0.0;              // per packet, per link segment
  int64_t jitter_ns = 0;          // stamp noise, uniform in [-j, +j]
  int64_t link_gbps = 100;
  int64_t host_access_min = 1000, host_access_max = 3000;
  int64_t stor_access_min = 1000, stor_access_max = 3000;
  int64_t hop_min = 1000, hop_max = 10000;  // leaf<->spine, each of the two hops
};

class Fabric {
 public:
  Fabric(const FabricConfig& cfg, uint64_t seed);

  int add_endpoint(int side, const uint8_t ip[16], bool v6);
  const std::vector<PointInfo>& points() const { return points_; }
  void set_points(std::vector<PointInfo> p) { points_ = std::move(p); }
  int num_points() const { return cfg_.points; }
  // Number of loss segments on a path: before the first point, between points, after.
  int segments() const { return cfg_.points + 1; }

  // Puts a packet on the wire at `now` (or when the sender's NIC is free). Returns the
  // arrival time at the destination endpoint, or -1 when the packet was lost.
  // forced_seg >= 0 loses this copy on that segment; no_loss exempts it from random loss.
  int64_t transmit(Emission e, int64_t now, int forced_seg, bool no_loss, uint32_t wire_len);

  std::vector<Emission> emissions;
  std::vector<Endpoint> endpoints;
  std::vector<std::vector<Obs>> obs;  // per point, in creation order until finalize()

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
  };
  PairDelay& pair_delay(int a, int b);

  FabricConfig cfg_;
  std::vector<PointInfo> points_;
  Rng rng_delay_, rng_loss_, rng_jitter_, rng_var_;
  std::map<std::pair<int, int>, PairDelay> pair_delays_;
  // FIFO per directed endpoint pair: last true time at each position (3 leaves + dest).
  std::map<std::pair<int, int>, std::array<int64_t, 4>> last_at_;
};

}  // namespace synth
