// SPDX-License-Identifier: GPL-2.0-or-later
// RDMA flows (source IP, destination IP, destination QPN) and the pairing of the two directions
// of one queue pair. The two directions carry different QPNs, so a flow's reverse direction is
// learned from what the capture shows:
//  - a responder echoes the requester's PSN: an ACK/NAK, READ RESPONSE or ATOMIC ACK on B→A
//    carrying PSN p matches the A→B flows whose recent request PSNs contain p. The candidates
//    of successive echoes are intersected; the pair is made when one remains and either two
//    echoes agree or the echo is exactly that flow's newest request PSN (QPs whose PSN ranges
//    overlap, which random initial PSNs make rare, thus need more evidence);
//  - metric components add evidence of their own (e.g. NVMe completions matched by CID or IETH
//    key) through propose_pair(): it takes effect once every component has handled the packet
//    that gave it, so no component sees the pairing change under it and the registry order
//    never changes a result.
// The first consistent evidence wins; conflicting evidence is counted, never applied.
#pragma once

#include <array>
#include <cstring>
#include <cstdint>
#include <deque>
#include <unordered_map>
#include <vector>

#include "engine/src/decode/packet.h"
#include "engine/src/util/flat_map.h"
#include "engine/src/util/small_vector.h"
#include "engine/src/util/word_hash.h"
#include "rdmatel/types.h"

namespace rdmatel {

struct FlowKey {
  IpAddress src, dst;
  uint32_t dst_qpn = 0;
  friend bool operator==(const FlowKey& a, const FlowKey& b) {
    return a.dst_qpn == b.dst_qpn && a.src == b.src && a.dst == b.dst;
  }
};

struct FlowKeyHash {
  size_t operator()(const FlowKey& k) const noexcept {
    return hash_mix(hash_ip(k.src) * 31 + hash_ip(k.dst) + k.dst_qpn);
  }
};

struct Flow {
  FlowId id = kNoFlow;
  FlowKey key;
  /// FlowKeyHash of the key, worked out once: it orders a point's packets of one stamp by flow
  /// (Packet::order_key), every packet.
  uint64_t key_hash = 0;
  FlowId peer = kNoFlow;  ///< the reverse direction of the same queue pair, once learned
  bool requests_seen = false;
  uint32_t req_first_psn = 0;  ///< first and newest request PSNs (for pairing by echoed PSN)
  uint32_t req_newest_psn = 0;
  uint64_t packets = 0;
  /// The points that saw it and its flow-point ids there (FlowTable::flow_point): the first
  /// kScannedPoints, looked through per packet (a flow crosses a few points).
  struct AtPoint {
    PointId point;
    FlowPointId id;
  };
  SmallVector<AtPoint, 2> points;
};

/// A change of the flow table that a replica on another thread must make too (threads > 1):
/// a flow created (its id and key), or two flows paired.
struct FlowFact {
  enum class Kind : uint8_t { kCreated, kPaired };
  Kind kind;
  FlowId a, b = kNoFlow;  ///< kCreated: the new flow in a; kPaired: the two flows
  FlowKey key;            ///< kCreated
};

struct FlowTableStats {
  uint64_t pairs_learned = 0;
  uint64_t pair_conflicts = 0;
  uint64_t flows_refused = 0;  ///< new flows not tracked because max_flows was reached
  uint64_t flow_points_refused = 0;  ///< packets of a flow at a point new to it, refused likewise
};

class FlowTable {
 public:
  explicit FlowTable(size_t max_flows) : max_flows_(max_flows) {}

  /// The flow of a decoded RoCE packet, created on first sight; nullptr at the flow limit.
  /// `max_flows` bounds flow-points, a flow once per point that saw it (what most state is kept
  /// per): a flow seen at 32 points takes 32, so the limit bounds memory whatever the number of
  /// points (100,000 queue pairs seen at 32 points each took 10 GB within the limit of flows).
  Flow* get(const RoceFrame& pkt);
  Flow* find(const FlowKey& key);
  const Flow* find(const FlowKey& key) const;
  Flow& operator[](FlowId id) { return *by_id_[id]; }
  const Flow& operator[](FlowId id) const { return *by_id_[id]; }
  size_t size() const { return by_id_.size(); }

  /// The id of `flow` at `point`, numbered on first sight; kNoFlowPoint once max_flows
  /// flow-points are numbered. Per packet: a flow's own few points are looked through, a table
  /// only for a flow seen at more than kScannedPoints.
  FlowPointId flow_point(Flow& flow, PointId point) {
    for (const Flow::AtPoint& a : flow.points)
      if (a.point == point) return a.id;
    return add_flow_point(flow, point);
  }
  /// How many flow-point ids there are (each < this).
  size_t flow_point_count() const { return flow_points_.size(); }
  /// The flow and point of a flow-point id.
  std::pair<FlowId, PointId> flow_point_of(FlowPointId id) const { return flow_points_[id]; }

  /// Learns from one packet of `flow` (request PSN span, echoed-PSN pairing).
  void observe(Flow& flow, const PacketHeaders& pkt);

  /// Records that `a` and `b` are the two directions of one queue pair. Returns false (and
  /// counts a conflict) when either is already paired with another flow.
  bool pair(Flow& a, Flow& b);
  /// Evidence from a component that `a` and `b` are one queue pair, applied by apply_proposals()
  /// after the current packet.
  void propose_pair(FlowId a, FlowId b) { proposals_.emplace_back(a, b); }
  void apply_proposals() {
    if (!proposals_.empty()) apply_proposals_now();  // every packet asks; almost none has any
  }

  /// Flows from `src` to `dst` (all QPNs).
  const std::vector<FlowId>& between(const IpAddress& src, const IpAddress& dst) const;
  /// Whether the PSNs echoed so far by unpaired `responder` (its ACKs, NAKs, READ responses) may
  /// be requests of `requester`, the one flow of its kind that could be its reverse.
  bool echoes_point_to(FlowId responder, FlowId requester) const;

  const FlowTableStats& stats() const { return stats_; }

  /// From now on every flow created and every pair made is also appended to `journal` (the
  /// engine hands them to the pair-local components' thread, which keeps a replica).
  void keep_journal(std::vector<FlowFact>* journal) { journal_ = journal; }
  /// A replica's side of the journal: the flow the original created, with the same id (ids come
  /// in order), and a pair the original made.
  void replicate(const FlowFact& fact);

 private:
  void learn_from_echo(Flow& responder_flow, uint32_t psn, bool nak);
  /// `taken` was just paired: responders whose echoes fitted it and one other flow get the other.
  void settle_rivals(const Flow& taken);
  void apply_proposals_now();
  FlowPointId add_flow_point(Flow& flow, PointId point);
  FlowPointId refuse_flow_point() {
    ++stats_.flow_points_refused;
    return kNoFlowPoint;
  }

  static constexpr size_t kScannedPoints = 8;
  std::vector<std::pair<FlowId, PointId>> flow_points_;  ///< by flow-point id
  struct FlowPointKeyHash {
    uint64_t operator()(uint64_t k) const { return hash_mix(k); }
  };
  /// (flow << 32 | point) of flows seen at more than kScannedPoints points, beyond those.
  FlatMap<uint64_t, FlowPointId, FlowPointKeyHash> far_points_;

  /// Candidates so far for an unpaired responder flow.
  struct Tally {
    std::vector<FlowId> candidates;
    uint32_t echoes = 0;
  };
  std::unordered_map<FlowId, Tally> tallies_;

  size_t max_flows_;
  std::vector<std::pair<FlowId, FlowId>> proposals_;
  std::deque<Flow> flows_;  ///< owns them (stable addresses)
  /// Each flow by id: read for every packet by the core and most components, where a deque's
  /// index walks its block map (a division and two loads).
  std::vector<Flow*> by_id_;
  Flow& add_flow() { return *by_id_.emplace_back(&flows_.emplace_back()); }
  /// Direct-mapped cache in front of the hash map: a few flows carry most packets. It holds the
  /// flows themselves (a deque's elements stay where they are), not ids to look up again.
  static constexpr size_t kCacheSize = 1024;
  std::array<Flow*, kCacheSize> cache_{};
  static size_t cache_slot(const IpAddress& src, const IpAddress& dst, uint32_t dst_qpn) {
    uint32_t a, b;
    std::memcpy(&a, src.bytes.data() + (src.v6 ? 12 : 0), 4);
    std::memcpy(&b, dst.bytes.data() + (dst.v6 ? 12 : 0), 4);
    uint64_t h = (uint64_t(a) * 0x9E3779B97F4A7C15ULL) ^ (uint64_t(b) * 0xC2B2AE3D27D4EB4FULL) ^
                 (uint64_t(dst_qpn) * 0x165667B19E3779F9ULL);
    return size_t(h >> 54) & (kCacheSize - 1);
  }
  /// The flow in cache slot `slot` (cache_slot of the key) when it is the key's, else nullptr.
  Flow* cached(size_t slot, const IpAddress& src, const IpAddress& dst, uint32_t dst_qpn) const {
    Flow* f = cache_[slot];
    return f && f->key.dst_qpn == dst_qpn && f->key.src == src && f->key.dst == dst ? f : nullptr;
  }
  /// Flat (flow_table lookups missed the cache for most packets with thousands of flows, and
  /// std::unordered_map chased a node per lookup).
  FlatMap<FlowKey, FlowId, FlowKeyHash> index_;
  std::unordered_map<IpPair, std::vector<FlowId>, IpPairHash> by_pair_;
  FlowTableStats stats_;
  const std::vector<FlowId> empty_;
  std::vector<FlowFact>* journal_ = nullptr;
};

}  // namespace rdmatel
