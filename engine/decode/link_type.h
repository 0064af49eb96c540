// SPDX-License-Identifier: GPL-2.0-or-later
// Link-layer encapsulations the decoder understands, independent of pcap/wiretap numbering.
#pragma once

#include <cstdint>

namespace rdmatel {

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

/// Maps a libwiretap WTAP_ENCAP_ value (the Wireshark plugin's and wiretap reader's numbering).
/// The values are wiretap's stable numbers; the front ends static_assert them against wtap.h.
LinkType link_type_from_wtap_encap(int encap);

inline constexpr int kWtapEncapEthernet = 1;
inline constexpr int kWtapEncapRawIp = 7;
inline constexpr int kWtapEncapNull = 15;
inline constexpr int kWtapEncapSll = 25;
inline constexpr int kWtapEncapRawIp4 = 129;
inline constexpr int kWtapEncapRawIp6 = 130;
inline constexpr int kWtapEncapSll2 = 210;

/// Human name of a pcap LINKTYPE_ value for error messages ("ethernet", "linktype 147").
const char* link_type_name(LinkType t);

}  // namespace rdmatel
