// SPDX-License-Identifier: GPL-2.0-or-later
#include "engine/src/decode/decoded_frame.h"

#include <algorithm>

#include "engine/src/util/hash.h"

namespace rdmatel {

void decode_frame(LinkType link, const uint8_t* data, uint32_t cap_len, uint32_t wire_len, DecodedFrame& out) {
  decode_roce_frame(link, data, cap_len, wire_len, out.roce);
  const RoceFrame& f = out.roce;
  out.headers.assign(f);
  if (f.is_roce()) summarize_capsule(f, data, out.capsule);
  else out.capsule = CapsuleSummary{};
  const uint32_t off = f.is_roce() ? f.payload_offset : 0;
  out.payload_hash = off < cap_len ? hash_bytes(data + off, std::min<uint32_t>(cap_len - off, kHashedPayload)) : 0;
}

}  // namespace rdmatel
