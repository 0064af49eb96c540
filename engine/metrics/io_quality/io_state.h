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
#include <vector>

#include "engine/src/core/roles.h"
#include "engine/src/decode/nvme_capsule.h"
#include "engine/src/decode/packet.h"
#include "engine/src/util/small_vector.h"
#include "rdmatel/types.h"

namespace rdmatel::io_quality {

/// Events of one I/O that carry a timestamp (SPEC §4 table).
enum Stage : uint8_t { kCommand = 0, kData, kReadRequest, kReadResponse, kCompletion, kStages };

/// What one observation point saw of one I/O: the first copy of each stage in its stamp order.
struct Observation {
  PointId point = kNoPoint;
  uint8_t mask = 0;
  /// The I/O is in this point's CID list (IoQuality::open_): its release looks only there.
  bool in_cid_list = false;
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
  /// The PSN of each stage's packet as the first point to see it recorded: lets a point that
  /// missed the command attach its copy of a later packet to the right I/O.
  std::array<uint32_t, kStages> stage_psn{};
  std::array<FlowId, kStages> stage_flow{};
  uint8_t stage_psn_mask = 0;
  bool completed = false;  ///< some point saw the completion
  bool in_completed_queue = false;
  PointId home = kNoPoint;  ///< the first point that saw it: its clock is the entry's reference
  TimeNs home_command = 0;  ///< the command's stamp there
  SmallVector<Observation, 3> obs;

  bool has_key(uint32_t k) const {
    for (uint8_t i = 0; i < key_count; ++i)
      if (keys[i] == k) return true;
    return false;
  }
  /// The point's observation (a new one at its first packet), its latest packet moved to `ts`.
  Observation& observe(PointId p, TimeNs ts) {
    for (Observation& o : obs)
      if (o.point == p) {
        o.last = std::max(o.last, ts);
        return o;
      }
    Observation& o = obs.emplace_back();
    o.point = p;
    o.last = ts;
    return o;
  }
  Observation* at(PointId p) {
    for (auto& o : obs)
      if (o.point == p) return &o;
    return nullptr;
  }
  const Observation* at(PointId p) const {
    for (const auto& o : obs)
      if (o.point == p) return &o;
    return nullptr;
  }
};

/// One NVMe queue = one RDMA queue pair, keyed by its host→storage flow.
struct Queue {
  FlowId cmd_flow = kNoFlow;
  IpAddress host, storage;
  uint32_t qpn = 0;  ///< storage-side QPN
  uint32_t pair = 0;  ///< the number of (host, storage) among the queues' pairs
  NvmeQueueKind kind = NvmeQueueKind::kUnknown;
  bool confirmed = false;  ///< a completion matched one of its commands: it really is NVMe
  /// Its endpoints' role evidence and last sides, kept by the core's roles (a cache only: read
  /// and filled by the const steps that work out an I/O's record too).
  mutable Roles::PairMemo roles;
};

/// An entry reference that survives the slot's reuse (compare ids).
struct EntryRef {
  uint32_t slot;
  uint64_t id;
};

inline EntryRef ref_of(const Entry& e) { return EntryRef{e.slot, e.id}; }

}  // namespace rdmatel::io_quality
