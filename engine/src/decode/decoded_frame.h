// SPDX-License-Identifier: GPL-2.0-or-later
// Everything the engine works out from a frame's bytes alone, before any state: its headers, its
// NVMe capsule summary and the hash of its payload's first bytes. The engine decodes a frame
// pushed without one itself; a capture read ahead on a thread of its own (--threads 2) comes with
// it, decoded there (capture/read_ahead_source.h), so the measuring thread never reads the bytes.
// Either way the same function decodes, so the results are the same.
#pragma once

#include <cstdint>

#include "engine/src/decode/packet.h"
#include "engine/src/decode/roce_frame.h"
#include "rdmatel/types.h"

namespace rdmatel {

/// Bytes at the start of a frame's payload that, with its decoded headers, tell two packets with
/// the same stamp apart when recognising the same packet given twice (engine.cpp).
inline constexpr uint32_t kHashedPayload = 16;

struct DecodedFrame {
  RoceFrame roce;            ///< decode_roce_frame's result; roce.kind says what the frame is
  PacketHeaders headers;     ///< roce's, as a buffered packet carries them (made here: off the measuring thread)
  CapsuleSummary capsule;    ///< RoCE packets: summarize_capsule's (else empty)
  uint64_t payload_hash = 0; ///< hash_bytes of the payload's first kHashedPayload captured bytes (0: none)
};

/// Decodes a frame (never reading outside [data, data + cap_len)).
void decode_frame(LinkType link, const uint8_t* data, uint32_t cap_len, uint32_t wire_len, DecodedFrame& out);

}  // namespace rdmatel
