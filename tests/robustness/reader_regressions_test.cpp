// SPDX-License-Identifier: GPL-2.0-or-later
// Regressions of the fast capture reader found by fuzzing (tests/fuzz) and hostile captures.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "rdmatel/capture.h"
#include "tests/support/capture_builder.h"

namespace rdmatel {
namespace {

using test::Bytes;
using test::TempCapture;
namespace png = test::pcapng;

constexpr TimeNs kMax = std::numeric_limits<TimeNs>::max();
constexpr TimeNs kMin = std::numeric_limits<TimeNs>::min();

std::vector<CapturedPacket> read_all(const Bytes& file, std::string* error = nullptr) {
  TempCapture f(file);
  std::unique_ptr<CaptureSource> src;
  std::string err;
  EXPECT_EQ(open_fast_capture(f.path, src, err), OpenStatus::kOk) << err;
  std::vector<CapturedPacket> out;
  CapturedPacket p;
  while (src && src->next(p)) out.push_back(p);
  if (error && src) *error = src->error();
  return out;
}

// fuzz_capture_reader: "signed integer overflow: 7014884185214480 * 1000000000" in TsScale::to_ns
// (if_tsoffset seconds times 10^9 in 64 bits). Stamps now saturate instead of overflowing.
TEST(ReaderRegressions, HugeTsOffsetSaturates) {
  Bytes pkt(60, 0);
  Bytes file = test::concat({png::shb(), png::idb("up", 9, 7014884185214480LL), png::idb("down", 9, -7014884185214480LL),
                             png::epb(0, 5, pkt), png::epb(1, 5, pkt)});
  auto pkts = read_all(file);
  ASSERT_EQ(pkts.size(), 2u);
  EXPECT_EQ(pkts[0].ts, kMax);
  EXPECT_EQ(pkts[1].ts, kMin);
}

// A 64-bit stamp in ns units beyond 2^63 used to wrap to a negative time.
TEST(ReaderRegressions, StampBeyondInt64Saturates) {
  Bytes pkt(60, 0);
  Bytes file = test::concat({png::shb(), png::idb("a", 9), png::idb("b", 0), png::idb("c", 0x80),
                             png::epb(0, ~uint64_t(0), pkt), png::epb(1, uint64_t(1) << 40, pkt),
                             png::epb(2, ~uint64_t(0), pkt)});
  auto pkts = read_all(file);
  ASSERT_EQ(pkts.size(), 3u);
  for (const auto& p : pkts) EXPECT_EQ(p.ts, kMax) << "frame " << p.frame;
}

// Saturation must not disturb ordinary stamps: offsets, microseconds, before 1970.
TEST(ReaderRegressions, OrdinaryStampsStayExact) {
  Bytes pkt(60, 0);
  Bytes file = test::concat({png::shb(), png::idb("a", 6, -100), png::idb("b", 19), png::epb(0, 1700000000123456ULL, pkt),
                             png::epb(0, 5, pkt), png::epb(1, 17000000001234567890ULL, pkt)});
  auto pkts = read_all(file);
  ASSERT_EQ(pkts.size(), 3u);
  EXPECT_EQ(pkts[0].ts, (1700000000123456LL - 100000000LL) * 1000);
  EXPECT_EQ(pkts[1].ts, 5000 - 100LL * 1000000000);
  EXPECT_EQ(pkts[2].ts, 1700000000);  // 10^-19 s units
}

// A section header with a bad byte-order magic was reported as "truncated block (469762048 bytes
// announced)": its length was read in the wrong byte order before the magic was checked.
TEST(ReaderRegressions, BadByteOrderMagicIsNamed) {
  Bytes body;
  test::putle32(body, 0x11223344);
  test::putle16(body, 1);
  test::putle16(body, 0);
  for (int i = 0; i < 8; ++i) body.push_back(0xFF);
  std::string err;
  auto pkts = read_all(test::concat({png::block(0x0A0D0D0A, body), png::idb("a")}), &err);
  EXPECT_EQ(pkts.size(), 0u);
  EXPECT_NE(err.find("bad byte-order magic at byte 0"), std::string::npos) << err;
  // Both byte orders stay readable.
  Bytes pkt(60, 0);
  EXPECT_EQ(read_all(test::concat({png::shb(), png::idb("a"), png::epb(0, 1, pkt)})).size(), 1u);
}

// An interface block whose option runs past the block's end (probing: the first option's length
// set to 0xFFF0) was read without any of its options: its nanosecond stamps read as microseconds
// (a 1 s capture "7,427,411,236 s" long, roles swapped, negative latencies), exit status 0. The
// block is corrupt: reading ends there with a sentence, as Wireshark refuses the file.
TEST(ReaderRegressions, InterfaceOptionPastTheBlockEndsReading) {
  Bytes body;
  test::putle16(body, 1);  // Ethernet
  test::putle16(body, 0);
  test::putle32(body, 262144);
  test::putle16(body, 9);       // if_tsresol
  test::putle16(body, 0xFFF0);  // ... of 65,520 bytes, in a block of 28
  body.push_back(9);
  for (int i = 0; i < 7; ++i) body.push_back(0);
  Bytes pkt(60, 0);
  std::string err;
  auto pkts = read_all(test::concat({png::shb(), png::block(1, body), png::epb(0, 1700000000123456789ULL, pkt)}), &err);
  EXPECT_EQ(pkts.size(), 0u);
  EXPECT_NE(err.find("interface description block 0: option 9 of 65520 bytes runs past the block's end"),
            std::string::npos)
      << err;
  // The same block with its option's true length is read, at its resolution.
  body[10] = 1;
  body[11] = 0;
  pkts = read_all(test::concat({png::shb(), png::block(1, body), png::epb(0, 1700000000123456789ULL, pkt)}), &err);
  ASSERT_EQ(pkts.size(), 1u);
  EXPECT_EQ(pkts[0].ts, 1700000000123456789LL);
}

// A pcap record claiming 300,000 bytes (more than the 262,144 an Ethernet packet may have,
// Wireshark's limit) took the records after it for its data and was measured as a frame: the
// reading now ends at it, every record before it read.
TEST(ReaderRegressions, PcapRecordBeyondTheLinkTypesLimitEndsReading) {
  Bytes pkt(60, 0);
  Bytes big = test::pcap::record(2, 0, pkt);
  big[8] = 0xE0;  // incl_len 300,000 = 0x000493E0
  big[9] = 0x93;
  big[10] = 0x04;
  big[11] = 0x00;
  Bytes tail(300000, 0);
  std::string err;
  auto pkts = read_all(test::concat({test::pcap::header(), test::pcap::record(1, 0, pkt), big, tail}), &err);
  EXPECT_EQ(pkts.size(), 1u);
  EXPECT_NE(err.find("packet record claims 300000 bytes, more than the 262144"), std::string::npos) << err;
}

// `cat x.pcapng | rdmatel analyze /dev/stdin` said "/dev/stdin is empty": a pipe has no size and
// cannot be mapped. The fast reader now leaves pipes and devices to the stream reader (wiretap).
TEST(ReaderRegressions, PipeIsNotEmptyButNotMine) {
  char dir[] = "/tmp/rdmatel_fifo_XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  std::string fifo = std::string(dir) + "/capture.pcapng";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  // Hold the FIFO open for writing so that a reader opening it (the old behaviour) cannot block.
  int hold = open(fifo.c_str(), O_RDWR | O_NONBLOCK);
  ASSERT_GE(hold, 0);
  std::unique_ptr<CaptureSource> src;
  std::string err;
  EXPECT_EQ(open_fast_capture(fifo, src, err), OpenStatus::kNotRecognized) << err;
  EXPECT_EQ(src, nullptr);
  close(hold);
  unlink(fifo.c_str());
  rmdir(dir);
  // A directory and a missing file are still errors of their own.
  EXPECT_EQ(open_fast_capture("/tmp", src, err), OpenStatus::kError);
  EXPECT_NE(err.find("directory"), std::string::npos) << err;
  EXPECT_EQ(open_fast_capture("/nonexistent/x.pcapng", src, err), OpenStatus::kError);
  EXPECT_NE(err.find("No such file"), std::string::npos) << err;
}

}  // namespace
}  // namespace rdmatel
