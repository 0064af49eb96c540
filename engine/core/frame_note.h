// SPDX-License-Identifier: GPL-2.0-or-later
// Per-frame facts for front ends that annotate frames (the Wireshark plugin).
#pragma once

#include <cstdint>

namespace rdmatel {

enum class NoteKind : uint8_t {
  kIoCommand,        ///< ref = I/O id; detail = 1 for a retransmitted copy
  kIoData,           ///< first data packet of a read (RDMA WRITE FIRST/ONLY)
  kIoReadRequest,    ///< RDMA READ REQUEST of a write
  kIoReadResponse,   ///< first READ RESPONSE of a write
  kIoCompletion,     ///< completion capsule
  kCapsuleUnparseable,  ///< a SEND on an NVMe queue that is not a valid capsule; detail: 0 command, 1 response
  kOrphanCompletion,    ///< a completion whose command the capture does not hold
  kMessage,          ///< a data packet of RDMA message `ref`; detail = kMsg* flags
  kNak,              ///< a NAK; ref = message it names (0 if none); detail = AETH syndrome
  kEcnCe,            ///< IP ECN congestion experienced
  kCnp,              ///< RoCEv2 congestion notification packet
};

// FrameNote::detail bits of kMessage notes.
inline constexpr uint32_t kMsgRetransmission = 1u << 0;  ///< PSN not newer than the newest seen here
inline constexpr uint32_t kMsgDuplicate = 1u << 1;       ///< this exact PSN was already seen here
inline constexpr uint32_t kMsgOutOfSequence = 1u << 2;   ///< PSN skips ahead: loss before this point

struct FrameNote {
  uint64_t frame = 0;
  NoteKind kind = NoteKind::kIoCommand;
  uint64_t ref = 0;
  uint32_t detail = 0;
};

}  // namespace rdmatel
