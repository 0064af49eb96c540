// SPDX-License-Identifier: GPL-2.0-or-later
// Test-only construction of RoCEv2 frames byte by byte, written from the specifications (IBTA
// vol. 1 §9, RoCEv2 annex A17, RFC 791/8200/768) independently of the engine's decoder.
#pragma once

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <vector>

namespace rdmatel::test {

using Bytes = std::vector<uint8_t>;

inline void put16(Bytes& b, uint16_t v) { b.push_back(uint8_t(v >> 8)); b.push_back(uint8_t(v)); }
inline void put24(Bytes& b, uint32_t v) { b.push_back(uint8_t(v >> 16)); put16(b, uint16_t(v)); }
inline void put32(Bytes& b, uint32_t v) { put16(b, uint16_t(v >> 16)); put16(b, uint16_t(v)); }
inline void put64(Bytes& b, uint64_t v) { put32(b, uint32_t(v >> 32)); put32(b, uint32_t(v)); }
inline void putle16(Bytes& b, uint16_t v) { b.push_back(uint8_t(v)); b.push_back(uint8_t(v >> 8)); }
inline void putle32(Bytes& b, uint32_t v) { putle16(b, uint16_t(v)); putle16(b, uint16_t(v >> 16)); }
inline void putle64(Bytes& b, uint64_t v) { putle32(b, uint32_t(v)); putle32(b, uint32_t(v >> 32)); }

struct RoceSpec {
  bool ipv6 = false;
  int vlans = 0;
  uint8_t src_ip4[4] = {10, 0, 0, 1};
  uint8_t dst_ip4[4] = {10, 0, 0, 2};
  uint8_t ecn = 2;
  uint8_t ttl = 64;
  bool ipv6_atomic_fragment = false;  ///< an RFC 6946 fragment header (offset 0, no more fragments)
  uint16_t sport = 49152;
  uint16_t dport = 4791;
  uint8_t opcode = 0x04;
  uint8_t pad = 0;
  uint32_t dest_qp = 0x123456;
  uint32_t psn = 0xABCDEF;
  bool ack_req = false;
  Bytes ext;      ///< extension headers, already encoded
  Bytes payload;  ///< payload without pad
};

// The NVMe queue pair of the hand-built engine tests: host 10.0.0.1, storage server 10.0.1.1.
constexpr uint8_t kHost[4] = {10, 0, 0, 1};
constexpr uint8_t kStorage[4] = {10, 0, 1, 1};
constexpr uint32_t kStorageQp = 0x000100;  ///< destination QPN of host -> storage packets
constexpr uint32_t kHostQp = 0x000200;     ///< destination QPN of storage -> host packets

/// A host -> storage packet of that queue pair (or of another storage-side QPN).
inline RoceSpec up(uint8_t opcode, uint32_t psn, uint32_t qp = kStorageQp) {
  RoceSpec s;
  std::copy(kHost, kHost + 4, s.src_ip4);
  std::copy(kStorage, kStorage + 4, s.dst_ip4);
  s.opcode = opcode;
  s.psn = psn;
  s.dest_qp = qp;
  return s;
}
/// A storage -> host packet.
inline RoceSpec down(uint8_t opcode, uint32_t psn, uint32_t qp = kHostQp) {
  RoceSpec s = up(opcode, psn, qp);
  std::copy(kStorage, kStorage + 4, s.src_ip4);
  std::copy(kHost, kHost + 4, s.dst_ip4);
  return s;
}

/// Ethernet [+VLANs] / IPv4|IPv6 / UDP / BTH / ext / payload / pad / ICRC (zeros: not checked).
inline Bytes build_roce(const RoceSpec& s) {
  Bytes roce;
  roce.push_back(s.opcode);
  roce.push_back(uint8_t((s.pad & 3) << 4));  // SE=0 M=0 pad TVer=0
  put16(roce, 0xFFFF);                         // P_Key
  roce.push_back(0);                           // FECN/BECN/resv
  put24(roce, s.dest_qp);
  roce.push_back(s.ack_req ? 0x80 : 0);
  put24(roce, s.psn);
  roce.insert(roce.end(), s.ext.begin(), s.ext.end());
  roce.insert(roce.end(), s.payload.begin(), s.payload.end());
  for (int i = 0; i < s.pad; ++i) roce.push_back(0);
  put32(roce, 0);  // ICRC

  Bytes udp;
  put16(udp, s.sport);
  put16(udp, s.dport);
  put16(udp, uint16_t(8 + roce.size()));
  put16(udp, 0);
  udp.insert(udp.end(), roce.begin(), roce.end());

  Bytes f = {0x02, 0, 0, 0, 0, 2, 0x02, 0, 0, 0, 0, 1};
  for (int i = 0; i < s.vlans; ++i) {
    put16(f, 0x8100);
    put16(f, uint16_t(0x6000 | (100 + i)));  // PCP 3, VLAN 100+i
  }
  if (!s.ipv6) {
    put16(f, 0x0800);
    f.push_back(0x45);
    f.push_back(uint8_t(26 << 2 | s.ecn));
    put16(f, uint16_t(20 + udp.size()));
    put16(f, 0);
    put16(f, 0x4000);  // DF
    f.push_back(s.ttl);
    f.push_back(17);
    put16(f, 0);  // checksum not checked by the decoder
    f.insert(f.end(), s.src_ip4, s.src_ip4 + 4);
    f.insert(f.end(), s.dst_ip4, s.dst_ip4 + 4);
  } else {
    put16(f, 0x86DD);
    put32(f, 0x60000000u | uint32_t(s.ecn) << 20);
    put16(f, uint16_t(udp.size() + (s.ipv6_atomic_fragment ? 8 : 0)));
    f.push_back(s.ipv6_atomic_fragment ? 44 : 17);
    f.push_back(s.ttl);
    for (int i = 0; i < 16; ++i) f.push_back(uint8_t(i == 0 ? 0xfd : i == 15 ? s.src_ip4[3] : 0));
    for (int i = 0; i < 16; ++i) f.push_back(uint8_t(i == 0 ? 0xfd : i == 15 ? s.dst_ip4[3] : 0));
    if (s.ipv6_atomic_fragment) {
      f.push_back(17);  // next header UDP
      f.push_back(0);
      put16(f, 0);  // offset 0, M = 0
      put32(f, 0x12345678);  // identification
    }
  }
  f.insert(f.end(), udp.begin(), udp.end());
  return f;
}

/// An 802.1Qbb PFC frame (MAC control opcode 0x0101): class-enable vector and 8 quanta, padded
/// to the 60-byte minimum.
inline Bytes pfc_frame(uint8_t enabled, const uint16_t (&quanta)[8]) {
  Bytes f = {0x01, 0x80, 0xC2, 0, 0, 0x01, 0x02, 0, 0, 0, 0, 1};
  put16(f, 0x8808);
  put16(f, 0x0101);
  put16(f, enabled);
  for (uint16_t q : quanta) put16(f, q);
  f.resize(60, 0);
  return f;
}

inline Bytes reth(uint64_t va, uint32_t rkey, uint32_t len) {
  Bytes b;
  put64(b, va);
  put32(b, rkey);
  put32(b, len);
  return b;
}

inline Bytes aeth(uint8_t syndrome, uint32_t msn) {
  Bytes b{syndrome};
  put24(b, msn);
  return b;
}

/// A 64-byte NVMe SQE with a keyed SGL (identifier 0x40) or in-capsule offset SGL (0x01).
inline Bytes sqe(uint8_t opcode, uint16_t cid, uint32_t nsid, uint8_t sgl_id, uint32_t len, uint32_t key) {
  Bytes b;
  b.push_back(opcode);
  b.push_back(0x40);  // PSDT = 01b (SGL)
  putle16(b, cid);
  putle32(b, nsid);
  for (int i = 0; i < 16; ++i) b.push_back(0);  // CDW2-3, MPTR
  putle64(b, 0x1000);                           // SGL address
  if ((sgl_id >> 4) == 4) {
    b.push_back(uint8_t(len));
    b.push_back(uint8_t(len >> 8));
    b.push_back(uint8_t(len >> 16));
    putle32(b, key);
  } else {
    putle32(b, len);
    for (int i = 0; i < 3; ++i) b.push_back(0);
  }
  b.push_back(sgl_id);
  while (b.size() < 64) b.push_back(0);
  return b;
}

inline Bytes cqe(uint16_t cid, uint16_t status, uint16_t sqid = 1) {
  Bytes b;
  putle32(b, 0);
  putle32(b, 0);
  putle16(b, 0);
  putle16(b, sqid);
  putle16(b, cid);
  putle16(b, uint16_t(status << 1));
  return b;
}

}  // namespace rdmatel::test
