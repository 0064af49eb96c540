// SPDX-License-Identifier: GPL-2.0-or-later
#include "icrc.h"

#include <array>
#include <cstring>

namespace synth {
namespace {

// Slicing-by-8 tables: the ICRC covers every payload byte, and nvme-large runs it over
// gigabytes, so the byte-at-a-time loop would dominate generation time.
struct Tables {
  std::array<std::array<uint32_t, 256>, 8> t{};
  Tables() {
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      t[0][i] = c;
    }
    for (uint32_t i = 0; i < 256; ++i)
      for (int s = 1; s < 8; ++s) t[s][i] = (t[s - 1][i] >> 8) ^ t[0][t[s - 1][i] & 0xFF];
  }
};
const Tables& tables() {
  static const Tables tb;
  return tb;
}

}  // namespace

uint32_t crc32_update(uint32_t crc, const uint8_t* p, size_t n) {
  const auto& t = tables().t;
  while (n >= 8) {
    uint32_t lo, hi;
    std::memcpy(&lo, p, 4);
    std::memcpy(&hi, p + 4, 4);
    lo ^= crc;  // little-endian host assumed (x86-64/aarch64), as the whole generator does
    crc = t[7][lo & 0xFF] ^ t[6][(lo >> 8) & 0xFF] ^ t[5][(lo >> 16) & 0xFF] ^ t[4][lo >> 24] ^
          t[3][hi & 0xFF] ^ t[2][(hi >> 8) & 0xFF] ^ t[1][(hi >> 16) & 0xFF] ^ t[0][hi >> 24];
    p += 8;
    n -= 8;
  }
  while (n--) crc = t[0][(crc ^ *p++) & 0xFF] ^ (crc >> 8);
  return crc;
}

uint32_t roce_icrc(const uint8_t* l3, size_t l3_len, bool ipv6) {
  const size_t ip_len = ipv6 ? 40 : static_cast<size_t>(l3[0] & 0x0F) * 4;
  uint8_t hdr[8 + 60 + 8 + 12];
  size_t h = 0;
  std::memset(hdr, 0xFF, 8);
  h = 8;
  std::memcpy(hdr + h, l3, ip_len + 8 + 12);  // IP + UDP + BTH
  uint8_t* ip = hdr + h;
  if (ipv6) {
    ip[0] |= 0x0F;  // traffic class (high nibble part)
    ip[1] = ip[2] = ip[3] = 0xFF;  // traffic class low nibble + flow label
    ip[7] = 0xFF;  // hop limit
  } else {
    ip[1] = 0xFF;  // TOS
    ip[8] = 0xFF;  // TTL
    ip[10] = ip[11] = 0xFF;  // header checksum
  }
  uint8_t* udp = ip + ip_len;
  udp[6] = udp[7] = 0xFF;  // UDP checksum
  udp[8 + 4] = 0xFF;       // BTH reserved byte (holds FECN/BECN on IB)
  h += ip_len + 8 + 12;
  uint32_t crc = crc32_update(0xFFFFFFFFu, hdr, h);
  const size_t rest = l3_len - (ip_len + 8 + 12);
  crc = crc32_update(crc, l3 + ip_len + 8 + 12, rest);
  return ~crc;
}

}  // namespace synth
