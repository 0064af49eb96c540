// SPDX-License-Identifier: GPL-2.0-or-later
// An IPv4 or IPv6 address as a small value type (hashable, printable).
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>

namespace rdmatel {

/// IPv4 addresses are kept in the first 4 bytes with the rest zero; `v6` tells the family.
struct IpAddress {
  std::array<uint8_t, 16> bytes{};
  bool v6 = false;

  static IpAddress from_v4(const uint8_t* p) {
    IpAddress a;
    std::memcpy(a.bytes.data(), p, 4);
    return a;
  }
  static IpAddress from_v6(const uint8_t* p) {
    IpAddress a;
    std::memcpy(a.bytes.data(), p, 16);
    a.v6 = true;
    return a;
  }
  /// Parses dotted IPv4 or textual IPv6; returns false when the text is not an address.
  static bool parse(const std::string& text, IpAddress& out);

  uint32_t v4_host_order() const {
    return uint32_t(bytes[0]) << 24 | uint32_t(bytes[1]) << 16 | uint32_t(bytes[2]) << 8 | bytes[3];
  }
  std::string to_string() const;

  friend bool operator==(const IpAddress& a, const IpAddress& b) {
    uint64_t a0, a1, b0, b1;  // two word compares instead of a memcmp call
    std::memcpy(&a0, a.bytes.data(), 8);
    std::memcpy(&a1, a.bytes.data() + 8, 8);
    std::memcpy(&b0, b.bytes.data(), 8);
    std::memcpy(&b1, b.bytes.data() + 8, 8);
    return a0 == b0 && a1 == b1 && a.v6 == b.v6;
  }
  friend bool operator<(const IpAddress& a, const IpAddress& b) {
    if (a.v6 != b.v6) return !a.v6;
    return a.bytes < b.bytes;
  }
};

inline uint64_t hash_mix(uint64_t h) {
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdULL;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ULL;
  h ^= h >> 33;
  return h;
}

inline uint64_t hash_ip(const IpAddress& a) {
  uint64_t lo, hi;
  std::memcpy(&lo, a.bytes.data(), 8);
  std::memcpy(&hi, a.bytes.data() + 8, 8);
  return hash_mix(lo ^ hash_mix(hi + (a.v6 ? 0x9e3779b97f4a7c15ULL : 0)));
}

}  // namespace rdmatel

template <>
struct std::hash<rdmatel::IpAddress> {
  size_t operator()(const rdmatel::IpAddress& a) const noexcept { return rdmatel::hash_ip(a); }
};
