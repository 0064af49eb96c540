// SPDX-License-Identifier: GPL-2.0-or-later
// Engine state must stay bounded by the configured limits whatever the packets say. Heap use is
// measured with mallinfo2() (glibc; under ASan it reads 0 and the checks pass trivially).
// Each "Fixed bug" comment says what a test guards against and how it once failed.
#include <gtest/gtest.h>

#include <malloc.h>

#include <vector>

#include "rdmatel/engine.h"
#include "tests/support/engine_harness.h"
#include "tests/support/frame_builder.h"

namespace rdmatel {
namespace {

using test::Bytes;
using test::RoceSpec;

struct NullSink : RecordSink {};

// Small blocks (uordblks) and the large ones malloc maps directly (hblkhd).
size_t heap_in_use() {
  struct mallinfo2 m = mallinfo2();
  return m.uordblks + m.hblkhd;
}

// Feeds `frames` to a fresh engine; returns how much the heap grew before finish(). The reorder
// window is 0: these tests measure the components' state (the reorder buffer has its own).
size_t heap_growth(const std::vector<Bytes>& frames, Settings s = {}) {
  std::string error;
  s.set("reorder_window", "0", error);
  Engine e(s);
  NullSink sink;
  e.subscribe(sink);
  PointId p = e.declare_point("p");
  size_t before = heap_in_use();
  uint64_t n = 0;
  for (const Bytes& f : frames) {
    FrameIn in;
    in.frame = ++n;
    in.ts = 1'700'000'000'000'000'000 + TimeNs(n) * 100;
    in.point = p;
    in.data = f.data();
    in.cap_len = in.wire_len = uint32_t(f.size());
    e.push(in);
  }
  size_t after = heap_in_use();
  e.finish();
  return after > before ? after - before : 0;
}

RoceSpec write_packet(uint32_t flow, uint8_t opcode, uint32_t psn) {
  RoceSpec s;
  s.src_ip4[0] = 13;
  s.src_ip4[1] = uint8_t(flow >> 16);
  s.src_ip4[2] = uint8_t(flow >> 8);
  s.src_ip4[3] = uint8_t(flow);
  s.opcode = opcode;
  s.dest_qp = 0x200;
  s.psn = psn;
  if (opcode == 0x06) s.ext = test::reth(0, flow, 1u << 31);
  s.payload = Bytes(64, 0);
  return s;
}

// Ordinary messages on 256 flows: a few KiB per flow at most.
TEST(EngineMemory, ShortMessagesStaySmall) {
  std::vector<Bytes> frames;
  for (uint32_t f = 0; f < 256; ++f) {
    frames.push_back(build_roce(write_packet(f, 0x06, 100)));
    frames.push_back(build_roce(write_packet(f, 0x07, 101)));
  }
  EXPECT_LT(heap_growth(frames), size_t(256) * 16 * 1024);
}

// Fixed bug (engine/metrics/messages/message_state.h PsnBitmap, kMaxSpan = 1 << 22): a message
// remembered which PSNs it saw in a bitmap that grew up to 2^22 bits = 512 KiB. Two packets per
// flow (WRITE FIRST at PSN 0, WRITE MIDDLE at PSN 4194300) made every open message allocate the
// full 512 KiB: hostile_captures.py psn_spans, 984 flows under --max-flows 1000 -> 500 MiB of
// heap (the bound from the limits is ~60 MiB), and 13 s for 20 000 packets. Here: 256 flows ->
// 128 MiB. The seen PSNs are ranges now: a few KiB per message at most.
TEST(EngineMemory, MessagesSpanningManyPsnsStaySmall) {
  std::vector<Bytes> frames;
  for (uint32_t f = 0; f < 256; ++f) {
    frames.push_back(build_roce(write_packet(f, 0x06, 0)));
    frames.push_back(build_roce(write_packet(f, 0x07, 4194300)));
  }
  EXPECT_LT(heap_growth(frames), size_t(256) * 16 * 1024);
}

// Fixed bug (engine/metrics/messages/messages_plugin.cpp period() / emit_periods(): one
// FlowPeriodRecord per (flow, point, period) was kept until the point's watermark passed the
// period's end, and period_queue_ was emitted strictly in creation order, so one period not due
// held back every later one): stamps that jump back and forth (hostile_captures.py time_jumps:
// +-30 years) created a new period for almost every packet and none was released, about 350
// bytes per packet: 418 MiB for 2 million packets on 8 queues (bound from --max-ios/--max-flows
// 10000: ~150 MiB). Here: 20 000 packets of one flow, stamps spread over two years in random
// order -> several MiB. Open periods are now bounded per flow and point (64), the oldest
// reported early.
TEST(EngineMemory, PeriodsDoNotGrowWithJumpingStamps) {
  Engine e(test::settings_with({{"reorder_window", "0"}}));
  NullSink sink;
  e.subscribe(sink);
  PointId p = e.declare_point("p");
  Bytes frame = build_roce(write_packet(1, 0x0A, 0));
  // Warm up the containers of the one flow first, then measure the growth over 20 000 packets.
  size_t before = 0;
  for (uint32_t i = 0; i < 20000; ++i) {
    if (i == 16) before = heap_in_use();
    FrameIn in;
    in.frame = i + 1;
    in.ts = 1'700'000'000'000'000'000 + TimeNs((i * 7919u) % 20000u) * 3600 * kNsPerSec;
    in.point = p;
    in.data = frame.data();
    in.cap_len = in.wire_len = uint32_t(frame.size());
    e.push(in);
  }
  size_t after = heap_in_use();
  e.finish();
  EXPECT_LT(after > before ? after - before : 0, size_t(1) << 20);
}

// PSNs jumping at random open a message for almost every FIRST/ONLY and would keep them until
// message_timeout; the open messages are bounded by max_open_messages (--max-messages), the
// oldest reported early. 64 flows, 200 000 WRITE FIRST packets at random PSNs 1 us apart.
TEST(EngineMemory, RandomPsnsBoundedByCliLimits) {
  Settings cfg = test::settings_with({{"max_ios", "1000"}, {"max_flows", "100"}, {"max_messages", "1000"}});
  std::vector<Bytes> frames;
  uint32_t x = 12345;
  for (uint32_t i = 0; i < 200000; ++i) {
    x = x * 1103515245u + 12345u;
    frames.push_back(build_roce(write_packet(i % 64, 0x06, (x >> 8) & 0xFFFFFF)));
  }
  EXPECT_LT(heap_growth(frames, cfg), size_t(1000) * 2048 + size_t(100) * 8192 + (size_t(8) << 20));
}

// The reorder buffer is bounded by count as well as by time: 300 000 packets stamped within one
// microsecond (all inside the 250 ms window) hold at most max_reorder_packets.
TEST(EngineMemory, ReorderBufferBoundedByCount) {
  // max_messages too: WRITE ONLY messages wait for their ACK (bounded by that limit, tested
  // elsewhere); this test is about the reorder buffer.
  Engine e(test::settings_with({{"max_reorder_packets", "1000"}, {"max_messages", "1000"}}));
  // Records are counted, not kept: 300k message records would dwarf the buffer being measured.
  struct WarningSink : NullSink {
    std::vector<std::string> warnings;
    void on_warning(const Warning& w) override { warnings.push_back(w.text); }
  } out;
  e.subscribe(out);
  PointId p = e.declare_point("p");
  auto push = [&](uint32_t i, TimeNs ts) {
    Bytes frame = build_roce(write_packet(1, 0x0A, i & 0xFFFFFF));  // distinct packets: PSN i
    FrameIn in;
    in.frame = i + 1;
    in.ts = ts;
    in.point = p;
    in.data = frame.data();
    in.cap_len = in.wire_len = uint32_t(frame.size());
    e.push(in);
  };
  for (uint32_t i = 0; i < 1000; ++i) push(i, 1'700'000'000'000'000'000);  // warm up
  size_t before = heap_in_use();
  for (uint32_t i = 1000; i < 301000; ++i) push(i, 1'700'000'000'000'000'000 + i / 1000);
  size_t after = heap_in_use();
  e.finish();
  EXPECT_LT(after > before ? after - before : 0, size_t(4) << 20);
  bool warned = false;
  for (const std::string& w : out.warnings) warned |= w.find("max_reorder_packets") != std::string::npos;
  EXPECT_TRUE(warned);
}

}  // namespace
}  // namespace rdmatel
