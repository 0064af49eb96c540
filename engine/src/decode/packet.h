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
/// A flow at one observation point, numbered densely by the core in the order they first carry a
/// packet (FlowTable::flow_point): per-flow-and-point state is an array indexed by it, not a table
/// looked up by (flow, point) for every packet.
using FlowPointId = uint32_t;
inline constexpr FlowPointId kNoFlowPoint = 0xFFFFFFFF;

/// What a SEND's payload looks like, decided from its bytes alone (the component decides from
/// state whether the queue pair really carries NVMe).
enum class CapsuleKind : uint8_t {
  kNone,        ///< not a SEND FIRST/ONLY, or too little captured to tell
  kCommand,     ///< a valid SQE at the start of the payload
  kCompletion,  ///< a SEND ONLY of exactly 16 bytes: a CQE
  kOther,       ///< a SEND FIRST/ONLY that is neither (another protocol, or a broken capsule)
};

/// What a component needs of a capsule: the SQE's or the CQE's fields, compactly (every
/// buffered packet carries one).
struct CapsuleSummary {
  CapsuleKind kind = CapsuleKind::kNone;
  uint8_t opcode = 0;  ///< command: NVMe opcode
  uint8_t fctype = 0;  ///< command: fabrics command type (opcode 0x7F)
  bool in_capsule : 1 = false;            ///< command: data in the capsule (offset SGL)
  bool connect_qid_captured : 1 = false;  ///< command: a Connect whose QID was captured
  bool status_captured : 1 = false;       ///< completion: the status bytes were captured
  /// command: its NSID is 0 or 0xFFFFFFFF (no namespace, or all of them), which a read or write
  /// never has and a Get Log Page (the admin opcode 0x02, an I/O queue's read) has
  bool no_namespace : 1 = false;
  /// Command: the r_keys of the host buffers it names (the SQE's keyed SGL, or the keyed
  /// descriptors of an SGL list carried in the capsule).
  static constexpr size_t kMaxKeys = 4;
  uint8_t key_count = 0;
  uint16_t cid = 0;                   ///< command or completion
  uint16_t connect_qid = 0;
  uint16_t status = 0;                ///< completion: status field without the phase bit
  uint32_t sgl_len = 0;               ///< command: data length from the SGL
  uint32_t keys[kMaxKeys] = {};

  bool is_connect() const { return opcode == kNvmeFabricsOpcode && fctype == 0x01; }
};

/// The headers of a decoded frame that components read, compactly: every buffered packet
/// carries one (a point's reorder buffer holds a quarter of a second of them, tens of MB), so
/// what can be worked out again is not stored: the opcode's properties come from the opcode
/// table, and a PFC frame, which has no BTH, keeps its quanta where a RoCE packet keeps its RETH.
/// Member names follow RoceFrame's. The addresses are the flow's (Flow::key).
struct PacketHeaders {
  FrameKind kind = FrameKind::kOther;
  uint8_t ecn : 2 = 0;   // the IP header's traffic-class byte, as it is on the wire
  uint8_t dscp : 6 = 0;
  uint8_t ttl = 0;
  bool op_known : 1 = false;  ///< the BTH was read and its opcode is not reserved
  bool vlan_tagged : 1 = false;
  uint8_t vlan_pcp : 3 = 0;  ///< the outermost VLAN tag's 802.1p priority, where vlan_tagged
  uint16_t ip_id = 0;
  uint16_t ext = 0;
  struct {
    uint8_t opcode = 0;
    bool ack_req = false;
    bool becn = false;
    bool fecn = false;
    uint32_t dest_qp = 0;
    uint32_t psn = 0;
  } bth;
  uint32_t payload_len = 0;
  union {
    Reth reth = {};  ///< RoCE packets (zero without a RETH)
    Pfc pfc;         ///< PFC frames (kind kPfc)
  };
  Aeth aeth;
  uint32_t immediate = 0;
  uint32_t invalidate_rkey = 0;
  uint32_t deth_src_qp = 0;

  void assign(const RoceFrame& f) {
    kind = f.kind;
    ecn = f.ecn & 3;
    dscp = f.dscp & 63;
    vlan_tagged = f.vlan_count > 0;
    vlan_pcp = f.vlan_pcp & 7;
    ttl = f.ttl;
    op_known = f.op != nullptr;
    ip_id = f.ip_id;
    ext = f.ext;
    bth.opcode = f.bth.opcode;
    bth.ack_req = f.bth.ack_req;
    bth.becn = f.bth.becn;
    bth.fecn = f.bth.fecn;
    bth.dest_qp = f.bth.dest_qp;
    bth.psn = f.bth.psn;
    if (f.kind == FrameKind::kPfc) pfc = f.pfc;
    else reth = f.reth;
    aeth = f.aeth;
    immediate = f.immediate;
    invalidate_rkey = f.invalidate_rkey;
    deth_src_qp = f.deth_src_qp;
    payload_len = f.payload_len;
  }
  /// The BTH opcode's properties (RoceFrame::op), or nullptr where no BTH was read.
  const IbOpcodeInfo* op() const { return op_known ? &ib_opcode_info(bth.opcode) : nullptr; }
  bool has(ExtHeader h) const { return (ext & h) != 0; }
  bool is_nak() const { return has(kExtAeth) && aeth_kind(aeth.syndrome) == AethKind::kNak; }
  bool ecn_ce() const { return ecn == 3; }
};

struct Packet {
  uint64_t frame = 0;
  TimeNs ts = 0;
  PointId point = kNoPoint;
  uint32_t seq = 0;       ///< arrival order at the engine (the last tie-breaker)
  uint64_t order_key = 0; ///< orders packets with equal stamps: flow key hash, then PSN
  uint32_t wire_len = 0;  ///< frame length on the wire
  FlowId flow = kNoFlow;  ///< RoCE packets: (src IP, dst IP, dst QPN), from the flow table
  PacketHeaders roce;     ///< kind tells RoCE from PFC
  CapsuleSummary capsule;
  uint16_t source = 0;  ///< FrameIn::source (low bits: only equality matters)
  FlowPointId flow_point = kNoFlowPoint;  ///< RoCE packets: the flow at this point

  bool is_roce() const { return roce.kind == FrameKind::kRoce; }
  bool is_pfc() const { return roce.kind == FrameKind::kPfc; }
};
// Each reorder buffer slot is a Packet and an 8-byte hash: keep it within 160 bytes.
static_assert(sizeof(CapsuleSummary) <= 32, "CapsuleSummary grew: every buffered packet pays for it");
static_assert(sizeof(Packet) <= 152, "Packet grew: every buffered packet pays for it");

/// Fills `capsule` from a decoded RoCE packet's captured payload bytes.
void summarize_capsule(const RoceFrame& roce, const uint8_t* frame, CapsuleSummary& capsule);

}  // namespace rdmatel
