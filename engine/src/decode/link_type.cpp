// SPDX-License-Identifier: GPL-2.0-or-later
#include "rdmatel/types.h"

namespace rdmatel {

LinkType link_type_from_pcap(uint32_t linktype) {
  switch (linktype) {
    case 1: return LinkType::kEthernet;
    case 113: return LinkType::kLinuxSll;
    case 276: return LinkType::kLinuxSll2;
    case 101:  // LINKTYPE_RAW
    case 228:  // LINKTYPE_IPV4
    case 229:  // LINKTYPE_IPV6
      return LinkType::kRawIp;
    case 0:    // LINKTYPE_NULL: the address family in the host's byte order
    case 108:  // LINKTYPE_LOOP (OpenBSD): in network byte order; the decoder reads either
      return LinkType::kNull;
    default: return LinkType::kUnsupported;
  }
}

LinkType link_type_from_wtap_encap(int encap) {
  switch (encap) {
    case kWtapEncapEthernet: return LinkType::kEthernet;
    case kWtapEncapRawIp:
    case kWtapEncapRawIp4:
    case kWtapEncapRawIp6:
      return LinkType::kRawIp;
    case kWtapEncapNull:
    case kWtapEncapLoop:
      return LinkType::kNull;
    case kWtapEncapSll: return LinkType::kLinuxSll;
    case kWtapEncapSll2: return LinkType::kLinuxSll2;
    default: return LinkType::kUnsupported;
  }
}

const char* link_type_name(LinkType t) {
  switch (t) {
    case LinkType::kEthernet: return "Ethernet";
    case LinkType::kLinuxSll: return "Linux cooked (SLL)";
    case LinkType::kLinuxSll2: return "Linux cooked (SLL2)";
    case LinkType::kRawIp: return "raw IP";
    case LinkType::kNull: return "BSD loopback";
    case LinkType::kUnsupported: break;
  }
  return "unsupported";
}

}  // namespace rdmatel
