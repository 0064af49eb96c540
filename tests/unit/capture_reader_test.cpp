// SPDX-License-Identifier: GPL-2.0-or-later
// The fast pcap/pcapng reader on files written here block by block (pcapng spec, IETF draft).
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "rdmatel/capture.h"
#include "tests/support/capture_builder.h"

namespace rdmatel {
namespace {

using test::Bytes;

using TempFile = test::TempCapture;
using test::pcapng::epb;
using test::pcapng::idb;
using test::pcapng::shb;

void le32(Bytes& b, uint32_t v) { test::putle32(b, v); }

Bytes cat(std::initializer_list<Bytes> parts) { return test::concat(parts); }

std::vector<CapturedPacket> read_all(const std::string& path, std::unique_ptr<CaptureSource>& src) {
  std::string err;
  EXPECT_EQ(open_fast_capture(path, src, err), OpenStatus::kOk) << err;
  std::vector<CapturedPacket> out;
  CapturedPacket p;
  while (src && src->next(p)) out.push_back(p);
  return out;
}

TEST(CaptureReader, PcapngSectionsInterfacesAndResolutions) {
  Bytes pkt(60, 0xAB);
  Bytes file = cat({shb(), idb("leafA", 9), idb("leafB", 6, 100), epb(0, 1700000000123456789ULL, pkt),
                    epb(1, 1700000000123456ULL, pkt, 1500),
                    // A second section restarts interface numbering; 2^-10 s resolution.
                    shb(), idb("spine", 0x80 | 10), epb(0, 1024 * 5 + 512, pkt)});
  TempFile f(file);
  std::unique_ptr<CaptureSource> src;
  auto pkts = read_all(f.path, src);
  ASSERT_EQ(pkts.size(), 3u);
  EXPECT_TRUE(src->error().empty()) << src->error();
  ASSERT_EQ(src->interfaces().size(), 3u);
  EXPECT_EQ(src->interfaces()[0].name, "leafA");
  EXPECT_EQ(src->interfaces()[2].name, "spine");
  EXPECT_EQ(pkts[0].frame, 1u);
  EXPECT_EQ(pkts[0].ts, 1700000000123456789LL);
  EXPECT_EQ(pkts[0].interface, 0u);
  EXPECT_EQ(pkts[1].interface, 1u);
  EXPECT_EQ(pkts[1].ts, (1700000000123456LL + 100LL * 1000000) * 1000);  // µs + 100 s offset
  EXPECT_EQ(pkts[1].wire_len, 1500u);
  EXPECT_EQ(pkts[1].cap_len, 60u);
  EXPECT_EQ(pkts[2].interface, 2u);
  EXPECT_EQ(pkts[2].ts, 5500000000LL);  // 5.5 s in 2^-10 units
  EXPECT_EQ(pkts[2].frame, 3u);
  EXPECT_EQ(pkts[2].link, LinkType::kEthernet);
}

TEST(CaptureReader, TruncatedPcapngReportsAndKeepsWhatWasRead) {
  Bytes pkt(60, 1);
  Bytes file = cat({shb(), idb("a", 9), epb(0, 1, pkt), epb(0, 2, pkt)});
  file.resize(file.size() - 10);
  TempFile f(file);
  std::unique_ptr<CaptureSource> src;
  auto pkts = read_all(f.path, src);
  EXPECT_EQ(pkts.size(), 1u);
  EXPECT_NE(src->error().find("truncated"), std::string::npos) << src->error();
  EXPECT_NE(src->error().find("after 1 packets"), std::string::npos) << src->error();
}

TEST(CaptureReader, UndeclaredInterfaceIsAnError) {
  Bytes file = cat({shb(), idb("a", 9), epb(3, 1, Bytes(20, 0))});
  TempFile f(file);
  std::unique_ptr<CaptureSource> src;
  auto pkts = read_all(f.path, src);
  EXPECT_EQ(pkts.size(), 0u);
  EXPECT_NE(src->error().find("interface 3"), std::string::npos) << src->error();
}

TEST(CaptureReader, BadBlockLength) {
  Bytes file = cat({shb(), idb("a", 9)});
  Bytes bad;
  le32(bad, 6);
  le32(bad, 7);  // not a multiple of 4
  le32(bad, 0);
  file.insert(file.end(), bad.begin(), bad.end());
  TempFile f(file);
  std::unique_ptr<CaptureSource> src;
  auto pkts = read_all(f.path, src);
  EXPECT_EQ(pkts.size(), 0u);
  EXPECT_NE(src->error().find("invalid length"), std::string::npos) << src->error();
}

Bytes pcap_header(bool ns, bool big_endian, uint32_t linktype) {
  Bytes b;
  uint32_t magic = ns ? 0xa1b23c4d : 0xa1b2c3d4;
  auto u32 = [&](uint32_t v) { big_endian ? test::put32(b, v) : test::putle32(b, v); };
  auto u16 = [&](uint16_t v) { big_endian ? test::put16(b, v) : test::putle16(b, v); };
  u32(magic);
  u16(2);
  u16(4);
  u32(0);
  u32(0);
  u32(65535);
  u32(linktype);
  return b;
}

Bytes pcap_record(bool big_endian, uint32_t sec, uint32_t frac, const Bytes& data, uint32_t orig) {
  Bytes b;
  auto u32 = [&](uint32_t v) { big_endian ? test::put32(b, v) : test::putle32(b, v); };
  u32(sec);
  u32(frac);
  u32(uint32_t(data.size()));
  u32(orig);
  b.insert(b.end(), data.begin(), data.end());
  return b;
}

TEST(CaptureReader, PcapBothByteOrdersAndResolutions) {
  for (bool be : {false, true})
    for (bool ns : {false, true}) {
      Bytes file = cat({pcap_header(ns, be, 1), pcap_record(be, 100, 250, Bytes(40, 0), 40),
                        pcap_record(be, 101, 999, Bytes(10, 0), 2000)});
      TempFile f(file);
      std::unique_ptr<CaptureSource> src;
      auto pkts = read_all(f.path, src);
      ASSERT_EQ(pkts.size(), 2u);
      EXPECT_EQ(pkts[0].ts, 100 * kNsPerSec + 250 * (ns ? 1 : 1000));
      EXPECT_EQ(pkts[1].wire_len, 2000u);
      EXPECT_EQ(pkts[1].cap_len, 10u);
      EXPECT_EQ(src->interfaces()[0].link, LinkType::kEthernet);
    }
}

TEST(CaptureReader, PcapRecordLongerThanFile) {
  Bytes file = cat({pcap_header(true, false, 1), pcap_record(false, 1, 1, Bytes(40, 0), 40)});
  file.resize(file.size() - 1);
  TempFile f(file);
  std::unique_ptr<CaptureSource> src;
  auto pkts = read_all(f.path, src);
  EXPECT_EQ(pkts.size(), 0u);
  EXPECT_NE(src->error().find("truncated"), std::string::npos);
}

TEST(CaptureReader, OpenErrors) {
  std::unique_ptr<CaptureSource> src;
  std::string err;
  EXPECT_EQ(open_fast_capture("/nonexistent/x.pcapng", src, err), OpenStatus::kError);
  EXPECT_NE(err.find("No such file"), std::string::npos) << err;
  TempFile empty(Bytes{});
  EXPECT_EQ(open_fast_capture(empty.path, src, err), OpenStatus::kError);
  EXPECT_NE(err.find("empty"), std::string::npos) << err;
  TempFile text(Bytes{'h', 'e', 'l', 'l', 'o', '\n'});
  EXPECT_EQ(open_fast_capture(text.path, src, err), OpenStatus::kNotRecognized);
  EXPECT_EQ(open_fast_capture("/tmp", src, err), OpenStatus::kError);
  EXPECT_NE(err.find("directory"), std::string::npos) << err;
}

}  // namespace
}  // namespace rdmatel
