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
//   path.hop        a packet's copy at the next point of its path: ref = the hop delay in ns (a
//                   signed value in the 64 bits); detail: path_hop_detail() below
#pragma once

#include <cstdint>

namespace rdmatel {

inline constexpr uint32_t kMsgRetransmission = 1u << 0;  ///< PSN not newer than the newest seen here
inline constexpr uint32_t kMsgDuplicate = 1u << 1;       ///< this exact PSN was already seen here
inline constexpr uint32_t kMsgOutOfSequence = 1u << 2;   ///< PSN skips ahead: loss before this point

/// path.hop's detail: bit 0 set when the delay is raw (no clock offset applied); bits 1-31 the
/// frame of the same packet at the previous point, as a signed distance from the note's frame.
/// One note per copy carries both (millions of them in a capture seen at several points).
inline uint32_t path_hop_detail(bool raw, uint64_t frame, uint64_t previous_frame) {
  const int64_t distance = int64_t(previous_frame) - int64_t(frame);
  const bool fits = previous_frame && distance >= -(int64_t(1) << 30) && distance < (int64_t(1) << 30);
  return (fits ? uint32_t(distance) << 1 : 0) | (raw ? 1u : 0u);
}
/// The previous point's frame a path.hop note names, or 0 when it names none (a distance
/// beyond 31 bits: more than a billion frames apart).
inline uint64_t path_hop_previous_frame(uint64_t frame, uint32_t detail) {
  const int64_t distance = int64_t(int32_t(detail)) >> 1;
  return distance ? uint64_t(int64_t(frame) + distance) : 0;
}
inline bool path_hop_raw(uint32_t detail) { return (detail & 1) != 0; }

}  // namespace rdmatel
