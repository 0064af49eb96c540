// SPDX-License-Identifier: GPL-2.0-or-later
#include "plugin/first_pass_end.h"

#include <algorithm>

namespace rdmatel::plugin {

CaptureIdentity CaptureIdentity::of_first_frame(int64_t ts, uint32_t interface, const uint8_t* data,
                                                uint32_t cap_len, uint32_t wire_len) {
  CaptureIdentity id;
  id.ts = ts;
  id.interface = interface;
  id.cap_len = cap_len;
  id.wire_len = wire_len;
  // FNV-1a over the first bytes: headers and stamps differ between any two captures.
  uint64_t h = 14695981039346656037ull;
  const uint32_t n = data ? std::min<uint32_t>(cap_len, 256) : 0;
  for (uint32_t i = 0; i < n; ++i) h = (h ^ data[i]) * 1099511628211ull;
  id.bytes_hash = h;
  id.valid = true;
  return id;
}

}  // namespace rdmatel::plugin
