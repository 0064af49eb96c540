// SPDX-License-Identifier: GPL-2.0-or-later
// State of NVMe queues and in-flight I/Os for the io_quality plugin.
#pragma once

#include <array>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "engine/core/flow_table.h"
#include "engine/core/points.h"
#include "engine/decode/nvme_capsule.h"
#include "engine/util/ip_address.h"
#include "engine/util/time.h"

namespace rdmatel::io_quality {

/// Events of one I/O that carry a timestamp (SPEC §4 table).
enum Stage : uint8_t { kCommand = 0, kData, kReadRequest, kReadResponse, kCompletion, kStages };

/// What one observation point saw of one I/O: the first copy of each stage.
struct PointObs {
  PointId point = kNoPoint;
  uint8_t mask = 0;
  std::array<TimeNs, kStages> ts{};
  std::array<uint64_t, kStages> frame{};

  bool has(Stage s) const { return mask & (1u << s); }
};

struct Io {
  uint64_t id = 0;
  uint32_t queue = 0;  ///< index of its Queue
  uint16_t cid = 0;
  uint8_t opcode = 0;
  uint8_t fctype = 0;
  bool in_capsule = false;
  /// The r_keys of the host buffers the command names (one keyed SGL descriptor, or a list).
  static constexpr size_t kMaxKeys = 4;
  std::array<uint32_t, kMaxKeys> keys{};
  uint8_t key_count = 0;
  bool has_key(uint32_t k) const {
    for (uint8_t i = 0; i < key_count; ++i)
      if (keys[i] == k) return true;
    return false;
  }
  uint32_t length = 0;
  uint16_t status = 0;
  /// The PSN of each stage's packet: the identity of "the same packet" at every point.
  std::array<uint32_t, kStages> psn{};
  uint8_t psn_mask = 0;
  TimeNs first_ts = 0;  ///< min / max stamp over all observations
  TimeNs last_ts = 0;
  bool completion_seen = false;
  bool done = false;
  std::vector<PointObs> obs;

  bool has_psn(Stage s) const { return psn_mask & (1u << s); }
  void set_psn(Stage s, uint32_t v) {
    psn[s] = v;
    psn_mask |= uint8_t(1u << s);
  }
  const PointObs* at(PointId p) const {
    for (const auto& o : obs)
      if (o.point == p) return &o;
    return nullptr;
  }
  bool seen_at(PointId p, Stage s) const {
    const PointObs* o = at(p);
    return o && o->has(s);
  }
};

/// One NVMe queue = one RDMA queue pair, keyed by its host→storage flow.
struct Queue {
  FlowId cmd_flow = kNoFlow;
  IpAddress host, storage;
  uint32_t qpn = 0;  ///< storage-side QPN
  NvmeQueueKind kind = NvmeQueueKind::kUnknown;
  bool confirmed = false;  ///< a completion matched one of its commands: it really is NVMe
  std::unordered_map<uint16_t, std::vector<Io*>> by_cid;  ///< live I/Os, oldest first
};

/// (host, storage, 32-bit value) lookup key for SGL keys and READ REQUEST PSNs.
struct PairValueKey {
  IpAddress host, storage;
  uint32_t value = 0;
  friend bool operator==(const PairValueKey& a, const PairValueKey& b) {
    return a.value == b.value && a.host == b.host && a.storage == b.storage;
  }
};
struct PairValueKeyHash {
  size_t operator()(const PairValueKey& k) const noexcept {
    return hash_mix(hash_ip(k.host) * 31 + hash_ip(k.storage) * 7 + k.value);
  }
};

}  // namespace rdmatel::io_quality
