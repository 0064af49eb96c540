// SPDX-License-Identifier: GPL-2.0-or-later
// Stateless decoding of one captured frame: link layer, IP, UDP/4791, BTH and extension headers.
// A view over bytes the caller owns; every read is bounds-checked and nothing throws.
#pragma once

#include <cstdint>

#include "engine/src/decode/ib_opcodes.h"
#include "rdmatel/types.h"

namespace rdmatel {

inline constexpr uint16_t kRoceV2Port = 4791;

enum class FrameKind : uint8_t {
  kOther,      ///< not RoCEv2 (ARP, TCP, fragments, ...)
  kRoce,       ///< a RoCEv2 packet, headers decoded
  kMalformed,  ///< looked like RoCEv2 but its headers are inconsistent (see `error`)
  kPfc,        ///< an 802.1Qbb priority flow control frame
};

/// Base Transport Header.
struct Bth {
  uint8_t opcode = 0;
  bool solicited = false;
  bool migreq = false;
  uint8_t pad = 0;  ///< pad bytes at the end of the payload (0-3)
  uint8_t tver = 0;
  uint16_t pkey = 0;
  bool fecn = false;
  bool becn = false;
  uint32_t dest_qp = 0;
  bool ack_req = false;
  uint32_t psn = 0;
};

struct Reth {
  uint64_t va = 0;
  uint32_t rkey = 0;
  uint32_t dma_len = 0;
};

struct Aeth {
  uint8_t syndrome = 0;
  uint32_t msn = 0;
};

// Trivially constructible (no member initialisers: zeroed where declared) so that a buffered
// packet can keep it in a union with its RETH (PacketHeaders).
struct Pfc {
  uint8_t enabled;     ///< priority-enable vector
  uint16_t quanta[8];  ///< pause quanta per priority
};

/// Everything the metric components need from one frame's headers (no pointers into the frame:
/// a decoded frame outlives its bytes in the reorder buffer).
struct RoceFrame {
  FrameKind kind = FrameKind::kOther;
  /// Static text: why a kMalformed frame is; for kOther, set only when the snap length cut the
  /// frame before its headers told whether it is RoCEv2 (the capture may measure nothing).
  const char* error = nullptr;

  // Network layer.
  IpAddress src, dst;
  uint16_t src_port = 0, dst_port = 0;
  uint8_t ecn = 0;  ///< IP ECN bits (3 = CE)
  uint8_t dscp = 0;
  uint8_t ttl = 0;       ///< IPv4 TTL / IPv6 hop limit of the innermost IP header
  uint16_t ip_id = 0;    ///< IPv4 identification (0 for IPv6): tells a resent copy from the original
  uint8_t vlan_count = 0;
  uint16_t vlan_id = 0;  ///< outermost VLAN id
  uint8_t vlan_pcp = 0;
  /// The ERSPAN session that mirrored the frame: its 10-bit session ID + 1 (0: not ERSPAN), and
  /// the mirror's address (the outer IP source). One capture interface receiving several sessions
  /// (ports, switches) holds several observation points in one.
  uint16_t mirror_id = 0;
  IpAddress mirror_src;

  // Transport.
  Bth bth;
  const IbOpcodeInfo* op = nullptr;
  uint16_t ext = 0;  ///< ExtHeader bits actually present
  Reth reth;
  Aeth aeth;
  uint32_t immediate = 0;
  uint32_t invalidate_rkey = 0;  ///< IETH
  uint32_t deth_src_qp = 0;
  uint32_t deth_qkey = 0;

  /// Payload after the extension headers, pad and ICRC excluded, as sent on the wire.
  uint32_t payload_len = 0;
  /// Offset of the payload in the frame, and how many of its bytes were captured.
  uint32_t payload_offset = 0;
  uint32_t payload_captured = 0;

  Pfc pfc = {};

  bool is_roce() const { return kind == FrameKind::kRoce; }
  bool has(ExtHeader h) const { return (ext & h) != 0; }
  bool is_nak() const { return has(kExtAeth) && aeth_kind(aeth.syndrome) == AethKind::kNak; }
  bool ecn_ce() const { return ecn == 3; }
};

/// Decodes `frame` (captured bytes `cap_len`, original length `wire_len`) of link type `link`.
/// Never reads outside [frame, frame + cap_len). Returns out.kind.
FrameKind decode_roce_frame(LinkType link, const uint8_t* frame, uint32_t cap_len, uint32_t wire_len,
                            RoceFrame& out);
/// The same by the general decoder alone, every layout and tunnel (decode_roce_frame takes a
/// straight path for the common layout first): tests compare the two.
FrameKind decode_roce_frame_general(LinkType link, const uint8_t* frame, uint32_t cap_len, uint32_t wire_len,
                                    RoceFrame& out);

}  // namespace rdmatel
