// SPDX-License-Identifier: GPL-2.0-or-later
#include "engine/src/decode/roce_frame.h"

#include <algorithm>

#include "engine/src/util/byte_order.h"

namespace rdmatel {
namespace {

constexpr uint16_t kEtherIpv4 = 0x0800;
constexpr uint16_t kEtherIpv6 = 0x86DD;
constexpr uint16_t kEtherVlan = 0x8100;
constexpr uint16_t kEtherQinQ = 0x88A8;
constexpr uint16_t kEtherQinQOld = 0x9100;
constexpr uint16_t kEtherMacControl = 0x8808;
constexpr uint16_t kEtherTransparentBridging = 0x6558;
constexpr uint16_t kEtherErspan2 = 0x88BE;
constexpr uint16_t kEtherErspan3 = 0x22EB;
constexpr uint16_t kVxlanPort = 4789;
constexpr uint16_t kVxlanLinuxPort = 8472;  // Linux's VXLAN port before IANA's
constexpr uint8_t kIpv6Fragment = 44;
constexpr int kMaxVlanTags = 4;
constexpr int kMaxEncapsulation = 3;  // tunnels inside tunnels are bounded

// Decoding state: a cursor over the captured bytes plus the nesting depth.
struct Cursor {
  const uint8_t* base;
  uint32_t cap_len;
  uint32_t wire_len;
  int depth = 0;
  /// Decoding the first fragment of an outer IP packet: only a tunnel may follow (its inner frame
  /// then ends with the fragment: cut, as by a mirror's truncation).
  bool first_fragment = false;
  bool has(uint32_t off, uint32_t n) const { return off <= cap_len && n <= cap_len - off; }
  /// Inside a tunnel (GRE, ERSPAN, VXLAN, whatever the capture's link type): the inner frame's own
  /// lengths count, and a mirror may have cut it short (ERSPAN truncation, an outer packet
  /// fragmented on the way), like a snap length.
  bool in_tunnel = false;
  bool tunnelled() const { return in_tunnel; }
};

FrameKind malformed(RoceFrame& out, const char* why) {
  out.kind = FrameKind::kMalformed;
  out.error = why;
  return out.kind;
}

// A frame the snap length cut before its headers told whether it is RoCEv2 (a cut, not a short
// frame: the bytes are on the wire). It stays kOther, with the reason, so that the engine can say
// why such a capture measures nothing instead of reporting no traffic.
FrameKind cut_before_roce(const Cursor& c, RoceFrame& out, const char* why) {
  if (c.cap_len < c.wire_len || c.tunnelled()) out.error = why;
  return FrameKind::kOther;
}

// The flow's VLAN tags are those of the innermost Ethernet header (a tunnel's outer header is the
// mirror's transport): forgotten when a header further in comes, or when none does (IP in GRE).
void forget_vlan(RoceFrame& out) {
  out.vlan_count = 0;
  out.vlan_id = 0;
  out.vlan_pcp = 0;
}

FrameKind decode_ethernet(Cursor& c, uint32_t off, RoceFrame& out);
FrameKind decode_ipv4(Cursor& c, uint32_t off, RoceFrame& out);
FrameKind decode_ipv6(Cursor& c, uint32_t off, RoceFrame& out);

FrameKind decode_ethertype(Cursor& c, uint16_t type, uint32_t off, RoceFrame& out) {
  switch (type) {
    case kEtherIpv4: return decode_ipv4(c, off, out);
    case kEtherIpv6: return decode_ipv6(c, off, out);
    default: return FrameKind::kOther;
  }
}

// 802.1Qbb PFC: MAC control opcode 0x0101, class-enable vector, 8 pause times.
FrameKind decode_mac_control(Cursor& c, uint32_t off, RoceFrame& out) {
  if (!c.has(off, 2 + 2 + 16) || load_be16(c.base + off) != 0x0101) return FrameKind::kOther;
  out.pfc.enabled = c.base[off + 3];
  for (int i = 0; i < 8; ++i) out.pfc.quanta[i] = load_be16(c.base + off + 4 + 2 * i);
  out.kind = FrameKind::kPfc;
  return out.kind;
}

FrameKind decode_ethernet(Cursor& c, uint32_t off, RoceFrame& out) {
  if (++c.depth > kMaxEncapsulation) return FrameKind::kOther;
  if (!c.has(off, 14)) return cut_before_roce(c, out, "Ethernet header cut by the snap length");
  uint16_t type = load_be16(c.base + off + 12);
  off += 14;
  // The innermost header's tags are the flow's, as its innermost IP header is; of them, the outermost.
  forget_vlan(out);
  for (int tags = 0; type == kEtherVlan || type == kEtherQinQ || type == kEtherQinQOld; ++tags) {
    if (tags >= kMaxVlanTags) return FrameKind::kOther;
    if (!c.has(off, 4)) return cut_before_roce(c, out, "VLAN tag cut by the snap length");
    if (out.vlan_count == 0) {
      uint16_t tci = load_be16(c.base + off);
      out.vlan_id = tci & 0x0fff;
      out.vlan_pcp = uint8_t(tci >> 13);
    }
    ++out.vlan_count;
    type = load_be16(c.base + off + 2);
    off += 4;
  }
  if (type == kEtherMacControl) return decode_mac_control(c, off, out);
  return decode_ethertype(c, type, off, out);
}

// The ERSPAN session of the outermost tunnel: its session ID with the mirror's address (the outer
// IP header's source, read just before; sessions are numbered per switch).
void note_mirror_session(uint32_t session_id, RoceFrame& out) {
  if (out.mirror_id) return;
  out.mirror_id = uint16_t(session_id + 1);
  out.mirror_src = out.src;
}

// GRE (RFC 2784/2890) carrying Ethernet, ERSPAN II/III or IP: how mirrored traffic arrives.
FrameKind decode_gre(Cursor& c, uint32_t off, uint32_t len, RoceFrame& out) {
  if (len < 4 || !c.has(off, 4)) return FrameKind::kOther;
  uint16_t flags = load_be16(c.base + off);
  uint16_t proto = load_be16(c.base + off + 2);
  if ((flags & 0x7) != 0) return FrameKind::kOther;  // GRE version 0 only
  c.first_fragment = false;  // what follows is the tunnel's inner packet
  c.in_tunnel = true;
  uint32_t hdr = 4 + ((flags & 0x8000) ? 4 : 0) + ((flags & 0x2000) ? 4 : 0) + ((flags & 0x1000) ? 4 : 0);
  bool has_seq = flags & 0x1000;
  off += hdr;
  switch (proto) {
    case kEtherTransparentBridging: return decode_ethernet(c, off, out);
    case kEtherErspan2:  // type I has no sequence number and no ERSPAN header
      if (has_seq && c.has(off, 8)) note_mirror_session(load_be16(c.base + off + 2) & 0x3FF, out);
      return decode_ethernet(c, has_seq ? off + 8 : off, out);
    case kEtherErspan3: {
      if (!c.has(off, 12)) return FrameKind::kOther;
      note_mirror_session(load_be16(c.base + off + 2) & 0x3FF, out);
      bool optional_subheader = c.base[off + 11] & 0x01;
      return decode_ethernet(c, off + 12 + (optional_subheader ? 8 : 0), out);
    }
    default:
      if (++c.depth > kMaxEncapsulation) return FrameKind::kOther;
      forget_vlan(out);  // IP in GRE: the flow's own Ethernet header is not carried
      return decode_ethertype(c, proto, off, out);
  }
}

// An IPv4 header's fields the frame keeps (its 20 bytes were checked). The addresses replace
// any before (an outer IPv6 header of a tunnel). This and read_bth are shared by the general
// decoder and the straight path, so the two read these headers alike by construction; inlined
// by force in both (per packet: the compiler left read_bth a call, 6 instructions a packet).
[[gnu::always_inline]] inline void read_ipv4_fields(const uint8_t* p, RoceFrame& out) {
  out.src = IpAddress::from_v4(p + 12);
  out.dst = IpAddress::from_v4(p + 16);
  out.dscp = p[1] >> 2;
  out.ecn = p[1] & 0x3;
  out.ttl = p[8];
  out.ip_id = load_be16(p + 4);
}

// The 12 bytes of a BTH (captured) into `h`, as three big-endian words: a load each instead of
// a load per byte.
[[gnu::always_inline]] inline const Bth& read_bth(const uint8_t* b, Bth& h) {
  const uint32_t w0 = load_be32(b), w1 = load_be32(b + 4), w2 = load_be32(b + 8);
  h.opcode = uint8_t(w0 >> 24);
  h.solicited = w0 & 0x800000;
  h.migreq = w0 & 0x400000;
  h.pad = (w0 >> 20) & 0x3;
  h.tver = (w0 >> 16) & 0x0f;
  h.pkey = uint16_t(w0);
  h.fecn = w1 & 0x80000000;
  h.becn = w1 & 0x40000000;
  h.dest_qp = w1 & 0xFFFFFF;
  h.ack_req = w2 & 0x80000000;
  h.psn = w2 & 0xFFFFFF;
  return h;
}

// The extension headers `ext` names, in wire order, from `e` (their bytes were checked).
void decode_extensions(const uint8_t* e, uint16_t ext, RoceFrame& out) {
  if (ext & kExtRdeth) e += 4;
  if (ext & kExtDeth) {
    out.deth_qkey = load_be32(e);
    out.deth_src_qp = load_be32(e + 4) & 0xFFFFFF;
    e += 8;
  }
  if (ext & kExtXrceth) e += 4;
  if (ext & kExtReth) {
    out.reth.va = load_be64(e);
    out.reth.rkey = load_be32(e + 8);
    out.reth.dma_len = load_be32(e + 12);
    e += 16;
  }
  if (ext & kExtAtomicEth) e += 28;
  if (ext & kExtAeth) {
    const uint32_t w = load_be32(e);
    out.aeth.syndrome = uint8_t(w >> 24);
    out.aeth.msn = w & 0xFFFFFF;
    e += 4;
  }
  if (ext & kExtAtomicAckEth) e += 8;
  if (ext & kExtImmDt) {
    out.immediate = load_be32(e);
    e += 4;
  }
  if (ext & kExtIeth) out.invalidate_rkey = load_be32(e);
}

FrameKind decode_bth(Cursor& c, uint32_t off, uint32_t roce_len, RoceFrame& out) {
  // roce_len = UDP payload length on the wire: BTH + ext + payload + pad + ICRC.
  if (roce_len < 12 + 4) return malformed(out, "UDP payload too short for BTH and ICRC");
  if (!c.has(off, 12)) return malformed(out, "BTH cut by the snap length");
  const Bth& h = read_bth(c.base + off, out.bth);
  const IbOpcodeInfo& info = ib_opcode_info(h.opcode);
  if (!info.name) return malformed(out, "reserved BTH opcode");
  out.op = &info;
  uint32_t ext_len = h.opcode == kOpcodeCnp ? 16 : info.ext_len;
  if (roce_len < 12 + ext_len + 4 + h.pad) return malformed(out, "RoCEv2 packet shorter than its headers");
  out.payload_len = roce_len - 12 - ext_len - 4 - h.pad;
  off += 12;
  out.kind = FrameKind::kRoce;
  if (h.opcode == kOpcodeCnp) {
    out.payload_offset = off + 16;
    out.payload_len = 0;
    return out.kind;
  }
  if (!c.has(off, ext_len)) return malformed(out, "extension headers cut by the snap length");
  out.ext = info.ext;
  if (info.ext) decode_extensions(c.base + off, info.ext, out);  // most packets have none
  out.payload_offset = off + ext_len;
  uint32_t avail = out.payload_offset <= c.cap_len ? c.cap_len - out.payload_offset : 0;
  out.payload_captured = avail < out.payload_len ? avail : out.payload_len;
  return out.kind;
}

FrameKind decode_udp(Cursor& c, uint32_t off, uint32_t ip_payload_len, RoceFrame& out) {
  if (ip_payload_len < 8) return FrameKind::kOther;
  if (!c.has(off, 8)) return cut_before_roce(c, out, "UDP header cut by the snap length");
  uint16_t sport = load_be16(c.base + off);
  uint16_t dport = load_be16(c.base + off + 2);
  uint16_t udp_len = load_be16(c.base + off + 4);
  if (dport == kVxlanPort || dport == kVxlanLinuxPort) {
    if (udp_len < 16 || !c.has(off + 8, 8)) return FrameKind::kOther;
    c.first_fragment = false;
    c.in_tunnel = true;
    return decode_ethernet(c, off + 16, out);
  }
  if (dport != kRoceV2Port || c.first_fragment) return FrameKind::kOther;
  out.src_port = sport;
  out.dst_port = dport;
  if (udp_len < 8 || udp_len > ip_payload_len) return malformed(out, "UDP length inconsistent with IP length");
  // Inside a tunnel the datagram may go on past the outer frame: the mirror cut it (its bytes are
  // then missing as beyond a snap length, the lengths still say the packet's size).
  if (off + uint64_t(udp_len) > c.wire_len && !c.tunnelled())
    return malformed(out, "UDP datagram longer than the frame");
  return decode_bth(c, off + 8, udp_len - 8u, out);
}

FrameKind decode_transport(Cursor& c, uint8_t proto, uint32_t off, uint32_t len, RoceFrame& out) {
  switch (proto) {
    case 17: return decode_udp(c, off, len, out);
    case 47: return decode_gre(c, off, len, out);
    default: return FrameKind::kOther;
  }
}

FrameKind decode_ipv4(Cursor& c, uint32_t off, RoceFrame& out) {
  if (!c.has(off, 20)) return cut_before_roce(c, out, "IPv4 header cut by the snap length");
  const uint8_t* p = c.base + off;
  if ((p[0] >> 4) != 4) return FrameKind::kOther;
  uint32_t ihl = (p[0] & 0x0f) * 4u;
  uint16_t total = load_be16(p + 2);
  if (ihl < 20 || total < ihl) return FrameKind::kOther;
  if (!c.has(off, ihl)) return cut_before_roce(c, out, "IPv4 options cut by the snap length");
  uint16_t frag = load_be16(p + 6);
  // Fragments are not RoCEv2. But a mirror's tunnel packet fragmented on its way (a 4 KB frame
  // mirrored over a 1500-byte path) carries the mirrored frame's headers in its first fragment:
  // decoded as a truncated mirror (the later fragments hold the rest of the payload only).
  if (frag & 0x1fff) return FrameKind::kOther;
  if (frag & 0x2000) {
    if (p[9] != 47 && p[9] != 17) return FrameKind::kOther;
    c.first_fragment = true;
  }
  // Only the outermost IP header of a tunnel is the mirror's; the innermost one is the flow's.
  read_ipv4_fields(p, out);
  return decode_transport(c, p[9], off + ihl, total - ihl, out);
}

FrameKind decode_ipv6(Cursor& c, uint32_t off, RoceFrame& out) {
  if (!c.has(off, 40)) return cut_before_roce(c, out, "IPv6 header cut by the snap length");
  const uint8_t* p = c.base + off;
  if ((p[0] >> 4) != 6) return FrameKind::kOther;
  uint8_t tclass = uint8_t((p[0] & 0x0f) << 4 | p[1] >> 4);
  uint32_t len = load_be16(p + 4);
  uint8_t next = p[6];
  out.src = IpAddress::from_v6(p + 8);
  out.dst = IpAddress::from_v6(p + 24);
  out.dscp = tclass >> 2;
  out.ecn = tclass & 0x3;
  out.ttl = p[7];
  out.ip_id = 0;
  off += 40;
  // Skip hop-by-hop, routing, destination options and atomic fragment headers (bounded).
  for (int i = 0; i < 8 && (next == 0 || next == 43 || next == 60 || next == kIpv6Fragment); ++i) {
    if (!c.has(off, 8)) return cut_before_roce(c, out, "IPv6 extension headers cut by the snap length");
    uint32_t hlen = (c.base[off + 1] + 1u) * 8u;
    if (next == kIpv6Fragment) {
      // RFC 6946: offset 0 and no more fragments is an "atomic fragment", a whole packet that
      // carries a fragment header; any real fragment is not a RoCEv2 packet we can read.
      uint16_t frag = load_be16(c.base + off + 2);
      // The first fragment of a mirror's tunnel packet carries the mirrored headers (decode_ipv4).
      if ((frag & 0xFFF8) == 0 && (frag & 1)) c.first_fragment = true;
      else if ((frag & 0xFFF9) != 0) return FrameKind::kOther;
      hlen = 8;
    }
    if (hlen > len) return FrameKind::kOther;
    next = c.base[off];
    off += hlen;
    len -= hlen;
  }
  return decode_transport(c, next, off, len, out);
}

// The layout nearly every RoCEv2 frame has, decoded in one straight pass: Ethernet with at most
// one 802.1Q tag, IPv4 without options or fragmentation, UDP to 4791, a BTH whose opcode is known
// (not a CNP) and all its extension headers captured, the lengths consistent. It gives exactly
// what the general decoder gives for such a frame (tests/unit/decode_test.cpp compares the two on
// every layout and on mutated frames); for any other frame it returns false having set nothing.
bool decode_common_layout(const uint8_t* f, uint32_t cap_len, uint32_t wire_len, RoceFrame& out) {
  constexpr uint32_t kMin = 14 + 20 + 8 + 12;  // Ethernet, IPv4, UDP, BTH
  if (cap_len < kMin) return false;
  uint32_t off = 14;
  uint16_t type = load_be16(f + 12);
  uint16_t tci = 0;
  const bool tagged = type == kEtherVlan;
  if (tagged) {
    if (cap_len < kMin + 4) return false;
    tci = load_be16(f + 14);
    type = load_be16(f + 16);
    off = 18;
  }
  if (type != kEtherIpv4) return false;
  const uint8_t* ip = f + off;
  const uint32_t total = load_be16(ip + 2);
  if (ip[0] != 0x45 || ip[9] != 17 || (load_be16(ip + 6) & 0x3fff) != 0 || total < 20 + 8) return false;
  const uint8_t* udp = ip + 20;
  const uint32_t udp_len = load_be16(udp + 4);
  if (load_be16(udp + 2) != kRoceV2Port || udp_len < 8 + 12 + 4 || udp_len > total - 20) return false;
  off += 20 + 8;  // the BTH
  if (uint64_t(off) - 8 + udp_len > std::max(wire_len, cap_len)) return false;
  const uint8_t* b = f + off;
  const uint32_t w0 = load_be32(b);
  const uint8_t opcode = uint8_t(w0 >> 24);
  const IbOpcodeInfo& info = ib_opcode_info(opcode);
  const uint32_t pad = (w0 >> 20) & 0x3;
  const uint32_t roce_len = udp_len - 8;
  if (!info.name || opcode == kOpcodeCnp || roce_len < 12 + info.ext_len + 4 + pad ||
      cap_len - off - 12 < info.ext_len)
    return false;
  out.kind = FrameKind::kRoce;
  read_ipv4_fields(ip, out);
  out.src_port = load_be16(udp);
  out.dst_port = kRoceV2Port;
  if (tagged) {
    out.vlan_count = 1;
    out.vlan_id = tci & 0x0fff;
    out.vlan_pcp = uint8_t(tci >> 13);
  }
  read_bth(b, out.bth);
  out.op = &info;
  out.ext = info.ext;
  if (info.ext) decode_extensions(b + 12, info.ext, out);
  out.payload_len = roce_len - 12 - info.ext_len - 4 - pad;
  out.payload_offset = off + 12 + info.ext_len;
  const uint32_t avail = cap_len - out.payload_offset;
  out.payload_captured = avail < out.payload_len ? avail : out.payload_len;
  return true;
}

// The general decoder, into a frame already cleared.
FrameKind decode_any_layout(LinkType link, const uint8_t* frame, uint32_t cap_len, uint32_t wire_len, RoceFrame& out) {
  if (wire_len < cap_len) wire_len = cap_len;  // some writers store 0 or garbage
  Cursor c{frame, cap_len, wire_len};
  switch (link) {
    case LinkType::kEthernet: return decode_ethernet(c, 0, out);
    case LinkType::kLinuxSll:
      if (!c.has(0, 16)) return FrameKind::kOther;
      if (load_be16(frame + 14) == kEtherMacControl) return decode_mac_control(c, 16, out);
      return decode_ethertype(c, load_be16(frame + 14), 16, out);
    case LinkType::kLinuxSll2:
      if (!c.has(0, 20)) return FrameKind::kOther;
      return decode_ethertype(c, load_be16(frame), 20, out);
    case LinkType::kRawIp:
      if (!c.has(0, 1)) return FrameKind::kOther;
      return (frame[0] >> 4) == 6 ? decode_ipv6(c, 0, out) : decode_ipv4(c, 0, out);
    case LinkType::kNull: {
      if (!c.has(0, 4)) return FrameKind::kOther;
      uint32_t family = load_le32(frame);
      if (family > 0xffff) family = load_be32(frame);
      if (family == 2) return decode_ipv4(c, 4, out);
      if (family == 24 || family == 28 || family == 30) return decode_ipv6(c, 4, out);
      return FrameKind::kOther;
    }
    case LinkType::kUnsupported: break;
  }
  return FrameKind::kOther;
}

}  // namespace

FrameKind decode_roce_frame(LinkType link, const uint8_t* frame, uint32_t cap_len, uint32_t wire_len,
                            RoceFrame& out) {
  out = RoceFrame{};
  if (link == LinkType::kEthernet && decode_common_layout(frame, cap_len, wire_len, out)) return out.kind;
  return decode_any_layout(link, frame, cap_len, wire_len, out);
}

FrameKind decode_roce_frame_general(LinkType link, const uint8_t* frame, uint32_t cap_len, uint32_t wire_len,
                                    RoceFrame& out) {
  out = RoceFrame{};
  return decode_any_layout(link, frame, cap_len, wire_len, out);
}

}  // namespace rdmatel
