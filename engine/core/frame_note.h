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
};

struct FrameNote {
  uint64_t frame = 0;
  NoteKind kind = NoteKind::kIoCommand;
  uint64_t ref = 0;
  uint32_t detail = 0;
};

}  // namespace rdmatel
