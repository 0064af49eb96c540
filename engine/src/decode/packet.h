// SPDX-License-Identifier: GPL-2.0-or-later
// A frame decoded once, statelessly, into everything the metric components read: the RoCEv2
// headers, the NVMe capsule summary where a SEND carries one, and where it was seen. It owns no
// bytes, so it can wait in a point's reorder buffer after the frame's bytes are gone.
#pragma once

#include <cstdint>

#include "engine/src/decode/nvme_capsule.h"
#include "engine/src/decode/roce_frame.h"
#include "rdmatel/types.h"

namespace rdmatel {

using FlowId = uint32_t;
inline constexpr FlowId kNoFlow = 0xFFFFFFFF;

/// What a SEND's payload looks like, decided from its bytes alone (the component decides from
/// state whether the queue pair really carries NVMe).
enum class CapsuleKind : uint8_t {
  kNone,        ///< not a SEND FIRST/ONLY, or too little captured to tell
  kCommand,     ///< a valid SQE at the start of the payload
  kCompletion,  ///< a SEND ONLY of exactly 16 bytes: a CQE
  kOther,       ///< a SEND FIRST/ONLY that is neither (another protocol, or a broken capsule)
};

struct CapsuleSummary {
  CapsuleKind kind = CapsuleKind::kNone;
  NvmeSqe sqe;  ///< kCommand
  NvmeCqe cqe;  ///< kCompletion
  /// kCommand: the r_keys of the host buffers the command names (the SQE's keyed SGL, or the
  /// keyed descriptors of an SGL list carried in the capsule).
  static constexpr size_t kMaxKeys = 4;
  uint32_t keys[kMaxKeys] = {};
  uint8_t key_count = 0;
};

struct Packet {
  uint64_t frame = 0;
  TimeNs ts = 0;
  PointId point = kNoPoint;
  uint32_t seq = 0;       ///< arrival order at the engine (the last tie-breaker)
  uint64_t order_key = 0; ///< orders packets with equal stamps: flow key hash, then PSN
  uint32_t wire_len = 0;  ///< frame length on the wire
  FlowId flow = kNoFlow;  ///< RoCE packets: (src IP, dst IP, dst QPN), from the flow table
  RoceFrame roce;         ///< kind tells RoCE from PFC
  CapsuleSummary capsule;

  bool is_roce() const { return roce.kind == FrameKind::kRoce; }
  bool is_pfc() const { return roce.kind == FrameKind::kPfc; }
};

/// Fills `capsule` from a decoded RoCE packet's captured payload bytes.
void summarize_capsule(const RoceFrame& roce, const uint8_t* frame, CapsuleSummary& capsule);

}  // namespace rdmatel
