// SPDX-License-Identifier: GPL-2.0-or-later
#include "packet_encoder.h"

#include <algorithm>
#include <cstring>

#include "icrc.h"

namespace synth {
namespace {

inline void put16(uint8_t* p, uint32_t v) {
  p[0] = static_cast<uint8_t>(v >> 8);
  p[1] = static_cast<uint8_t>(v);
}
inline void put24(uint8_t* p, uint32_t v) {
  p[0] = static_cast<uint8_t>(v >> 16);
  p[1] = static_cast<uint8_t>(v >> 8);
  p[2] = static_cast<uint8_t>(v);
}
inline void put32(uint8_t* p, uint32_t v) {
  put16(p, v >> 16);
  put16(p + 2, v & 0xFFFF);
}
inline void put64(uint8_t* p, uint64_t v) {
  put32(p, static_cast<uint32_t>(v >> 32));
  put32(p + 4, static_cast<uint32_t>(v));
}

uint32_t csum_add(uint32_t sum, const uint8_t* p, size_t n) {
  for (size_t i = 0; i + 1 < n; i += 2) sum += (static_cast<uint32_t>(p[i]) << 8) | p[i + 1];
  if (n & 1) sum += static_cast<uint32_t>(p[n - 1]) << 8;
  return sum;
}
uint16_t csum_fold(uint32_t sum) {
  while (sum >> 16) sum = (sum & 0xFFFF) + (sum >> 16);
  return static_cast<uint16_t>(~sum & 0xFFFF);
}

bool has_reth(uint8_t o) {
  return o == op::WRITE_FIRST || o == op::WRITE_ONLY || o == op::WRITE_ONLY_IMM || o == op::READ_REQ;
}
bool has_imm(uint8_t o) {
  return o == op::SEND_LAST_IMM || o == op::SEND_ONLY_IMM || o == op::WRITE_LAST_IMM ||
         o == op::WRITE_ONLY_IMM;
}
bool has_ieth(uint8_t o) { return o == op::SEND_LAST_INV || o == op::SEND_ONLY_INV; }
bool has_aeth(uint8_t o) {
  return o == op::READ_RESP_FIRST || o == op::READ_RESP_LAST || o == op::READ_RESP_ONLY ||
         o == op::ACK;
}

}  // namespace

uint32_t ext_header_len(uint8_t o) {
  uint32_t n = 0;
  if (has_reth(o)) n += 16;
  if (has_imm(o)) n += 4;
  if (has_ieth(o)) n += 4;
  if (has_aeth(o)) n += 4;
  if (o == op::UD_SEND_ONLY) n += 8;
  return n;
}

void fill_pattern(uint32_t seed, uint32_t off, uint32_t n, uint8_t* dst) {
  // Byte i of the message is byte (i % 8) of hash(seed, i / 8).
  uint32_t i = 0;
  while (i < n) {
    const uint32_t o = off + i;
    uint64_t x = (static_cast<uint64_t>(seed) << 32) ^ (o >> 3);
    const uint64_t w = Rng::splitmix(x);
    const uint32_t k0 = o & 7;
    const uint32_t take = std::min<uint32_t>(8 - k0, n - i);
    for (uint32_t k = 0; k < take; ++k) dst[i + k] = static_cast<uint8_t>(w >> (8 * (k0 + k)));
    i += take;
  }
}

void PacketEncoder::payload(const Emission& e, uint32_t from, uint32_t n, uint8_t* dst) const {
  // Message offset of the first byte wanted.
  uint32_t o = e.msg_off + from;
  uint32_t i = 0;
  if (o < e.arena_len) {
    const uint32_t take = std::min(n, e.arena_len - o);
    std::memcpy(dst, arena_.data() + e.arena_off + o, take);
    i = take;
    o += take;
  }
  if (i < n) fill_pattern(e.seed, o, n - i, dst + i);
}

uint32_t wire_len(const WireConfig& cfg, const Emission& e) {
  if (e.opcode == op::PFC_FRAME) return 60;  // the shortest Ethernet frame, FCS excluded
  return 14 + 4 * cfg.vlan_tags + (cfg.ipv6 ? 40 : 20) + 8 + 12 + ext_header_len(e.opcode) +
         e.pay_len + pad_of(e.pay_len) + 4;
}

uint32_t max_header_len(const WireConfig& cfg) {
  return 14 + 4 * cfg.vlan_tags + (cfg.ipv6 ? 40 : 20) + 8 + 12 + ext_header_len(op::WRITE_ONLY_IMM);
}

uint32_t PacketEncoder::encode(const Emission& e, uint32_t snaplen, uint8_t ttl, std::vector<uint8_t>& out,
                               bool ce) const {
  const uint32_t wl = wire_len(cfg_, e);
  if (e.opcode == op::PFC_FRAME) {
    // 802.1Qbb: to the MAC control address, ethertype 0x8808, opcode 0x0101, the class-enable
    // vector, eight pause times, zero padding to the minimum frame. Sent by the switch port.
    const PfcFrame& f = (*pfc_)[e.y];
    out.assign(wl, 0);
    static const uint8_t kDst[6] = {0x01, 0x80, 0xC2, 0x00, 0x00, 0x01};
    std::memcpy(out.data(), kDst, 6);
    const uint8_t src[6] = {0x02, 0x00, 0x5e, 0xff, 0x00, static_cast<uint8_t>(f.point)};
    std::memcpy(out.data() + 6, src, 6);
    put16(out.data() + 12, 0x8808);
    put16(out.data() + 14, 0x0101);
    put16(out.data() + 16, f.enabled);
    for (int i = 0; i < 8; ++i) put16(out.data() + 18 + 2 * i, f.quanta[i]);
    out.resize(std::min(snaplen, wl));
    return wl;
  }
  const bool full = cfg_.ipv6 || snaplen > wl - 4;
  const uint32_t build = full ? wl : std::min(wl, snaplen);
  const uint32_t pad = pad_of(e.pay_len);
  const uint32_t hdr_len = wl - e.pay_len - pad - 4;
  out.assign(std::max(build, hdr_len), 0);  // headers first, cut to the snap length at the end
  uint8_t* p = out.data();
  const EndpointWire& s = eps_[e.src_ep];
  const EndpointWire& d = eps_[e.dst_ep];

  std::memcpy(p, d.mac, 6);
  std::memcpy(p + 6, s.mac, 6);
  uint32_t o = 12;
  for (int v = 0; v < cfg_.vlan_tags; ++v) {
    put16(p + o, 0x8100);
    put16(p + o + 2, static_cast<uint16_t>((cfg_.pcp << 13) | cfg_.vlan_id[v]));
    o += 4;
  }
  put16(p + o, cfg_.ipv6 ? 0x86DD : 0x0800);
  o += 2;
  const uint32_t l3 = o;
  const uint32_t ext = ext_header_len(e.opcode);
  const uint32_t udp_len = 8 + 12 + ext + e.pay_len + pad + 4;
  const uint8_t tos = static_cast<uint8_t>((cfg_.dscp << 2) | (ce ? 0x3 : 0x2));  // ECN ECT(0), or CE
  if (cfg_.ipv6) {
    // Flow label from the UDP source port, as RoCE NICs do for ECMP entropy.
    const uint32_t fl = (static_cast<uint32_t>(e.sport) * 2654435761u) & 0xFFFFF;
    put32(p + o, (6u << 28) | (static_cast<uint32_t>(tos) << 20) | fl);
    put16(p + o + 4, udp_len);
    p[o + 6] = 17;
    p[o + 7] = ttl;  // hop limit
    std::memcpy(p + o + 8, s.ip, 16);
    std::memcpy(p + o + 24, d.ip, 16);
    o += 40;
  } else {
    p[o] = 0x45;
    p[o + 1] = tos;
    put16(p + o + 2, 20 + udp_len);
    put16(p + o + 4, e.ip_id);
    put16(p + o + 6, 0x4000);  // DF
    p[o + 8] = ttl;
    p[o + 9] = 17;
    std::memcpy(p + o + 12, s.ip + 12, 4);
    std::memcpy(p + o + 16, d.ip + 12, 4);
    put16(p + o + 10, csum_fold(csum_add(0, p + o, 20)));
    o += 20;
  }
  const uint32_t udp = o;
  put16(p + o, e.sport);
  put16(p + o + 2, 4791);
  put16(p + o + 4, udp_len);
  o += 8;
  // BTH
  p[o] = e.opcode;
  p[o + 1] = static_cast<uint8_t>((e.solicited ? 0x80 : 0) | (pad << 4));  // TVer 0, M 0
  put16(p + o + 2, 0xFFFF);  // default P_Key
  p[o + 4] = e.opcode == op::CNP ? 0x40 : 0;  // BECN: a CNP tells the sender of congestion
  put24(p + o + 5, e.dst_qpn & kPsnMask);
  p[o + 8] = e.ack_req ? 0x80 : 0;
  put24(p + o + 9, e.psn & kPsnMask);
  o += 12;
  const uint8_t oc = e.opcode;
  if (oc == op::UD_SEND_ONLY) {
    put32(p + o, e.x);  // Q_Key
    put24(p + o + 5, e.y);
    o += 8;
  }
  if (has_reth(oc)) {
    put64(p + o, e.reth_va);
    put32(p + o + 8, e.reth_key);
    put32(p + o + 12, e.reth_len);
    o += 16;
  }
  if (has_aeth(oc) || has_imm(oc) || has_ieth(oc)) {
    put32(p + o, e.x);
    o += 4;
  }
  // Payload (as much as we build), pad bytes stay zero.
  if (o < build && e.opcode != op::CNP) {  // a CNP's 16 bytes are reserved: zero
    const uint32_t n = std::min(e.pay_len, build - o);
    payload(e, 0, n, p + o);
  }
  if (full) {
    if (cfg_.ipv6) {
      // IPv6 forbids a zero UDP checksum for plain UDP (Wireshark flags it as an error).
      uint32_t sum = csum_add(0, p + l3 + 8, 32);
      sum += 17 + udp_len;
      sum = csum_add(sum, p + udp, udp_len - 4);  // ICRC not yet written (zeros)
      // The ICRC masks the UDP checksum, so compute the ICRC first, then the checksum.
      const uint32_t icrc = roce_icrc(p + l3, wl - 4 - l3, true);
      uint8_t* t = p + wl - 4;
      t[0] = static_cast<uint8_t>(icrc);
      t[1] = static_cast<uint8_t>(icrc >> 8);
      t[2] = static_cast<uint8_t>(icrc >> 16);
      t[3] = static_cast<uint8_t>(icrc >> 24);
      sum = csum_add(sum, t, 4);
      uint16_t c = csum_fold(sum);
      if (c == 0) c = 0xFFFF;
      put16(p + udp + 6, c);
    } else {
      const uint32_t icrc = roce_icrc(p + l3, wl - 4 - l3, false);
      uint8_t* t = p + wl - 4;
      t[0] = static_cast<uint8_t>(icrc);
      t[1] = static_cast<uint8_t>(icrc >> 8);
      t[2] = static_cast<uint8_t>(icrc >> 16);
      t[3] = static_cast<uint8_t>(icrc >> 24);
    }
  }
  out.resize(std::min(snaplen, wl));
  return wl;
}

}  // namespace synth
