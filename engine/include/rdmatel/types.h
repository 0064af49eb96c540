// SPDX-License-Identifier: GPL-2.0-or-later
// Value types of the public engine API: time, IP addresses, observation points and their roles,
// link-layer encapsulations.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

namespace rdmatel {

// ---- Time: integer nanoseconds since the Unix epoch inside the engine; µs only at the edges ----

using TimeNs = int64_t;
using DurationNs = int64_t;

/// How long from `from` to `to` in ns (0 when `to` is not later), without overflow: a file's
/// stamps may span the whole 64-bit range (a hostile if_tsoffset), where `to - from` would not fit.
inline double span_ns(TimeNs from, TimeNs to) { return to > from ? double(uint64_t(to) - uint64_t(from)) : 0.0; }

inline constexpr DurationNs kNsPerUs = 1000;
inline constexpr DurationNs kNsPerMs = 1000 * 1000;
inline constexpr DurationNs kNsPerSec = 1000 * 1000 * 1000;

/// seconds + nanoseconds as ns since the epoch, saturated to the int64 range (corrupt or odd
/// records carry any number of seconds).
inline TimeNs saturating_ns(int64_t secs, int64_t nsecs) {
  constexpr int64_t kMaxSecs = std::numeric_limits<int64_t>::max() / kNsPerSec - 1;
  if (secs > kMaxSecs) return std::numeric_limits<int64_t>::max();
  if (secs < -kMaxSecs) return std::numeric_limits<int64_t>::min();
  return secs * kNsPerSec + nsecs;
}

/// Nanoseconds to microseconds as reported to users (double, exact to the ns for < 2^53 ns).
inline double ns_to_us(DurationNs ns) { return double(ns) / 1000.0; }

// ---- IP addresses ----

/// An IPv4 or IPv6 address. IPv4 addresses are kept in the first 4 bytes with the rest zero;
/// `v6` tells the family.
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

  std::string to_string() const;
  /// Writes the textual form into `out` (at least 46 bytes); returns its length.
  size_t format(char* out) const;

  friend bool operator==(const IpAddress& a, const IpAddress& b) {
    uint64_t a0, a1, b0, b1;  // two word compares instead of a memcmp call
    std::memcpy(&a0, a.bytes.data(), 8);
    std::memcpy(&a1, a.bytes.data() + 8, 8);
    std::memcpy(&b0, b.bytes.data(), 8);
    std::memcpy(&b1, b.bytes.data() + 8, 8);
    return a0 == b0 && a1 == b1 && a.v6 == b.v6;
  }
  friend bool operator!=(const IpAddress& a, const IpAddress& b) { return !(a == b); }
  friend bool operator<(const IpAddress& a, const IpAddress& b) {
    if (a.v6 != b.v6) return !a.v6;
    // Byte order as two big-endian words: the order of `bytes`, without a memcmp call (this
    // is every std::map keyed by address).
    uint64_t a0, a1, b0, b1;
    std::memcpy(&a0, a.bytes.data(), 8);
    std::memcpy(&a1, a.bytes.data() + 8, 8);
    std::memcpy(&b0, b.bytes.data(), 8);
    std::memcpy(&b1, b.bytes.data() + 8, 8);
    a0 = big_endian(a0), b0 = big_endian(b0);
    if (a0 != b0) return a0 < b0;
    return big_endian(a1) < big_endian(b1);
  }

 private:
  static uint64_t big_endian(uint64_t w) {
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    return __builtin_bswap64(w);
#else
    return w;
#endif
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

// ---- Observation points ----

/// Index of an observation point (a capture interface: name + link type) in a session.
using PointId = uint32_t;
inline constexpr PointId kNoPoint = 0xFFFFFFFF;

/// Where a point sits for one endpoint (SPEC §3): facing a GPU server (compute), a storage
/// server (storage), or anything else (fabric).
enum class PointRole : uint8_t { kUnknown, kCompute, kFabric, kStorage };

const char* point_role_name(PointRole r);
/// Parses "compute", "storage", "fabric" (case-insensitive).
std::optional<PointRole> parse_point_role(std::string_view text);

// ---- Link layer ----

/// Link-layer encapsulations the decoder understands, independent of pcap/wiretap numbering.
enum class LinkType : uint8_t {
  kUnsupported,
  kEthernet,   ///< DLT_EN10MB
  kLinuxSll,   ///< DLT_LINUX_SLL (16-byte cooked header)
  kLinuxSll2,  ///< DLT_LINUX_SLL2 (20-byte cooked header)
  kRawIp,      ///< raw IPv4 or IPv6, version from the first nibble
  kNull,       ///< BSD loopback: 4-byte host-order address family
};

/// Maps a pcap/pcapng LINKTYPE_ value to LinkType.
LinkType link_type_from_pcap(uint32_t linktype);
/// Maps a libwiretap WTAP_ENCAP_ value (the numbering of the Wireshark plugin and of the
/// libwiretap reader). The values are wiretap's stable numbers; front ends static_assert them.
LinkType link_type_from_wtap_encap(int encap);
inline constexpr int kWtapEncapEthernet = 1;
inline constexpr int kWtapEncapRawIp = 7;
inline constexpr int kWtapEncapNull = 15;
inline constexpr int kWtapEncapSll = 25;
inline constexpr int kWtapEncapRawIp4 = 129;
inline constexpr int kWtapEncapRawIp6 = 130;
inline constexpr int kWtapEncapSll2 = 210;
inline constexpr int kWtapEncapLoop = 174;
/// "ethernet", "linux-sll", ... for messages.
const char* link_type_name(LinkType t);

}  // namespace rdmatel

template <>
struct std::hash<rdmatel::IpAddress> {
  size_t operator()(const rdmatel::IpAddress& a) const noexcept { return rdmatel::hash_ip(a); }
};
