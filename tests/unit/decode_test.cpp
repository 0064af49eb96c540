// SPDX-License-Identifier: GPL-2.0-or-later
// Frame decoder: every layer, every extension-header layout, and never a read past the bytes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <memory>

#include "engine/src/decode/roce_frame.h"
#include "tests/support/frame_builder.h"

namespace rdmatel {
namespace {

using test::Bytes;
using test::RoceSpec;

FrameKind decode(const Bytes& b, RoceFrame& out, LinkType link = LinkType::kEthernet) {
  return decode_roce_frame(link, b.data(), uint32_t(b.size()), uint32_t(b.size()), out);
}

TEST(Decode, SendOnlyIpv4) {
  RoceSpec s;
  s.payload = Bytes(64, 0xAA);
  Bytes f = test::build_roce(s);
  RoceFrame r;
  ASSERT_EQ(decode(f, r), FrameKind::kRoce);
  EXPECT_EQ(r.src.to_string(), "10.0.0.1");
  EXPECT_EQ(r.dst.to_string(), "10.0.0.2");
  EXPECT_EQ(r.bth.opcode, 0x04);
  EXPECT_EQ(r.bth.dest_qp, 0x123456u);
  EXPECT_EQ(r.bth.psn, 0xABCDEFu);
  EXPECT_EQ(r.op->op_class, IbOpClass::kSend);
  EXPECT_EQ(r.op->position, MsgPosition::kOnly);
  EXPECT_EQ(r.payload_len, 64u);
  EXPECT_EQ(r.payload_captured, 64u);
  // 14 Ethernet + 20 IPv4 + 8 UDP + 12 BTH.
  EXPECT_EQ(r.payload_offset, 54u);
  EXPECT_EQ(r.ecn, 2);
  EXPECT_EQ(r.dscp, 26);
}

TEST(Decode, TwoVlanTagsIpv6) {
  RoceSpec s;
  s.ipv6 = true;
  s.vlans = 2;
  s.ecn = 3;
  s.payload = Bytes(16, 1);
  Bytes f = test::build_roce(s);
  RoceFrame r;
  ASSERT_EQ(decode(f, r), FrameKind::kRoce);
  EXPECT_TRUE(r.src.v6);
  EXPECT_EQ(r.src.to_string(), "fd00::1");
  EXPECT_EQ(r.vlan_count, 2);
  EXPECT_EQ(r.vlan_id, 100);
  EXPECT_EQ(r.vlan_pcp, 3);
  EXPECT_TRUE(r.ecn_ce());
  EXPECT_EQ(r.payload_offset, 14u + 8u + 40u + 8u + 12u);
  EXPECT_EQ(r.payload_len, 16u);
}

TEST(Decode, AnySourcePortButOnlyDestination4791) {
  RoceSpec s;
  s.sport = 69;  // TFTP's port: Wireshark may hand this to another dissector, we do not
  Bytes f = test::build_roce(s);
  RoceFrame r;
  EXPECT_EQ(decode(f, r), FrameKind::kRoce);
  s.sport = 4791;
  s.dport = 4792;
  f = test::build_roce(s);
  EXPECT_EQ(decode(f, r), FrameKind::kOther);
}

TEST(Decode, WriteFirstWithRethAndPad) {
  RoceSpec s;
  s.opcode = 0x06;  // RC RDMA WRITE FIRST
  s.ext = test::reth(0x1122334455667788ULL, 0xCAFEBABE, 8191);
  s.payload = Bytes(4093, 7);
  s.pad = 3;
  Bytes f = test::build_roce(s);
  RoceFrame r;
  ASSERT_EQ(decode(f, r), FrameKind::kRoce);
  ASSERT_TRUE(r.has(kExtReth));
  EXPECT_EQ(r.reth.va, 0x1122334455667788ULL);
  EXPECT_EQ(r.reth.rkey, 0xCAFEBABEu);
  EXPECT_EQ(r.reth.dma_len, 8191u);
  EXPECT_EQ(r.bth.pad, 3);
  EXPECT_EQ(r.payload_len, 4093u);  // pad excluded
}

TEST(Decode, WriteOnlyImmediateHasRethThenImmDt) {
  RoceSpec s;
  s.opcode = 0x0B;
  s.ext = test::reth(1, 2, 3);
  test::put32(s.ext, 0xDEADBEEF);
  s.payload = Bytes(3, 0);
  s.pad = 1;
  Bytes f = test::build_roce(s);
  RoceFrame r;
  ASSERT_EQ(decode(f, r), FrameKind::kRoce);
  EXPECT_TRUE(r.has(kExtReth));
  EXPECT_TRUE(r.has(kExtImmDt));
  EXPECT_EQ(r.immediate, 0xDEADBEEFu);
  EXPECT_EQ(r.payload_len, 3u);
}

TEST(Decode, AcknowledgeAndNak) {
  RoceSpec s;
  s.opcode = 0x11;
  s.ext = test::aeth(0x1F, 77);
  Bytes f = test::build_roce(s);
  RoceFrame r;
  ASSERT_EQ(decode(f, r), FrameKind::kRoce);
  EXPECT_EQ(r.aeth.syndrome, 0x1F);
  EXPECT_EQ(r.aeth.msn, 77u);
  EXPECT_FALSE(r.is_nak());
  s.ext = test::aeth(0x60, 78);  // NAK, PSN sequence error
  f = test::build_roce(s);
  ASSERT_EQ(decode(f, r), FrameKind::kRoce);
  EXPECT_TRUE(r.is_nak());
  EXPECT_STREQ(nak_code_name(r.aeth.syndrome), "PSN sequence error");
  EXPECT_STREQ(nak_code_name(0x62), "remote access error");
}

TEST(Decode, SendWithInvalidateCarriesIeth) {
  RoceSpec s;
  s.opcode = 0x17;
  test::put32(s.ext, 0x00ABCD01);
  s.payload = test::cqe(9, 0);
  Bytes f = test::build_roce(s);
  RoceFrame r;
  ASSERT_EQ(decode(f, r), FrameKind::kRoce);
  EXPECT_TRUE(r.has(kExtIeth));
  EXPECT_EQ(r.invalidate_rkey, 0x00ABCD01u);
  EXPECT_EQ(r.payload_len, 16u);
}

TEST(Decode, UdSendHasDeth) {
  RoceSpec s;
  s.opcode = 0x64;
  test::put32(s.ext, 0x80010000);  // Q_Key
  test::put32(s.ext, 0x00000001);  // resv8 + source QP 1
  s.payload = Bytes(256, 0);
  Bytes f = test::build_roce(s);
  RoceFrame r;
  ASSERT_EQ(decode(f, r), FrameKind::kRoce);
  EXPECT_EQ(r.op->transport, IbTransport::kUD);
  EXPECT_EQ(r.deth_qkey, 0x80010000u);
  EXPECT_EQ(r.deth_src_qp, 1u);
  EXPECT_EQ(r.payload_len, 256u);
}

TEST(Decode, CnpIsRecognised) {
  RoceSpec s;
  s.opcode = 0x81;
  s.ext = Bytes(16, 0);
  Bytes f = test::build_roce(s);
  RoceFrame r;
  ASSERT_EQ(decode(f, r), FrameKind::kRoce);
  EXPECT_EQ(r.op->op_class, IbOpClass::kCnp);
}

TEST(Decode, OpcodeTableMatchesIbta) {
  // Spot checks against IBTA vol. 1 table 38.
  EXPECT_STREQ(ib_opcode_info(0x0C).name, "RC_RDMA_READ_REQUEST");
  EXPECT_EQ(ib_opcode_info(0x0C).ext_len, 16);
  EXPECT_STREQ(ib_opcode_info(0x10).name, "RC_RDMA_READ_RESPONSE_ONLY");
  EXPECT_EQ(ib_opcode_info(0x12).ext_len, 12);  // AETH + AtomicAckETH
  EXPECT_EQ(ib_opcode_info(0x13).ext_len, 28);  // AtomicETH
  EXPECT_EQ(ib_opcode_info(0x15).name, nullptr);
  EXPECT_STREQ(ib_opcode_info(0x2A).name, "UC_RDMA_WRITE_ONLY");
  EXPECT_EQ(ib_opcode_info(0x2C).name, nullptr);  // UC has no READ
  EXPECT_EQ(ib_opcode_info(0x40).ext_len, 12);    // RD SEND FIRST: RDETH + DETH
  EXPECT_EQ(ib_opcode_info(0x4A).ext_len, 28);    // RD WRITE ONLY: RDETH + DETH + RETH
  EXPECT_EQ(ib_opcode_info(0xAA).ext_len, 20);    // XRC WRITE ONLY: XRCETH + RETH
  EXPECT_EQ(ib_opcode_info(0xB7).ext_len, 8);     // XRC SEND ONLY INV: XRCETH + IETH
  EXPECT_EQ(ib_opcode_info(0x66).name, nullptr);  // UD has SEND ONLY (+IMM) only
}

TEST(Decode, ReservedOpcodeIsMalformed) {
  RoceSpec s;
  s.opcode = 0x15;
  Bytes f = test::build_roce(s);
  RoceFrame r;
  EXPECT_EQ(decode(f, r), FrameKind::kMalformed);
  EXPECT_NE(r.error, nullptr);
}

TEST(Decode, UdpLengthShorterThanHeadersIsMalformed) {
  RoceSpec s;
  s.opcode = 0x0A;  // WRITE ONLY needs a 16-byte RETH
  s.ext = Bytes(4, 0);
  Bytes f = test::build_roce(s);
  RoceFrame r;
  EXPECT_EQ(decode(f, r), FrameKind::kMalformed);
}

TEST(Decode, SnapLengthTruncatedPayloadCountsWireLength) {
  RoceSpec s;
  s.opcode = 0x07;  // WRITE MIDDLE
  s.payload = Bytes(4096, 0x55);
  Bytes f = test::build_roce(s);
  RoceFrame r;
  uint32_t snap = 128;
  ASSERT_EQ(decode_roce_frame(LinkType::kEthernet, f.data(), snap, uint32_t(f.size()), r), FrameKind::kRoce);
  EXPECT_EQ(r.payload_len, 4096u);
  EXPECT_EQ(r.payload_captured, 128u - 54u);
}

TEST(Decode, EveryTruncationIsSafe) {
  // Cut a frame at every length; each prefix lives in its own heap block so a read past the end
  // is caught by AddressSanitizer builds.
  RoceSpec s;
  s.vlans = 1;
  s.opcode = 0x0B;
  s.ext = test::reth(1, 2, 3);
  test::put32(s.ext, 4);
  s.payload = Bytes(33, 9);
  s.pad = 3;
  Bytes f = test::build_roce(s);
  for (size_t n = 0; n <= f.size(); ++n) {
    auto copy = std::make_unique<uint8_t[]>(n ? n : 1);
    std::memcpy(copy.get(), f.data(), n);
    RoceFrame r;
    FrameKind k = decode_roce_frame(LinkType::kEthernet, copy.get(), uint32_t(n), uint32_t(f.size()), r);
    if (n < 14 + 4 + 20 + 8) EXPECT_EQ(k, FrameKind::kOther) << n;
    else if (n < 14 + 4 + 20 + 8 + 12 + 20) EXPECT_EQ(k, FrameKind::kMalformed) << n;
    else EXPECT_EQ(k, FrameKind::kRoce) << n;
  }
}

TEST(Decode, RandomBytesNeverCrash) {
  uint64_t x = 0x9E3779B97F4A7C15ULL;
  for (int i = 0; i < 20000; ++i) {
    size_t n = size_t(x % 200);
    auto buf = std::make_unique<uint8_t[]>(n + 1);
    for (size_t j = 0; j < n; ++j) {
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
      buf[j] = uint8_t(x);
    }
    // Make the headers plausible often enough to reach the deep layers.
    if (n > 54 && (i & 1)) {
      buf[12] = 0x08; buf[13] = 0x00; buf[14] = 0x45; buf[23] = 17; buf[36] = 0x12; buf[37] = 0xB7;
    }
    RoceFrame r;
    for (LinkType lt : {LinkType::kEthernet, LinkType::kRawIp, LinkType::kLinuxSll, LinkType::kLinuxSll2, LinkType::kNull})
      decode_roce_frame(lt, buf.get(), uint32_t(n), uint32_t(n + (x & 0xff)), r);
    x += 0x9E3779B97F4A7C15ULL;
  }
}

// decode_roce_frame takes a straight path for the common layout (Ethernet, at most one 802.1Q
// tag, IPv4 without options, UDP to 4791, a known BTH opcode) and the general decoder for the
// rest: both must give the same frame, member for member, for every opcode, extension layout,
// pad, tagging, snap length and wire length, and for frames with a byte of their headers changed.
bool same_frame(const RoceFrame& a, const RoceFrame& b) {
  return a.kind == b.kind && a.error == b.error && a.src == b.src && a.dst == b.dst && a.src_port == b.src_port &&
         a.dst_port == b.dst_port && a.ecn == b.ecn && a.dscp == b.dscp && a.ttl == b.ttl && a.ip_id == b.ip_id &&
         a.vlan_count == b.vlan_count && a.vlan_id == b.vlan_id && a.vlan_pcp == b.vlan_pcp &&
         a.bth.opcode == b.bth.opcode && a.bth.solicited == b.bth.solicited && a.bth.migreq == b.bth.migreq &&
         a.bth.pad == b.bth.pad && a.bth.tver == b.bth.tver && a.bth.pkey == b.bth.pkey && a.bth.fecn == b.bth.fecn &&
         a.bth.becn == b.bth.becn && a.bth.dest_qp == b.bth.dest_qp && a.bth.ack_req == b.bth.ack_req &&
         a.bth.psn == b.bth.psn && a.op == b.op && a.ext == b.ext && a.reth.va == b.reth.va &&
         a.reth.rkey == b.reth.rkey && a.reth.dma_len == b.reth.dma_len && a.aeth.syndrome == b.aeth.syndrome &&
         a.aeth.msn == b.aeth.msn && a.immediate == b.immediate && a.invalidate_rkey == b.invalidate_rkey &&
         a.deth_src_qp == b.deth_src_qp && a.deth_qkey == b.deth_qkey && a.payload_len == b.payload_len &&
         a.payload_offset == b.payload_offset && a.payload_captured == b.payload_captured &&
         a.pfc.enabled == b.pfc.enabled && std::equal(a.pfc.quanta, a.pfc.quanta + 8, b.pfc.quanta);
}

// Decodes `n` bytes of `f` both ways (each in a heap block of its own, so that a read past the
// end is caught under AddressSanitizer) and says whether they agree; `roce` counts RoCE results.
bool decoded_alike(const Bytes& f, size_t n, uint32_t wire, int& roce) {
  auto copy = std::make_unique<uint8_t[]>(n ? n : 1);
  std::memcpy(copy.get(), f.data(), n);
  RoceFrame fast, general;
  fast.bth.psn = 77;  // the results must not depend on what the frame held before
  FrameKind k = decode_roce_frame(LinkType::kEthernet, copy.get(), uint32_t(n), wire, fast);
  FrameKind g = decode_roce_frame_general(LinkType::kEthernet, copy.get(), uint32_t(n), wire, general);
  roce += k == FrameKind::kRoce;
  return k == g && same_frame(fast, general);
}

TEST(Decode, StraightPathAgreesWithTheGeneralDecoder) {
  uint64_t x = 0x2545F4914F6CDD1DULL;
  auto next = [&x] {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return x;
  };
  int roce = 0, frames = 0;
  for (int opcode = 0; opcode < 256; ++opcode)
    for (int vlans = 0; vlans <= 2; ++vlans)
      for (uint8_t pad : {0, 3}) {
        RoceSpec s;
        s.vlans = vlans;
        s.opcode = uint8_t(opcode);
        s.pad = pad;
        s.ack_req = opcode & 1;
        s.ecn = uint8_t(opcode & 3);
        const uint8_t ext_len = ib_opcode_info(uint8_t(opcode)).ext_len;
        for (int i = 0; i < ext_len; ++i) s.ext.push_back(uint8_t(next()));
        s.payload = Bytes(size_t(next() % 80), 0x5A);
        const Bytes f = test::build_roce(s);
        const uint32_t size = uint32_t(f.size());
        for (size_t n = 0; n <= f.size(); ++n, ++frames)
          ASSERT_TRUE(decoded_alike(f, n, size, roce)) << "opcode " << opcode << " vlans " << vlans << " cut at " << n;
        for (uint32_t wire : {0u, size - 1, size + 100}) {
          ++frames;
          ASSERT_TRUE(decoded_alike(f, f.size(), wire, roce)) << "opcode " << opcode << " wire length " << wire;
        }
        // IP and UDP lengths that agree with each other but claim more than the frame carried.
        if (vlans == 0) {
          Bytes longer = f;
          longer[17] = uint8_t(longer[17] + 4);  // IPv4 total length (low byte)
          longer[39] = uint8_t(longer[39] + 4);  // UDP length (low byte)
          for (uint32_t wire : {size, size + 4}) {
            ++frames;
            ASSERT_TRUE(decoded_alike(longer, longer.size(), wire, roce)) << "opcode " << opcode << " longer, wire " << wire;
          }
        }
        // One header byte changed (Ethernet type, IP version, length, flags, protocol, ports,
        // UDP length, BTH), at a time, to a random value or to a neighbour of the true one.
        for (int m = 0; m < 24; ++m, ++frames) {
          Bytes mutated = f;
          const size_t at = size_t(next() % std::min<size_t>(f.size(), 14 + 8 + 20 + 8 + 12 + 8));
          mutated[at] = (m & 1) ? uint8_t(next()) : uint8_t(mutated[at] + ((m & 2) ? 1 : -1));
          ASSERT_TRUE(decoded_alike(mutated, mutated.size(), size, roce)) << "opcode " << opcode << " byte " << at;
        }
      }
  EXPECT_GT(frames, 100000);
  EXPECT_GT(roce, 10000);  // the comparison reaches decoded RoCE packets, not only rejections
}

TEST(Decode, ErspanTypeTwoIsDecapsulated) {
  RoceSpec s;
  s.payload = Bytes(64, 0);
  Bytes inner = test::build_roce(s);
  // Outer Ethernet / IPv4 (GRE) / GRE with sequence number, proto 0x88BE / ERSPAN II header / inner.
  Bytes gre;
  test::put16(gre, 0x1000);
  test::put16(gre, 0x88BE);
  test::put32(gre, 1);           // sequence
  test::put32(gre, 0x10010000);  // ERSPAN II: ver 1, VLAN 0, COS, session
  test::put32(gre, 0);
  gre.insert(gre.end(), inner.begin(), inner.end());
  Bytes f = {0x02, 0, 0, 0, 0, 9, 0x02, 0, 0, 0, 0, 8};
  test::put16(f, 0x0800);
  f.push_back(0x45);
  f.push_back(0);
  test::put16(f, uint16_t(20 + gre.size()));
  test::put32(f, 0);
  f.push_back(64);
  f.push_back(47);
  test::put16(f, 0);
  for (uint8_t b : {192, 168, 0, 1, 192, 168, 0, 2}) f.push_back(b);
  f.insert(f.end(), gre.begin(), gre.end());
  RoceFrame r;
  ASSERT_EQ(decode(f, r), FrameKind::kRoce);
  EXPECT_EQ(r.src.to_string(), "10.0.0.1");  // the mirrored flow's addresses, not the tunnel's
  EXPECT_EQ(r.payload_len, 64u);
}

TEST(Decode, PfcFrame) {
  Bytes f = {0x01, 0x80, 0xC2, 0, 0, 0x01, 0x02, 0, 0, 0, 0, 1};
  test::put16(f, 0x8808);
  test::put16(f, 0x0101);
  test::put16(f, 0x0008);  // priority 3 enabled
  for (int i = 0; i < 8; ++i) test::put16(f, uint16_t(i == 3 ? 0xFFFF : 0));
  RoceFrame r;
  ASSERT_EQ(decode(f, r), FrameKind::kPfc);
  EXPECT_EQ(r.pfc.enabled, 0x08);
  EXPECT_EQ(r.pfc.quanta[3], 0xFFFF);
}

// Every class-enable vector, with quanta 0 (resume), 0xFFFF (the longest pause) and others per
// priority, in a frame padded to the 60-byte minimum: each priority's pause time is read from its
// own slot whatever the vector says (the engine ignores the slots of priorities not enabled).
TEST(Decode, PfcEveryClassEnableVectorAndQuanta) {
  for (unsigned enabled = 0; enabled < 256; ++enabled) {
    uint16_t quanta[8];
    for (int i = 0; i < 8; ++i) quanta[i] = uint16_t(i == 0 ? 0 : i == 7 ? 0xFFFF : (enabled * 257 + i) & 0xFFFF);
    const Bytes f = test::pfc_frame(uint8_t(enabled), quanta);
    ASSERT_EQ(f.size(), 60u);
    RoceFrame r;
    ASSERT_EQ(decode(f, r), FrameKind::kPfc) << enabled;
    EXPECT_EQ(r.pfc.enabled, enabled);
    for (int i = 0; i < 8; ++i) EXPECT_EQ(r.pfc.quanta[i], quanta[i]) << enabled << " priority " << i;
  }
}

// The class-enable vector's reserved high byte is not a priority; an 802.3x PAUSE (opcode
// 0x0001) is not PFC; a frame cut before its eight pause times is not one either (no crash).
TEST(Decode, PfcReservedBitsPauseAndTruncation) {
  const uint16_t quanta[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  Bytes f = test::pfc_frame(0x81, quanta);
  f[16] = 0xFF;  // the reserved high byte of the class-enable vector
  RoceFrame r;
  ASSERT_EQ(decode(f, r), FrameKind::kPfc);
  EXPECT_EQ(r.pfc.enabled, 0x81);
  Bytes pause = test::pfc_frame(0x01, quanta);
  pause[14] = 0x00;  // opcode 0x0001: 802.3x PAUSE
  pause[15] = 0x01;
  RoceFrame p;
  EXPECT_EQ(decode(pause, p), FrameKind::kOther);
  for (size_t n = 14; n < 34; ++n) {
    Bytes cut(f.begin(), f.begin() + long(n));
    RoceFrame c;
    EXPECT_EQ(decode(cut, c), FrameKind::kOther) << n;
  }
}

TEST(Decode, RawIpAndCookedLinkTypes) {
  RoceSpec s;
  Bytes f = test::build_roce(s);
  Bytes ip(f.begin() + 14, f.end());
  RoceFrame r;
  EXPECT_EQ(decode(ip, r, LinkType::kRawIp), FrameKind::kRoce);
  Bytes sll(16, 0);
  sll[14] = 0x08;
  sll.insert(sll.end(), ip.begin(), ip.end());
  EXPECT_EQ(decode(sll, r, LinkType::kLinuxSll), FrameKind::kRoce);
  Bytes sll2(20, 0);
  sll2[0] = 0x08;
  sll2.insert(sll2.end(), ip.begin(), ip.end());
  EXPECT_EQ(decode(sll2, r, LinkType::kLinuxSll2), FrameKind::kRoce);
}

TEST(Decode, Ipv4FragmentsAreNotRoce) {
  RoceSpec s;
  Bytes f = test::build_roce(s);
  f[14 + 6] = 0x20;  // MF
  RoceFrame r;
  EXPECT_EQ(decode(f, r), FrameKind::kOther);
}

}  // namespace
}  // namespace rdmatel
