// SPDX-License-Identifier: GPL-2.0-or-later
// The per-frame notes the built-in components make (rdmatel/sink.h: FrameNote), for front ends
// that annotate frames. Kinds are looked up by name with note_kind().
//
//   io.command, io.data, io.read_request, io.read_response, io.completion
//       a packet of NVMe I/O `ref` (channel "io") at its stage; detail 1 = a repeated copy
//   io.unparseable  a SEND on an NVMe queue pair that is not a capsule; detail 1 = response side
//   io.orphan       a completion whose command the capture does not hold
//   msg.packet      a data packet of RDMA message `ref` (channel "messages", 0 = a late copy
//                   of a message already reported); detail: kMsg* bits below
//   msg.nak         a NAK; ref = the message whose PSN it names (0 = none); detail = AETH syndrome
//   msg.nak_read    a NAK naming a READ REQUEST; ref = the READ REQUEST's frame; detail = syndrome
//   cong.ecn_ce     IP ECN congestion experienced
//   cong.cnp        a RoCEv2 congestion notification packet
#pragma once

#include <cstdint>

namespace rdmatel {

inline constexpr uint32_t kMsgRetransmission = 1u << 0;  ///< PSN not newer than the newest seen here
inline constexpr uint32_t kMsgDuplicate = 1u << 1;       ///< this exact PSN was already seen here
inline constexpr uint32_t kMsgOutOfSequence = 1u << 2;   ///< PSN skips ahead: loss before this point

}  // namespace rdmatel
