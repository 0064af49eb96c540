// SPDX-License-Identifier: GPL-2.0-or-later
// The plugin's engine thread (plugin/engine_thread.h): frames reach the push function in the
// order they were handed over, with their own bytes (copied: the caller's buffer is reused at
// once); wait_idle() returns only when all of them were pushed, and reports a push that threw
// once; memory stays bounded while the pushes lag behind. A long frame travels as its decoding,
// which is the engine's own of its bytes.
#include "plugin/engine_thread.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <optional>
#include <stdexcept>
#include <thread>
#include <vector>

#include "engine/src/decode/decoded_frame.h"
#include "tests/support/frame_builder.h"

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

// Pushes held, frames of `length` bytes handed over from another thread: no more than `bound`
// can be handed over however long it waits; once released, every one is pushed.
struct HeldPushes {
  std::atomic<bool> release{false};
  std::atomic<uint64_t> pushed{0}, bytes{0}, with_bytes{0}, decoded{0};

  void run(size_t length, uint64_t bound) {
    EngineThread t([&](const FrameIn& in) {
      while (!release.load()) std::this_thread::yield();
      ++pushed;
      bytes += in.cap_len;
      with_bytes += in.data != nullptr;
      decoded += in.decoded != nullptr;
    });
    std::atomic<uint64_t> handed{0};
    std::thread producer([&] {
      std::vector<uint8_t> frame(length, 0xab);
      FrameIn in;
      in.data = frame.data();
      in.cap_len = uint32_t(frame.size());
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
    EXPECT_EQ(bytes.load(), length * 3 * bound);
  }
};

TEST(EngineThread, BigFramesAreBoundedByBytes) {
  // Jumbo frames: what waits is bounded by the batches' byte limit, far below their frame
  // limit. They travel as their decodings, which the limit counts.
  const uint64_t per_batch = EngineThread::kBytesPerBatch / DecodedFrames::bytes_each() + 1;
  ASSERT_LT(per_batch, EngineThread::kFramesPerBatch);
  HeldPushes h;
  h.run(9000, (EngineThread::kMaxQueued + 2) * per_batch);
  EXPECT_EQ(h.decoded.load(), h.pushed.load());
  EXPECT_EQ(h.with_bytes.load(), 0u);
}

TEST(EngineThread, FramesBelowTheDecodingLimitAreBoundedByBytes) {
  // The longest frames that travel as bytes: bounded by the byte limit as well.
  const size_t length = EngineThread::decode_ahead_from() - 1;
  const uint64_t per_batch = EngineThread::kBytesPerBatch / length + 1;
  ASSERT_LT(per_batch, EngineThread::kFramesPerBatch);
  HeldPushes h;
  h.run(length, (EngineThread::kMaxQueued + 2) * per_batch);
  EXPECT_EQ(h.with_bytes.load(), h.pushed.load());
  EXPECT_EQ(h.decoded.load(), 0u);
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

TEST(EngineThread, LongFramesTravelAsTheirDecoding) {
  // NVMe commands and completions, WRITEs with payloads of every length around the limit, and
  // frames too long to be RoCE: below decode_ahead_from() a frame's bytes travel, from it on its
  // decoding, which must be what the engine makes of the bytes. Batches fill by frames and by
  // bytes, and the newest frame is taken back now and then, also when it filled its batch.
  const size_t limit = EngineThread::decode_ahead_from();
  ASSERT_GT(limit, 200u);
  ASSERT_LT(limit, 1400u) << "a full-size frame travels decoded";
  std::vector<test::Bytes> frames;
  for (uint32_t i = 0; i < 3 * EngineThread::kFramesPerBatch; ++i) {
    test::RoceSpec s = test::up(0x0A, 1000 + i);  // RDMA WRITE ONLY
    switch (i % 4) {
      case 0: s = test::up(0x04, i); s.payload = test::sqe(0x01, uint16_t(i), 1, 0x40, 4096, 0xA0000 + i); break;
      case 1: s = test::down(0x04, i); s.payload = test::cqe(uint16_t(i), 0); break;
      case 2: s.ext = test::reth(0x1000, 7, 4096); s.payload.assign(limit - 80 + i % 160, uint8_t(i)); break;
      case 3: s.ext = test::reth(0x1000, 7, 4096); s.payload.assign(1000 + i % 8000, uint8_t(i)); break;
    }
    frames.push_back(test::build_roce(s));
  }
  struct Pushed {
    uint64_t frame;
    bool had_bytes;
    std::optional<DecodedFrame> decoded;
    uint32_t cap_len, wire_len;
  };
  std::vector<Pushed> seen;  // written on the engine thread, read after wait_idle()
  EngineThread t([&](const FrameIn& in) {
    Pushed p{in.frame, in.data != nullptr, std::nullopt, in.cap_len, in.wire_len};
    if (in.decoded) p.decoded = *in.decoded;
    if (in.data) {
      const test::Bytes& b = frames[in.frame - 1];
      EXPECT_TRUE(std::equal(b.begin(), b.end(), in.data, in.data + in.cap_len)) << "frame " << in.frame;
    }
    seen.push_back(std::move(p));
  });
  std::vector<uint64_t> kept;
  test::Bytes scratch;  // the caller's buffer, reused
  for (uint64_t n = 1; n <= frames.size(); ++n) {
    scratch = frames[n - 1];
    FrameIn in;
    in.frame = n;
    in.data = scratch.data();
    in.cap_len = uint32_t(scratch.size());
    in.wire_len = in.cap_len + 4;
    t.add(in);
    std::fill(scratch.begin(), scratch.end(), uint8_t(0xEE));
    if (n % 1001 == 0 || n == EngineThread::kFramesPerBatch) ASSERT_TRUE(t.retract(n));
    else kept.push_back(n);
  }
  ASSERT_TRUE(t.wait_idle());
  ASSERT_EQ(seen.size(), kept.size());
  size_t decoded = 0;
  for (size_t i = 0; i < seen.size(); ++i) {
    const Pushed& p = seen[i];
    ASSERT_EQ(p.frame, kept[i]);
    const test::Bytes& b = frames[p.frame - 1];
    SCOPED_TRACE("frame " + std::to_string(p.frame) + ", " + std::to_string(b.size()) + " bytes");
    EXPECT_EQ(p.cap_len, b.size());
    EXPECT_EQ(p.wire_len, b.size() + 4);
    EXPECT_EQ(p.had_bytes, b.size() < limit);
    ASSERT_EQ(p.decoded.has_value(), b.size() >= limit);
    if (!p.decoded) continue;
    ++decoded;
    DecodedFrame here;
    decode_frame(LinkType::kEthernet, b.data(), uint32_t(b.size()), uint32_t(b.size() + 4), here);
    const DecodedFrame& d = *p.decoded;
    EXPECT_EQ(d.roce.kind, here.roce.kind);
    EXPECT_EQ(d.roce.bth.psn, here.roce.bth.psn);
    EXPECT_EQ(d.roce.bth.opcode, here.roce.bth.opcode);
    EXPECT_EQ(d.roce.payload_offset, here.roce.payload_offset);
    EXPECT_EQ(d.roce.payload_len, here.roce.payload_len);
    EXPECT_EQ(d.roce.payload_captured, here.roce.payload_captured);
    EXPECT_EQ(d.roce.reth.dma_len, here.roce.reth.dma_len);
    EXPECT_EQ(d.payload_hash, here.payload_hash);
    EXPECT_EQ(d.headers.bth.psn, here.headers.bth.psn);
    EXPECT_EQ(d.headers.payload_len, here.headers.payload_len);
    EXPECT_EQ(d.capsule.kind, here.capsule.kind);
  }
  EXPECT_GT(decoded, frames.size() / 3);
  EXPECT_LT(decoded, frames.size() * 2 / 3);
}

}  // namespace
}  // namespace rdmatel::plugin
