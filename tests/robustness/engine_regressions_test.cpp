// SPDX-License-Identifier: GPL-2.0-or-later
// Engine findings of the fuzz targets and hostile captures, each fixed; a "Fixed bug" comment
// says what the test guards against and how it once failed. A new finding comes in as a
// DISABLED_ test until its fix.
#include <gtest/gtest.h>

#include <limits>
#include <vector>

#include "rdmatel/engine.h"
#include "tests/support/engine_harness.h"
#include "tests/support/frame_builder.h"

namespace rdmatel {
namespace {

using test::Bytes;
using test::RoceSpec;

constexpr TimeNs kMax = std::numeric_limits<TimeNs>::max();
constexpr TimeNs kMin = std::numeric_limits<TimeNs>::min();

using test::Collector;

RoceSpec packet(bool to_storage, uint8_t opcode, uint32_t psn) {
  RoceSpec s;
  uint8_t host[4] = {10, 0, 0, 1}, storage[4] = {10, 0, 1, 1};
  std::copy(to_storage ? host : storage, (to_storage ? host : storage) + 4, s.src_ip4);
  std::copy(to_storage ? storage : host, (to_storage ? storage : host) + 4, s.dst_ip4);
  s.opcode = opcode;
  s.psn = psn;
  s.dest_qp = to_storage ? 0x100 : 0x200;
  return s;
}

// One read I/O at one point: command at `cmd`; its data, a two-packet RDMA WRITE message, starts
// at `data` and ends at `cpl` with the completion.
Collector run_read(TimeNs cmd, TimeNs data, TimeNs cpl) {
  RoceSpec c = packet(true, 0x04, 10);
  c.payload = test::sqe(0x02, 7, 1, 0x40, 4096, 0xAB);
  RoceSpec d = packet(false, 0x06, 500);  // RDMA WRITE FIRST
  d.ext = test::reth(0x1000, 0xAB, 4096);
  d.payload = Bytes(2048, 0);
  RoceSpec l = packet(false, 0x08, 501);  // RDMA WRITE LAST
  l.payload = Bytes(2048, 0);
  RoceSpec r = packet(false, 0x04, 502);
  r.payload = test::cqe(7, 0);
  struct F {
    TimeNs ts;
    Bytes b;
  };
  std::vector<F> frames = {{cmd, build_roce(c)}, {data, build_roce(d)}, {cpl, build_roce(l)}, {cpl, build_roce(r)}};
  test::Feeder feed(Settings{}, {"compute"});
  for (const F& f : frames) feed.push(0, f.ts, f.b);
  feed.finish();
  return feed.out;
}

// Sanity check of the helper with ordinary stamps: one complete read, iol = 3 us.
TEST(EngineRegressions, ReadAtOrdinaryStamps) {
  Collector r = run_read(1'700'000'000'000'000'000, 1'700'000'000'000'001'000, 1'700'000'000'000'003'000);
  ASSERT_EQ(r.ios.size(), 1u);
  ASSERT_TRUE(r.ios[0].iol_ns);
  EXPECT_EQ(*r.ios[0].iol_ns, 3000);
}

// Fixed bug (engine/metrics/io_quality/io_quality_plugin.cpp build_record: `o->ts[kCompletion] -
// o->ts[kCommand]`; engine/core/records.cpp io_metrics `t[a] - t[b]`; messages_plugin.cpp
// `idx * cfg_.period_ns`, `last_ns + reorder_window_ns`, MessageRecord::fct_ns; points.cpp
// idle() `newest_ - last`): stamps are int64 ns and the engine subtracts them and adds windows
// to them without bounds. A capture (or a Wireshark time) whose stamps jump across most of
// the 64-bit range overflows: undefined behaviour (UBSan: "signed integer overflow:
// -9223372036854775808 - 1700000000002441504", found by fuzz_engine), in practice wrapped
// metrics with the wrong sign. The fast reader now saturates stamps to the int64 range, so the
// CLI can deliver such stamps (a pcapng with if_tsoffset 2^62 s, or 10^-9 stamps > 2^63).
// The engine clamps stamps: metrics are absent or carry the sign of the true difference.
TEST(EngineRegressions, ExtremeTimestampsDoNotWrap) {
  {
    // The completion stamped centuries before the command: in stamp order it comes first, so
    // the I/O never completes (and its queue is never confirmed as NVMe); whatever is reported,
    // nothing wraps.
    Collector r = run_read(1'700'000'000'000'000'000, kMin, kMin);
    ASSERT_LE(r.ios.size(), 1u);
    if (!r.ios.empty() && r.ios[0].iol_ns) {
      EXPECT_LT(*r.ios[0].iol_ns, 0);
    }
  }
  {
    // The completion centuries after the command (an outlier stamp, handled as it comes):
    // iol absent or positive.
    Collector r = run_read(-1'700'000'000'000'000'000, kMax, kMax);
    ASSERT_LE(r.ios.size(), 1u);
    if (!r.ios.empty() && r.ios[0].iol_ns) {
      EXPECT_GT(*r.ios[0].iol_ns, 0);
    }
    for (const MessageRecord& m : r.messages) EXPECT_GE(m.fct_ns(), 0);
  }
  {
    // Message packets at both ends of the range: FCT must not wrap negative.
    Collector r = run_read(kMin, kMin, kMax);
    for (const MessageRecord& m : r.messages) EXPECT_GE(m.fct_ns(), 0);
    for (const FlowPeriodRecord& p : r.periods) EXPECT_GE(p.period_ns, 0);
  }
}

// A two-point write I/O (compute point 0, storage point 1) with ordinary stamps, preceded by one
// unrelated packet at the compute point stamped `outlier` and with `fillers` unrelated packets
// between the completion at the storage point and the completion at the compute point.
Collector run_write_after_outlier(TimeNs outlier, int fillers) {
  const TimeNs t = 1'700'000'000'000'000'000;
  RoceSpec cmd = packet(true, 0x04, 10);
  cmd.payload = test::sqe(0x01, 9, 1, 0x40, 8192, 0xCD);
  RoceSpec rreq = packet(false, 0x0C, 600);
  rreq.ext = test::reth(0x2000, 0xCD, 8192);
  RoceSpec rsp = packet(true, 0x10, 600);  // READ RESPONSE ONLY
  rsp.ext = test::aeth(0, 1);
  rsp.payload = Bytes(1024, 0);
  RoceSpec cpl = packet(false, 0x04, 601);
  cpl.payload = test::cqe(9, 0);
  RoceSpec filler = packet(true, 0x11, 1);  // an ACK on another flow
  filler.dest_qp = 0x999;
  filler.ext = test::aeth(0x1F, 1);
  struct F {
    int point;
    TimeNs ts;
    Bytes b;
  };
  std::vector<F> frames = {{0, outlier, build_roce(filler)},
                           {0, t, build_roce(cmd)},
                           {1, t + 1000, build_roce(cmd)},
                           {1, t + 2000, build_roce(rreq)},
                           {0, t + 2500, build_roce(rreq)},
                           {0, t + 4000, build_roce(rsp)},
                           {1, t + 4500, build_roce(rsp)},
                           {1, t + 8000, build_roce(cpl)}};
  for (int i = 0; i < fillers; ++i) frames.push_back({1, t + 8100, build_roce(filler)});
  frames.push_back({0, t + 8500, build_roce(cpl)});
  test::Feeder feed(Settings{});
  for (const F& f : frames) feed.push(size_t(f.point), f.ts, f.b);
  feed.finish();
  return feed.out;
}

// The helper with an ordinary first packet: the write is complete with every metric.
TEST(EngineRegressions, WriteAfterOrdinaryPacket) {
  Collector r = run_write_after_outlier(1'700'000'000'000'000'000 - 1000, 5000);
  ASSERT_EQ(r.ios.size(), 1u);
  EXPECT_TRUE(r.ios[0].complete);
  IoMetrics m = io_metrics(r.ios[0]);
  ASSERT_TRUE(m.iol1);
  EXPECT_EQ(*m.iol1, 8500);
}

// Fixed bug (engine/core/points.h, now engine/src/core/points.h, PointRegistry::observe: a point's watermark was the newest
// stamp it ever saw; engine/metrics/io_quality/io_quality_plugin.cpp ready()/timed_out()
// compare I/Os against it at each housekeeping, every 4096 RoCE packets): one packet stamped a
// year ahead (a bad clock, a corrupt stamp; tests/robustness/hostile_captures.py time_jumps)
// made every point look a year past every later I/O. The first housekeeping after the completion reaches
// the storage point then finalized the write before the compute point saw its completion:
// exported as incomplete (complete=false, no T7, IOL1, RTT, iol), and the compute side's
// completion becomes an orphan. Watermarks now ignore outliers: the same record as without it.
TEST(EngineRegressions, StampFarInTheFutureDoesNotExpireLaterIos) {
  const TimeNs year = 365LL * 86400 * kNsPerSec;
  Collector r = run_write_after_outlier(1'700'000'000'000'000'000 + year, 5000);
  ASSERT_EQ(r.ios.size(), 1u);
  EXPECT_TRUE(r.ios[0].complete);
  IoMetrics m = io_metrics(r.ios[0]);
  ASSERT_TRUE(m.iol1);
  EXPECT_EQ(*m.iol1, 8500);
}

}  // namespace
}  // namespace rdmatel
