// SPDX-License-Identifier: GPL-2.0-or-later
// Wire image of one Emission: Ethernet [VLAN [VLAN]] / IPv4|IPv6 / UDP 4791 / BTH /
// RETH|AETH|IETH|ImmDt|DETH / payload / pad / ICRC. Written independently of engine/.
#pragma once

#include <cstdint>
#include <vector>

#include "common.h"

namespace synth {

struct EndpointWire {
  uint8_t mac[6];
  uint8_t ip[16];  // IPv4 lives in bytes 12..15 (v4-mapped layout)
};

struct WireConfig {
  int vlan_tags = 0;       // 0, 1 or 2 802.1Q tags (TPID 0x8100 each)
  uint16_t vlan_id[2] = {100, 200};
  uint8_t pcp = 3;         // 802.1p priority of every tag: 3, the usual lossless RoCE class
  bool ipv6 = false;
  uint8_t dscp = 26;       // RoCE traffic class, ECN ECT(0)
};

// Extension header bytes after the BTH for an opcode.
uint32_t ext_header_len(uint8_t opcode);
// Length of the frame on the wire (no FCS).
uint32_t wire_len(const WireConfig& cfg, const Emission& e);
// Longest Ethernet..extension-header prefix of any packet of this configuration (RETH +
// ImmDt of a WRITE ONLY WITH IMMEDIATE): the smallest snap length that never cuts a header.
uint32_t max_header_len(const WireConfig& cfg);
inline uint32_t pad_of(uint32_t len) { return (4 - (len & 3)) & 3; }

// Fills message bytes [off, off+n) of the synthetic pattern identified by seed. Cheap and
// position-addressed, so a resent packet reproduces exactly the bytes of the original.
void fill_pattern(uint32_t seed, uint32_t off, uint32_t n, uint8_t* dst);

class PacketEncoder {
 public:
  PacketEncoder(const WireConfig& cfg, const std::vector<EndpointWire>& eps,
                const std::vector<uint8_t>& arena)
      : cfg_(cfg), eps_(eps), arena_(arena) {}

  // Encodes the first min(wire_len, snaplen) bytes into out (resized); returns wire_len.
  // The payload beyond the snap length is only produced when the ICRC is captured or the
  // IPv6 UDP checksum needs it. `ttl` is the IPv4 TTL / IPv6 hop limit the point sees (the
  // ICRC masks it and the IPv6 UDP checksum does not cover it; the IPv4 checksum follows it).
  // `ce`: the copy is marked congestion experienced where it is recorded (ECN 11). A PFC_FRAME
  // emission is written as its 802.1Qbb frame (`pfc` holds them).
  uint32_t encode(const Emission& e, uint32_t snaplen, uint8_t ttl, std::vector<uint8_t>& out, bool ce = false) const;
  void set_pfc_frames(const std::vector<PfcFrame>* pfc) { pfc_ = pfc; }

 private:
  void payload(const Emission& e, uint32_t from, uint32_t n, uint8_t* dst) const;
  const WireConfig& cfg_;
  const std::vector<EndpointWire>& eps_;
  const std::vector<uint8_t>& arena_;
  const std::vector<PfcFrame>* pfc_ = nullptr;
};

}  // namespace synth
