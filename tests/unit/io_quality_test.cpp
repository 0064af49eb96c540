// SPDX-License-Identifier: GPL-2.0-or-later
// io_quality on hand-built packet sequences whose answers are worked out by hand in each test.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <vector>

#include "rdmatel/engine.h"
#include "rdmatel/records.h"
#include "tests/support/engine_harness.h"
#include "tests/support/frame_builder.h"

namespace rdmatel {
namespace {

using test::Bytes;
using test::RoceSpec;

using test::kHost;
using test::kHostQp;
using test::kStorage;
using test::kStorageQp;
using test::Collector;

// A capture being assembled: frames at points with stamps, fed to the engine in the given order.
class Capture {
 public:
  // Frame notes on: exercises the Wireshark plugin's path (provisional records are filtered).
  explicit Capture(Settings s = {}) : settings_(std::move(s)) { settings_.frame_notes = true; }

  RoceSpec up(uint8_t opcode, uint32_t psn, uint32_t qp = kStorageQp) { return test::up(opcode, psn, qp); }
  RoceSpec down(uint8_t opcode, uint32_t psn, uint32_t qp = kHostQp) { return test::down(opcode, psn, qp); }
  RoceSpec command(uint8_t op, uint16_t cid, uint32_t psn, uint32_t len, uint32_t key, uint32_t qp = kStorageQp) {
    RoceSpec s = up(0x04, psn, qp);
    s.payload = test::sqe(op, cid, 1, 0x40, len, key);
    return s;
  }
  RoceSpec completion(uint16_t cid, uint32_t psn, uint32_t qp = kHostQp, int inval_key = -1) {
    RoceSpec s = down(inval_key >= 0 ? 0x17 : 0x04, psn, qp);
    if (inval_key >= 0) test::put32(s.ext, uint32_t(inval_key));
    s.payload = test::cqe(cid, 0);
    return s;
  }
  RoceSpec write_data(uint8_t opcode, uint32_t psn, uint32_t key, uint32_t qp = kHostQp) {
    RoceSpec s = down(opcode, psn, qp);
    if (opcode == 0x06 || opcode == 0x0A) s.ext = test::reth(0x1000, key, 8192);
    s.payload = Bytes(256, 0);
    return s;
  }
  RoceSpec ack(bool to_storage, uint32_t psn, uint32_t qp) {
    RoceSpec s = to_storage ? up(0x11, psn, qp) : down(0x11, psn, qp);
    s.ext = test::aeth(0x1F, 1);
    return s;
  }

  /// Adds a frame seen at `point` with stamp `ts`; returns its frame number.
  uint64_t add(int point, TimeNs ts, const RoceSpec& s) {
    frames_.push_back({point, ts, test::build_roce(s)});
    return frames_.size();
  }

  Collector run(const std::vector<std::string>& point_names = {"compute", "storage"}) {
    test::Feeder feed(settings_, point_names);
    for (const auto& f : frames_) feed.push(size_t(f.point), f.ts, f.bytes);
    feed.finish();
    return feed.out;
  }

 private:
  struct F {
    int point;
    TimeNs ts;
    Bytes bytes;
  };
  Settings settings_;
  std::vector<F> frames_;
};

constexpr int C = 0, S = 1;

TEST(IoQuality, ReadTwoPointsStorageBlockFirst) {
  // A read seen at both points; the file holds the storage point's block before the compute's.
  Capture cap;
  uint64_t s_cmd = cap.add(S, 1'000'300, cap.command(0x02, 5, 100, 8192, 0xAB01));
  cap.add(S, 1'050'000, cap.write_data(0x0A, 700, 0xAB01));
  uint64_t s_cpl = cap.add(S, 1'060'000, cap.completion(5, 701, kHostQp, 0xAB01));
  uint64_t c_cmd = cap.add(C, 1'000'000, cap.command(0x02, 5, 100, 8192, 0xAB01));
  cap.add(C, 1'050'400, cap.write_data(0x0A, 700, 0xAB01));
  uint64_t c_cpl = cap.add(C, 1'060'500, cap.completion(5, 701, kHostQp, 0xAB01));
  Collector r = cap.run();
  ASSERT_EQ(r.ios.size(), 1u);
  const IoRecord& io = r.ios[0];
  EXPECT_STREQ(io.op, "read");
  EXPECT_EQ(io.cid, 5);
  EXPECT_EQ(io.qpn, kStorageQp);
  ASSERT_TRUE(io.host_qpn);
  EXPECT_EQ(*io.host_qpn, kHostQp);
  EXPECT_TRUE(io.complete);
  EXPECT_EQ(io.t[1], 1'000'000);  // command at compute
  EXPECT_EQ(io.t[2], 1'000'300);  // command at storage
  EXPECT_EQ(io.t[3], 1'050'000);  // first data at storage
  EXPECT_EQ(io.t[4], 1'060'000);  // completion at storage
  EXPECT_EQ(io.t[5], 1'060'500);  // completion at compute
  IoMetrics m = io_metrics(io);
  EXPECT_EQ(*m.dal, 49'700);
  EXPECT_EQ(*m.iol1, 60'500);
  EXPECT_EQ(*m.iol2, 59'700);
  EXPECT_EQ(*m.rtt, 800);
  EXPECT_EQ(*m.iol, 60'500);
  EXPECT_EQ(io.cmd_frame, c_cmd);
  EXPECT_EQ(io.rsp_frame, c_cpl);
  (void)s_cmd;
  (void)s_cpl;
}

TEST(IoQuality, RetransmittedCommandKeepsFirstCopyPerPoint) {
  // The command is lost between the points: the compute side sees it twice, the storage side
  // only the resent copy (same PSN). T1 is the first copy at compute, T2 the resent copy.
  Capture cap;
  cap.add(C, 1000, cap.command(0x02, 9, 50, 4096, 0x77));
  cap.add(C, 9000, cap.command(0x02, 9, 50, 4096, 0x77));  // resend
  cap.add(S, 9400, cap.command(0x02, 9, 50, 4096, 0x77));
  cap.add(S, 20000, cap.write_data(0x0A, 10, 0x77));
  cap.add(C, 20300, cap.write_data(0x0A, 10, 0x77));
  cap.add(S, 30000, cap.completion(9, 11));
  cap.add(C, 30300, cap.completion(9, 11));
  cap.add(C, 60000, cap.completion(9, 11));  // a resent completion changes nothing
  Collector r = cap.run();
  ASSERT_EQ(r.ios.size(), 1u);
  const IoRecord& io = r.ios[0];
  EXPECT_EQ(io.t[1], 1000);
  EXPECT_EQ(io.t[2], 9400);
  EXPECT_EQ(*io_metrics(io).iol1, 29300);
  EXPECT_EQ(*io_metrics(io).iol2, 20600);
  EXPECT_EQ(io.cmd_frame, 1u);
  EXPECT_EQ(io.rsp_frame, 7u);
  int copies = 0;
  for (const auto& n : r.notes) copies += note_kind_name(n.kind).starts_with("io.") && n.detail == 1;
  EXPECT_EQ(copies, 2);  // frames 2 and 8
}

TEST(IoQuality, AMissedCompletionLeavesTheNextOneToItsOwnCommand) {
  // The first read's completion never reached the point (a capture's drop): NVMe reuses CID 1
  // only once it completed, so the completion after the second command is that command's.
  Capture cap;
  cap.add(C, 100, cap.command(0x02, 1, 10, 512, 0x10));
  cap.add(C, 200, cap.write_data(0x0A, 90, 0x10));
  cap.add(C, 400, cap.command(0x02, 1, 11, 512, 0x11));
  cap.add(C, 500, cap.write_data(0x0A, 92, 0x11));
  cap.add(C, 900, cap.completion(1, 93));
  cap.add(C, 1000, cap.command(0x02, 1, 12, 512, 0x12));
  cap.add(C, 1100, cap.write_data(0x0A, 94, 0x12));
  cap.add(C, 1300, cap.completion(1, 95));
  Collector r = cap.run({"only"});
  ASSERT_EQ(r.ios.size(), 3u);
  EXPECT_FALSE(r.ios[0].iol_ns);  // its completion missed
  ASSERT_TRUE(r.ios[1].iol_ns);
  EXPECT_EQ(*r.ios[1].iol_ns, 500);
  ASSERT_TRUE(r.ios[2].iol_ns);
  EXPECT_EQ(*r.ios[2].iol_ns, 300);
  EXPECT_TRUE(r.warned("had their CID reused before a point saw their completion"));
}

TEST(IoQuality, CidReuseStartsNewIo) {
  Capture cap;
  cap.add(C, 100, cap.command(0x02, 1, 10, 512, 0x10));
  cap.add(C, 200, cap.write_data(0x0A, 90, 0x10));
  cap.add(C, 300, cap.completion(1, 91));
  cap.add(C, 400, cap.command(0x01, 1, 11, 512, 0x11));  // same CID, new PSN: a new write
  cap.add(C, 900, cap.completion(1, 92));
  Collector r = cap.run({"only"});
  ASSERT_EQ(r.ios.size(), 2u);
  EXPECT_STREQ(r.ios[0].op, "read");
  EXPECT_STREQ(r.ios[1].op, "write");
  // One point: no roles, no T values, only iol.
  EXPECT_EQ(*r.ios[0].iol_ns, 200);
  EXPECT_EQ(*r.ios[1].iol_ns, 500);
  EXPECT_EQ(r.ios[0].t.present, 0);
  IoMetrics m = io_metrics(r.ios[1]);
  EXPECT_FALSE(m.iol1);
  EXPECT_FALSE(m.rtt);
}

TEST(IoQuality, TwoQueuesSameCidPairedByAck) {
  // Two queue pairs between the same hosts with CID 7 in flight on both. ACKs echo the command
  // PSNs and pair each direction; completions then go to the right queue.
  const uint32_t qs2 = 0x300, qh2 = 0x400;
  Capture cap;
  cap.add(C, 1000, cap.command(0x02, 7, 5000, 512, 0x21));
  cap.add(C, 1100, cap.command(0x02, 7, 9000, 512, 0x22, qs2));
  cap.add(C, 1500, cap.ack(false, 9000, qh2));  // storage acks queue 2's command
  cap.add(C, 1600, cap.ack(false, 5000, kHostQp));
  cap.add(C, 5000, cap.completion(7, 70, qh2));       // queue 2 completes first
  cap.add(C, 8000, cap.completion(7, 80, kHostQp));
  Collector r = cap.run({"only"});
  ASSERT_EQ(r.ios.size(), 2u);
  std::map<uint32_t, DurationNs> iol;
  for (const auto& io : r.ios) iol[io.qpn] = *io.iol_ns;
  EXPECT_EQ(iol[kStorageQp], 7000);
  EXPECT_EQ(iol[qs2], 3900);
}

TEST(IoQuality, TwoQueuesSameCidPairedByInvalidateKey) {
  // No ACKs at all: the IETH key of SEND WITH INVALIDATE names the I/O.
  const uint32_t qs2 = 0x300, qh2 = 0x400;
  Capture cap;
  cap.add(C, 1000, cap.command(0x02, 7, 5000, 512, 0x21));
  cap.add(C, 1100, cap.command(0x02, 7, 9000, 512, 0x22, qs2));
  cap.add(C, 5000, cap.completion(7, 70, qh2, 0x22));
  cap.add(C, 8000, cap.completion(7, 80, kHostQp, 0x21));
  Collector r = cap.run({"only"});
  ASSERT_EQ(r.ios.size(), 2u);
  for (const auto& io : r.ios) EXPECT_EQ(*io.iol_ns, io.qpn == qs2 ? 3900 : 7000);
}

TEST(IoQuality, WriteWithReadRequestAndResponse) {
  Capture cap;
  cap.add(C, 0, cap.command(0x01, 3, 200, 16384, 0x55));
  cap.add(S, 1000, cap.command(0x01, 3, 200, 16384, 0x55));
  RoceSpec rreq = cap.down(0x0C, 4000, kHostQp);
  rreq.ext = test::reth(0x2000, 0x55, 16384);
  cap.add(S, 3000, rreq);  // T3
  cap.add(C, 4000, rreq);  // T4
  RoceSpec rresp = cap.up(0x0D, 4000);
  rresp.ext = test::aeth(0x1F, 0);
  rresp.payload = Bytes(4096, 0);
  cap.add(C, 4500, rresp);  // T5
  cap.add(S, 5500, rresp);
  cap.add(S, 9000, cap.completion(3, 4004, kHostQp, 0x55));  // T6
  cap.add(C, 10000, cap.completion(3, 4004, kHostQp, 0x55)); // T7
  Collector r = cap.run();
  ASSERT_EQ(r.ios.size(), 1u);
  IoMetrics m = io_metrics(r.ios[0]);
  EXPECT_STREQ(r.ios[0].op, "write");
  EXPECT_EQ(*m.dal, 2000);   // T3-T2
  EXPECT_EQ(*m.dpl, 500);    // T5-T4
  EXPECT_EQ(*m.iol1, 10000); // T7-T1
  EXPECT_EQ(*m.iol2, 8000);  // T6-T2
  EXPECT_EQ(*m.rtt, 2000);
}

TEST(IoQuality, InCapsuleWriteUsesSendFirst) {
  Capture cap;
  RoceSpec first = cap.up(0x00, 300);  // SEND FIRST: SQE + start of data
  first.payload = test::sqe(0x01, 4, 1, 0x01, 4096, 0);
  first.payload.resize(4096, 0xEE);
  RoceSpec last = cap.up(0x02, 301);
  last.payload = Bytes(64, 0xEE);
  cap.add(C, 100, first);
  cap.add(C, 150, last);
  cap.add(S, 400, first);
  cap.add(S, 450, last);
  cap.add(S, 2000, cap.completion(4, 900));
  cap.add(C, 2600, cap.completion(4, 900));
  Collector r = cap.run();
  ASSERT_EQ(r.ios.size(), 1u);
  const IoRecord& io = r.ios[0];
  EXPECT_TRUE(io.in_capsule);
  IoMetrics m = io_metrics(io);
  EXPECT_FALSE(m.dal);  // no READ REQUEST for in-capsule data
  EXPECT_FALSE(m.dpl);
  EXPECT_EQ(*m.iol1, 2500);
  EXPECT_EQ(*m.iol2, 1600);
  EXPECT_EQ(io.t[6], 2000);
  EXPECT_EQ(io.t[7], 2600);
}

TEST(IoQuality, IncompleteAtCaptureEndAndAfterTimeout) {
  // A 1 ms I/O timeout; a reorder window short enough for the point's horizon to pass it.
  Capture cap(test::settings_with({{"io_timeout", "0.001"}, {"reorder_window", "0.1"}}));
  cap.add(C, 0, cap.command(0x02, 1, 10, 512, 0x10));
  cap.add(C, 100, cap.completion(1, 20));  // confirms the queue is NVMe
  cap.add(C, 200, cap.command(0x02, 2, 11, 512, 0x11));  // never completes
  // Later traffic moves the point's horizon past the timeout.
  for (int i = 0; i < 5000; ++i) cap.add(C, 2'000'000 + i, cap.ack(false, 12, kHostQp));
  cap.add(C, 2'100'000, cap.command(0x02, 3, 12, 512, 0x12));  // incomplete at capture end
  Collector r = cap.run({"only"});
  ASSERT_EQ(r.ios.size(), 3u);
  std::map<uint16_t, IoRecord> by_cid;
  for (const auto& io : r.ios) by_cid[io.cid] = io;
  EXPECT_TRUE(by_cid[1].complete);
  EXPECT_FALSE(by_cid[2].complete);
  EXPECT_EQ(by_cid[2].end, IoEnd::kTimeout);
  EXPECT_FALSE(by_cid[3].complete);
  EXPECT_EQ(by_cid[3].end, IoEnd::kCaptureEnd);
  EXPECT_FALSE(by_cid[2].iol_ns);
}

TEST(IoQuality, ConfiguredRolesOnOnePoint) {
  Capture cap(test::settings_with({{"point", "tap0=storage"}}));
  cap.add(0, 1000, cap.command(0x02, 1, 10, 512, 0x10));
  cap.add(0, 1500, cap.write_data(0x0A, 30, 0x10));
  cap.add(0, 2000, cap.completion(1, 31));
  Collector r = cap.run({"tap0"});
  ASSERT_EQ(r.ios.size(), 1u);
  IoMetrics m = io_metrics(r.ios[0]);
  EXPECT_EQ(*m.dal, 500);   // storage-side metrics only
  EXPECT_EQ(*m.iol2, 1000);
  EXPECT_FALSE(m.iol1);
  EXPECT_FALSE(m.rtt);
  EXPECT_EQ(r.ios[0].t[2], 1000);
  EXPECT_FALSE(r.ios[0].t.has(1));
}

TEST(IoQuality, ReadIntoTwoBuffersNamedByACapsuleDescriptorList) {
  // The command's SGL is a list of two keyed descriptors in the capsule; the target writes the
  // second buffer first: T3 is that first data packet, whichever key it carries.
  Capture cap;
  RoceSpec cmd = cap.up(0x04, 40);
  cmd.payload = test::sqe(0x02, 6, 1, 0x31, 32, 0);
  std::fill(cmd.payload.begin() + 24, cmd.payload.begin() + 32, 0);  // the list starts at offset 0
  for (uint32_t key : {0x5501u, 0x5502u}) {
    test::putle64(cmd.payload, 0x10000);
    cmd.payload.insert(cmd.payload.end(), {0x00, 0x10, 0x00});  // 4096 bytes
    test::putle32(cmd.payload, key);
    cmd.payload.push_back(0x40);
  }
  cap.add(C, 100, cmd);
  cap.add(S, 200, cmd);
  cap.add(S, 900, cap.write_data(0x0A, 70, 0x5502));
  cap.add(S, 950, cap.write_data(0x0A, 71, 0x5501));
  cap.add(C, 1000, cap.write_data(0x0A, 70, 0x5502));
  cap.add(C, 1050, cap.write_data(0x0A, 71, 0x5501));
  cap.add(S, 1500, cap.completion(6, 72, kHostQp, 0x5501));
  cap.add(C, 1600, cap.completion(6, 72, kHostQp, 0x5501));
  Collector r = cap.run();
  ASSERT_EQ(r.ios.size(), 1u);
  IoMetrics m = io_metrics(r.ios[0]);
  ASSERT_TRUE(m.dal && m.iol1 && m.iol2);
  EXPECT_EQ(*m.dal, 700);  // 900 - 200
  EXPECT_EQ(*m.iol1, 1500);
  EXPECT_EQ(*m.iol2, 1300);
}

TEST(IoQuality, NonNvmeSendsAreNotIos) {
  // 64-byte SENDs that happen to look like SQEs, never answered by a CQE: not NVMe.
  Capture cap;
  for (int i = 0; i < 10; ++i) cap.add(C, 100 * i, cap.command(0x02, uint16_t(i), 10 + i, 512, 0x10));
  Collector r = cap.run({"only"});
  EXPECT_TRUE(r.ios.empty());
}

TEST(IoQuality, ThreePointsFabricIgnoredForTimestamps) {
  Capture cap;
  cap.add(0, 100, cap.command(0x00, 8, 10, 0, 0));  // flush: no data
  cap.add(1, 150, cap.command(0x00, 8, 10, 0, 0));
  cap.add(2, 200, cap.command(0x00, 8, 10, 0, 0));
  cap.add(2, 900, cap.completion(8, 40));
  cap.add(1, 950, cap.completion(8, 40));
  cap.add(0, 1000, cap.completion(8, 40));
  Collector r = cap.run({"leaf-gpu", "spine", "leaf-stor"});
  ASSERT_EQ(r.ios.size(), 1u);
  const IoRecord& io = r.ios[0];
  EXPECT_STREQ(io.op, "flush");
  EXPECT_EQ(io.t[1], 100);
  EXPECT_EQ(io.t[2], 200);
  EXPECT_EQ(io.t[4], 900);
  EXPECT_EQ(io.t[5], 1000);
  IoMetrics m = io_metrics(io);
  EXPECT_FALSE(m.dal);
  EXPECT_EQ(*m.rtt, 900 - 700);
}

}  // namespace
}  // namespace rdmatel
