// SPDX-License-Identifier: GPL-2.0-or-later
// The plugin's engine thread (plugin/engine_thread.h): frames reach the push function in the
// order they were handed over, with their own bytes (copied: the caller's buffer is reused at
// once); wait_idle() returns only when all of them were pushed, and reports a push that threw
// once; memory stays bounded while the pushes lag behind.
#include "plugin/engine_thread.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>
#include <vector>

namespace rdmatel::plugin {
namespace {

struct Seen {
  uint64_t frame;
  std::vector<uint8_t> bytes;
  uint32_t wire_len;
  PointId point;
};

FrameIn frame_with(uint64_t n, std::vector<uint8_t>& buffer) {
  // Each frame's bytes differ in length and content, in the one buffer the caller reuses.
  buffer.assign(size_t(n % 97), uint8_t(n * 31));
  FrameIn in;
  in.frame = n;
  in.ts = TimeNs(n) * 1000;
  in.point = PointId(n % 5);
  in.data = buffer.data();
  in.cap_len = uint32_t(buffer.size());
  in.wire_len = uint32_t(buffer.size() + n % 3);
  return in;
}

TEST(EngineThread, PushesEveryFrameInOrderWithItsOwnBytes) {
  std::vector<Seen> seen;  // written on the engine thread, read after wait_idle()
  EngineThread t([&](const FrameIn& in) {
    seen.push_back({in.frame, std::vector<uint8_t>(in.data, in.data + in.cap_len), in.wire_len, in.point});
  });
  std::vector<uint8_t> buffer;
  // More than several batches, so batches are queued, taken and reused.
  const uint64_t total = EngineThread::kFramesPerBatch * 7 + 123;
  for (uint64_t n = 1; n <= total / 2; ++n) t.add(frame_with(n, buffer));
  ASSERT_TRUE(t.wait_idle());
  ASSERT_EQ(seen.size(), total / 2);  // a partial batch is handed over by wait_idle()
  for (uint64_t n = total / 2 + 1; n <= total; ++n) t.add(frame_with(n, buffer));
  ASSERT_TRUE(t.wait_idle());
  ASSERT_EQ(seen.size(), total);
  for (uint64_t n = 1; n <= total; ++n) {
    const Seen& s = seen[n - 1];
    ASSERT_EQ(s.frame, n);
    std::vector<uint8_t> expected(size_t(n % 97), uint8_t(n * 31));
    ASSERT_EQ(s.bytes, expected) << "frame " << n;
    ASSERT_EQ(s.wire_len, n % 97 + n % 3);
    ASSERT_EQ(s.point, PointId(n % 5));
  }
}

TEST(EngineThread, TheNewestFrameCanBeTakenBackEvenWhenItsBatchFilled) {
  // A read filter drops a frame after it was handed over (the next one gets its number): the
  // newest frame is revocable until wait_idle(), also when it is the one that filled a batch.
  std::vector<Seen> seen;  // written on the engine thread, read after wait_idle()
  EngineThread t([&](const FrameIn& in) {
    seen.push_back({in.frame, std::vector<uint8_t>(in.data, in.data + in.cap_len), in.wire_len, in.point});
  });
  std::vector<uint8_t> buffer;
  const uint64_t full = EngineThread::kFramesPerBatch;
  for (uint64_t n = 1; n <= full; ++n) t.add(frame_with(n, buffer));
  EXPECT_FALSE(t.retract(full - 1)) << "only the newest frame";
  EXPECT_TRUE(t.retract(full)) << "the frame that filled the batch";
  EXPECT_FALSE(t.retract(full)) << "once";
  t.add(frame_with(full + 1, buffer));  // the record that took its place
  ASSERT_TRUE(t.wait_idle());
  EXPECT_FALSE(t.retract(full + 1)) << "measured by now";
  ASSERT_EQ(seen.size(), full);
  for (uint64_t i = 0; i < full; ++i) {
    const uint64_t n = i + 1 < full ? i + 1 : full + 1;
    ASSERT_EQ(seen[i].frame, n);
    ASSERT_EQ(seen[i].bytes, std::vector<uint8_t>(size_t(n % 97), uint8_t(n * 31))) << "frame " << n;
  }
}

TEST(EngineThread, BigFramesAreBoundedByBytes) {
  // Jumbo frames, pushes held: what waits is bounded by the batches' byte limit, far below
  // their frame limit.
  std::atomic<bool> release{false};
  std::atomic<uint64_t> pushed{0}, bytes{0};
  EngineThread t([&](const FrameIn& in) {
    while (!release.load()) std::this_thread::yield();
    ++pushed;
    bytes += in.cap_len;
  });
  const uint64_t per_batch = EngineThread::kBytesPerBatch / 9000 + 1;
  const uint64_t bound = (EngineThread::kMaxQueued + 2) * per_batch;
  ASSERT_LT(bound, EngineThread::kFramesPerBatch);
  std::atomic<uint64_t> handed{0};
  std::thread producer([&] {
    std::vector<uint8_t> jumbo(9000, 0xab);
    FrameIn in;
    in.data = jumbo.data();
    in.cap_len = uint32_t(jumbo.size());
    for (uint64_t n = 1; n <= 3 * bound; ++n) {
      t.add(in);
      handed = n;
    }
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_LE(handed.load(), bound);
  release = true;
  producer.join();
  EXPECT_TRUE(t.wait_idle());
  EXPECT_EQ(pushed.load(), 3 * bound);
  EXPECT_EQ(bytes.load(), 9000 * 3 * bound);
}

TEST(EngineThread, AFrameWithoutBytesIsPushedWithoutThem) {
  // As on the dissecting thread: no pointer into another frame's bytes.
  std::vector<std::pair<const uint8_t*, uint32_t>> seen;
  std::vector<uint8_t> first;
  EngineThread t([&](const FrameIn& in) {
    seen.emplace_back(in.data, in.cap_len);
    if (in.data) first.assign(in.data, in.data + in.cap_len);
  });
  std::vector<uint8_t> buffer(40, 7);
  FrameIn with_bytes;
  with_bytes.data = buffer.data();
  with_bytes.cap_len = 40;
  FrameIn without;
  without.cap_len = 0;
  t.add(with_bytes);
  t.add(without);
  ASSERT_TRUE(t.wait_idle());
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_NE(seen[0].first, nullptr);
  EXPECT_EQ(first, buffer);
  EXPECT_EQ(seen[1].first, nullptr);
  EXPECT_EQ(seen[1].second, 0u);
}

TEST(EngineThread, APushThatThrowsIsReportedOnceAndTheOthersGoOn) {
  std::vector<uint64_t> pushed;
  EngineThread t([&](const FrameIn& in) {
    if (in.frame == 5) throw std::runtime_error("bad frame");
    pushed.push_back(in.frame);
  });
  std::vector<uint8_t> buffer;
  for (uint64_t n = 1; n <= 10; ++n) t.add(frame_with(n, buffer));
  EXPECT_FALSE(t.wait_idle());
  EXPECT_EQ(pushed, (std::vector<uint64_t>{1, 2, 3, 4, 6, 7, 8, 9, 10}));
  EXPECT_TRUE(t.wait_idle());  // reported once
  t.add(frame_with(11, buffer));
  EXPECT_TRUE(t.wait_idle());
  EXPECT_EQ(pushed.back(), 11u);
}

TEST(EngineThread, HandingOverWaitsWhileTheQueueIsFull) {
  // The pushes are held until released: the thread handing frames over must stop after the
  // queued batches, the one being pushed and the one being filled.
  std::atomic<bool> release{false};
  std::atomic<uint64_t> pushed{0};
  EngineThread t([&](const FrameIn&) {
    while (!release.load()) std::this_thread::yield();
    ++pushed;
  });
  const uint64_t bound = (EngineThread::kMaxQueued + 2) * EngineThread::kFramesPerBatch;
  const uint64_t total = bound * 3;
  std::atomic<uint64_t> handed{0};
  std::thread producer([&] {
    std::vector<uint8_t> buffer;
    for (uint64_t n = 1; n <= total; ++n) {
      t.add(frame_with(n, buffer));
      handed = n;
    }
  });
  // However long this waits, no more than the bound can have been handed over.
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_LE(handed.load(), bound);
  EXPECT_GT(handed.load(), 0u);
  release = true;
  producer.join();
  EXPECT_TRUE(t.wait_idle());
  EXPECT_EQ(pushed.load(), total);
}

TEST(EngineThread, StopsWithFramesStillQueued) {
  std::atomic<uint64_t> pushed{0};
  {
    EngineThread t([&](const FrameIn&) { ++pushed; });
    std::vector<uint8_t> buffer;
    for (uint64_t n = 1; n <= EngineThread::kFramesPerBatch * 3; ++n) t.add(frame_with(n, buffer));
  }  // closes without waiting: no hang, no crash (the sanitizer job checks the rest)
  EXPECT_LE(pushed.load(), EngineThread::kFramesPerBatch * 3);
}

}  // namespace
}  // namespace rdmatel::plugin
