// SPDX-License-Identifier: GPL-2.0-or-later
// State of NVMe queues and in-flight I/Os for the io_quality component.
//
// An I/O is an Entry, keyed by the identity of its command packet (queue, CID, command PSN: a
// resent copy carries the same PSN, a reused CID a new one). What each observation point saw of
// it is that point's Observation, filled only from that point's own packets in its own stamp
// order. Nothing in an Observation depends on another point's clock or on how the points'
// packets interleave in the input; the Entry joins the observations.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "engine/metrics/io_quality/slot_list.h"
#include "engine/src/core/roles.h"
#include "engine/src/decode/nvme_capsule.h"
#include "engine/src/decode/packet.h"
#include "engine/src/util/flat_map.h"
#include "engine/src/util/small_vector.h"
#include "rdmatel/types.h"

namespace rdmatel::io_quality {

/// Events of one I/O that carry a timestamp (SPEC §4 table).
enum Stage : uint8_t { kCommand = 0, kData, kReadRequest, kReadResponse, kCompletion, kStages };

/// What one observation point saw of one I/O: the first copy of each stage in its stamp order.
struct Observation {
  PointId point = kNoPoint;
  uint8_t mask = 0;
  /// The point saw the command and not yet the completion: the I/O is in this point's CID
  /// list, ordered by cid_order (when the point saw the command, among every command).
  bool in_cid_list = false;
  uint64_t cid_order = 0;
  std::array<TimeNs, kStages> ts{};
  std::array<uint64_t, kStages> frame{};
  std::array<uint32_t, kStages> psn{};
  TimeNs last = 0;  ///< latest packet of the I/O here, copies included
  int16_t ttl_command = -1, ttl_completion = -1;

  bool has(Stage s) const { return mask & (1u << s); }
};

struct Entry {
  uint64_t id = 0;  ///< 0 = free slot
  uint32_t slot = 0;  ///< its index in the pool: {slot, id} is its EntryRef, no lookup needed
  uint32_t queue = 0;
  uint16_t cid = 0;
  uint32_t cmd_psn = 0;
  uint8_t opcode = 0, fctype = 0;
  bool in_capsule = false;
  uint32_t length = 0;
  uint16_t status = 0;
  bool status_known = false;
  std::array<uint32_t, CapsuleSummary::kMaxKeys> keys{};
  uint8_t key_count = 0;
  /// Its links in the lists of I/Os by buffer key (IoQuality::by_key_), one per key (a key
  /// named twice uses the first one), and in its queue's `open` list.
  std::array<SlotLink, CapsuleSummary::kMaxKeys> key_link{};
  SlotLink open_link;
  /// The PSN of each stage's packet as the first point to see it recorded: lets a point that
  /// missed the command attach its copy of a later packet to the right I/O.
  std::array<uint32_t, kStages> stage_psn{};
  std::array<FlowId, kStages> stage_flow{};
  uint8_t stage_psn_mask = 0;
  /// In how many points' CID lists (in its queue's `open` while any): up to every point (65,536;
  /// in 8 bits it wrapped at a command seen at 257 points, which appended the I/O to its list
  /// again: a list that looped on itself, and every command hung).
  uint32_t cid_lists = 0;
  bool completed = false;  ///< some point saw the completion
  bool snapshot_made = false;  ///< frame notes: a provisional record of it was emitted
  bool in_completed_queue = false;
  PointId home = kNoPoint;  ///< the first point that saw it: its clock is the entry's reference
  TimeNs home_command = 0;  ///< the command's stamp there
  SmallVector<Observation, 3> obs;
  /// Up to this many observations a point's is found by reading them all; beyond, through
  /// obs_index. An I/O seen at thousands of points (a mirror of every port) read them all at
  /// every packet: 20,000 points took minutes.
  static constexpr size_t kUnindexedObservations = 8;
  struct PointHash {
    size_t operator()(PointId p) const noexcept { return p; }  // FlatMap mixes it
  };
  FlatMap<PointId, uint32_t, PointHash> obs_index;  ///< point -> index in obs (past 8 only)
  /// With more than kUnindexedObservations: the latest packet of the I/O at any point whose
  /// clock is related to home's, mapped into home's clock (IoQuality::settled's need), as of the
  /// clock relations' version `latest_version`. Kept up packet by packet while that version
  /// holds, rather than read off every observation at every drain the I/O waits in.
  mutable TimeNs latest_related = 0;
  mutable uint64_t latest_version = ~uint64_t(0);

  /// The index of key `k` (its first), or key_count.
  uint8_t key_index(uint32_t k) const {
    uint8_t i = 0;
    while (i < key_count && keys[i] != k) ++i;
    return i;
  }
  bool has_key(uint32_t k) const { return key_index(k) < key_count; }
  /// The point's observation (a new one at its first packet), its latest packet moved to `ts`.
  Observation& observe(PointId p, TimeNs ts) {
    if (Observation* o = at(p)) {
      o->last = std::max(o->last, ts);
      return *o;
    }
    if (obs.size() == kUnindexedObservations)
      for (uint32_t i = 0; i < obs.size(); ++i) obs_index[obs[i].point] = i;
    if (obs.size() >= kUnindexedObservations) obs_index[p] = uint32_t(obs.size());
    Observation& o = obs.emplace_back();
    o.point = p;
    o.last = ts;
    return o;
  }
  Observation* at(PointId p) {
    if (obs.size() > kUnindexedObservations) {
      const uint32_t* i = obs_index.find(p);
      return i ? &obs[*i] : nullptr;
    }
    for (auto& o : obs)
      if (o.point == p) return &o;
    return nullptr;
  }
  const Observation* at(PointId p) const { return const_cast<Entry*>(this)->at(p); }
};

/// An entry reference that survives the slot's reuse (compare ids).
struct EntryRef {
  uint32_t slot;
  uint64_t id;
};

inline EntryRef ref_of(const Entry& e) {
  return EntryRef{e.slot, e.id};
}

struct CidHash {
  size_t operator()(uint16_t cid) const noexcept { return cid; }  // FlatMap mixes it
};

/// One NVMe queue = one RDMA queue pair, keyed by its host→storage flow.
struct Queue {
  FlowId cmd_flow = kNoFlow;
  IpAddress host, storage;
  uint32_t qpn = 0;  ///< storage-side QPN
  uint32_t pair = 0;  ///< the number of (host, storage) among the queues' pairs
  NvmeQueueKind kind = NvmeQueueKind::kUnknown;
  bool confirmed = false;  ///< a completion matched one of its commands: it really is NVMe
  /// The host-side QPN once its flows are paired (a cache of the flow table's pairing, which is
  /// never undone).
  mutable std::optional<uint32_t> host_qpn;
  /// Its endpoints' role evidence and last sides, kept by the core's roles (a cache only: read
  /// and filled by the const steps that work out an I/O's record too).
  mutable Roles::PairMemo roles;
  /// By CID, its I/Os in some point's CID list (whose command a point saw and whose completion
  /// it has not): each point's list is its I/Os here in order of cid_order. As many as the
  /// queue has outstanding, and a few a lagging point has yet to see end.
  FlatMap<uint16_t, SlotList, CidHash> open;
  /// The points that saw commands of the queue (IoQuality::awaits_ranking), the first
  /// kMaxCommandPoints.
  static constexpr size_t kMaxCommandPoints = 16;
  SmallVector<PointId, 4> command_points;
};

}  // namespace rdmatel::io_quality
