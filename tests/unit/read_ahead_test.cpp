// SPDX-License-Identifier: GPL-2.0-or-later
// A source read ahead on a thread gives what the source gives, in the same order and at the same
// moment (interfaces included), reads on another thread, stops when dropped half-way, and says
// why a source that failed stopped.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "engine/src/capture/read_ahead_source.h"
#include "engine/src/decode/decoded_frame.h"
#include "tests/support/frame_builder.h"

namespace rdmatel {
namespace {

struct Plan {
  size_t packets = 0;
  std::vector<size_t> interface_at;  ///< a new interface is declared as packet i is read
  std::vector<size_t> big_at;        ///< packet i is 700 KB (more than a batch's bytes)
  std::string error;                 ///< set when the source ends
  size_t throw_at = SIZE_MAX;        ///< next() throws instead of giving packet i
};

Plan packets(size_t n) {
  Plan p;
  p.packets = n;
  return p;
}

// A source made up here: packet i's bytes are a pattern of i in a buffer reused from call to call
// (as libwiretap's), so that bytes read after the next call would show.
class PlannedSource final : public CaptureSource {
 public:
  explicit PlannedSource(Plan plan) : plan_(std::move(plan)) { interfaces_.push_back({"first", LinkType::kEthernet}); }

  bool next(CapturedPacket& out) override {
    {
      std::lock_guard lock(mutex_);
      callers_.push_back(std::this_thread::get_id());
    }
    if (given_ == plan_.packets) {
      error_ = plan_.error;
      return false;
    }
    const size_t i = given_++;
    if (i == plan_.throw_at) throw std::runtime_error("the planned failure");
    for (size_t at : plan_.interface_at)
      if (at == i) interfaces_.push_back({"if" + std::to_string(interfaces_.size()), LinkType::kEthernet});
    const bool big = std::find(plan_.big_at.begin(), plan_.big_at.end(), i) != plan_.big_at.end();
    buffer_.assign(big ? 700000 : 60 + i % 1400, 0);
    for (size_t k = 0; k < buffer_.size(); ++k) buffer_[k] = uint8_t(i * 7 + k);
    out.frame = i + 1;
    out.ts = TimeNs(1'000'000 * i);
    out.has_ts = i % 97 != 5;
    out.interface = uint32_t(interfaces_.size() - 1);
    out.cap_len = uint32_t(buffer_.size());
    out.wire_len = out.cap_len + uint32_t(i % 3);
    out.link = LinkType::kEthernet;
    out.data = buffer_.data();
    return true;
  }
  const std::vector<CaptureInterface>& interfaces() const override { return interfaces_; }
  const std::string& error() const override { return error_; }
  uint64_t position() const override { return given_ * 100; }
  uint64_t size() const override { return plan_.packets * 100; }
  std::string format() const override { return "planned"; }

  size_t given() const { return given_; }
  std::vector<std::thread::id> callers() const {
    std::lock_guard lock(mutex_);
    return callers_;
  }

 private:
  Plan plan_;
  std::vector<CaptureInterface> interfaces_;
  std::vector<uint8_t> buffer_;
  std::string error_;
  std::atomic<size_t> given_ = 0;  ///< (read by the test while the thread reads on)
  mutable std::mutex mutex_;
  std::vector<std::thread::id> callers_;
};

// What a reader sees at each step: the packet (its bytes in full) and the interfaces then.
struct Step {
  bool got;
  CapturedPacket p;
  std::vector<uint8_t> bytes;
  std::vector<std::string> interfaces;
};

std::vector<Step> read_steps(CaptureSource& s) {
  std::vector<Step> steps;
  for (;;) {
    Step st;
    st.got = s.next(st.p);
    if (st.got) st.bytes.assign(st.p.data, st.p.data + st.p.cap_len);
    for (const CaptureInterface& i : s.interfaces()) st.interfaces.push_back(i.name);
    steps.push_back(std::move(st));
    if (!steps.back().got) return steps;
  }
}

void expect_same(const std::vector<Step>& want, const std::vector<Step>& got) {
  ASSERT_EQ(want.size(), got.size());
  for (size_t i = 0; i < want.size(); ++i) {
    SCOPED_TRACE("step " + std::to_string(i));
    ASSERT_EQ(want[i].got, got[i].got);
    EXPECT_EQ(want[i].interfaces, got[i].interfaces);
    if (!want[i].got) continue;
    EXPECT_EQ(want[i].p.frame, got[i].p.frame);
    EXPECT_EQ(want[i].p.ts, got[i].p.ts);
    EXPECT_EQ(want[i].p.has_ts, got[i].p.has_ts);
    EXPECT_EQ(want[i].p.interface, got[i].p.interface);
    EXPECT_EQ(want[i].p.cap_len, got[i].p.cap_len);
    EXPECT_EQ(want[i].p.wire_len, got[i].p.wire_len);
    EXPECT_EQ(want[i].p.link, got[i].p.link);
    ASSERT_EQ(want[i].bytes, got[i].bytes);
  }
}

void expect_read_ahead_gives_the_same(const Plan& plan) {
  PlannedSource plain(plan);
  const std::vector<Step> want = read_steps(plain);
  auto source = std::make_unique<PlannedSource>(plan);
  std::unique_ptr<CaptureSource> ahead = read_ahead(std::move(source), ReadAhead::kCopy);
  EXPECT_EQ(ahead->format(), "planned");
  EXPECT_EQ(ahead->size(), plan.packets * 100);
  const std::vector<Step> got = read_steps(*ahead);
  expect_same(want, got);
  EXPECT_EQ(ahead->error(), plan.error);
  EXPECT_EQ(ahead->position(), plan.packets * 100);
  EXPECT_FALSE(ahead->next(*std::make_unique<CapturedPacket>())) << "an ended source stays ended";
}

TEST(ReadAhead, GivesWhatTheSourceGivesStepByStep) {
  expect_read_ahead_gives_the_same(packets(0));
  expect_read_ahead_gives_the_same(packets(1));
  Plan two = packets(2);
  two.interface_at = {1};
  expect_read_ahead_gives_the_same(two);
  // Several batches (1024 packets or 256 KiB each), interfaces declared at batch edges and
  // inside, packets larger than a batch's bytes, an error at the end.
  Plan many = packets(9000);
  many.interface_at = {0, 1, 1023, 1024, 1025, 2047, 2048, 8999};
  many.big_at = {3, 4, 1026, 8998};
  many.error = "cut short after 9000 packets";
  expect_read_ahead_gives_the_same(many);
}

TEST(ReadAhead, ReadsOnAThreadOfItsOwnFromTheSecondPacket) {
  auto source = std::make_unique<PlannedSource>(packets(5000));
  const PlannedSource& planned = *source;
  std::unique_ptr<CaptureSource> ahead = read_ahead(std::move(source), ReadAhead::kCopy);
  read_steps(*ahead);
  const std::vector<std::thread::id> callers = planned.callers();
  ASSERT_EQ(callers.size(), 5001u);
  EXPECT_EQ(callers[0], std::this_thread::get_id()) << "the first packet is read by the caller";
  for (size_t i = 1; i < callers.size(); ++i) ASSERT_NE(callers[i], std::this_thread::get_id()) << "call " << i;
}

// Which calls of a source's next() came from the test's own thread.
std::vector<bool> on_this_thread(const PlannedSource& s) {
  std::vector<bool> out;
  for (std::thread::id id : s.callers()) out.push_back(id == std::this_thread::get_id());
  return out;
}

TEST(ReadAhead, OnlyAsManyFilesAsSlotsAreReadAheadAtOnce) {
  auto slots = std::make_shared<ReadAheadSlots>(1);
  auto a_source = std::make_unique<PlannedSource>(packets(3000)), b_source = std::make_unique<PlannedSource>(packets(3000)),
       c_source = std::make_unique<PlannedSource>(packets(3000));
  const PlannedSource &a_planned = *a_source, &b_planned = *b_source, &c_planned = *c_source;
  std::unique_ptr<CaptureSource> a = read_ahead(std::move(a_source), ReadAhead::kCopy, slots);
  std::unique_ptr<CaptureSource> b = read_ahead(std::move(b_source), ReadAhead::kCopy, slots);
  std::unique_ptr<CaptureSource> c = read_ahead(std::move(c_source), ReadAhead::kCopy, slots);
  CapturedPacket p;
  // Interleaved, as two sniffers' files: a takes the one slot, b is read here.
  for (int i = 0; i < 2000; ++i) {
    ASSERT_TRUE(a->next(p));
    ASSERT_TRUE(b->next(p));
  }
  const std::vector<bool> a_here = on_this_thread(a_planned), b_here = on_this_thread(b_planned);
  EXPECT_TRUE(a_here[0]);
  EXPECT_EQ(std::count(a_here.begin() + 1, a_here.end(), true), 0) << "a reads ahead";
  EXPECT_EQ(std::count(b_here.begin(), b_here.end(), false), 0) << "b finds no slot and is read here";
  // a ends and gives its slot back: c, reached after it (a ring's next file), reads ahead.
  while (a->next(p)) {
  }
  ASSERT_TRUE(c->next(p));
  ASSERT_TRUE(c->next(p));
  read_steps(*c);
  const std::vector<bool> c_here = on_this_thread(c_planned);
  EXPECT_TRUE(c_here[0]);
  EXPECT_EQ(std::count(c_here.begin() + 1, c_here.end(), true), 0) << "c got the slot a gave back";
  // b stays on this thread to its end, and gives what it read.
  const std::vector<Step> rest = read_steps(*b);
  EXPECT_EQ(rest.size(), 1001u);
  EXPECT_EQ(rest[999].p.frame, 3000u);
  const std::vector<bool> b_all = on_this_thread(b_planned);
  EXPECT_EQ(std::count(b_all.begin(), b_all.end(), false), 0);
}

TEST(ReadAhead, AFileNotReachedHoldsOnePacketAndADroppedOneStops) {
  auto source = std::make_unique<PlannedSource>(packets(200000));
  const PlannedSource& planned = *source;
  std::unique_ptr<CaptureSource> ahead = read_ahead(std::move(source), ReadAhead::kCopy);
  CapturedPacket p;
  ASSERT_TRUE(ahead->next(p));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(planned.given(), 1u) << "no reading ahead before the second packet is asked for";
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(ahead->next(p));
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  // The batch being read, the ones queued and the one being filled: a few batches, not the file.
  EXPECT_LE(planned.given(), 1 + 4 * 1024u);
  ahead.reset();  // stops and joins the thread (a hang here fails by the test's timeout)
}

TEST(ReadAhead, ASourceThatThrowsEndsWithTheReason) {
  Plan failing = packets(100);
  failing.throw_at = 10;
  std::unique_ptr<CaptureSource> ahead = read_ahead(std::make_unique<PlannedSource>(failing), ReadAhead::kCopy);
  const std::vector<Step> steps = read_steps(*ahead);
  ASSERT_EQ(steps.size(), 11u);
  EXPECT_EQ(steps[9].p.frame, 10u);
  EXPECT_EQ(ahead->error(), "reading stopped: the planned failure");
}

// A source whose bytes stay where they are while it lives (as a mapped file's): frames built here.
class MappedLikeSource final : public CaptureSource {
 public:
  explicit MappedLikeSource(std::vector<test::Bytes> frames) : frames_(std::move(frames)) {
    interfaces_.push_back({"eth0", LinkType::kEthernet});
  }
  bool next(CapturedPacket& out) override {
    if (given_ == frames_.size()) return false;
    const test::Bytes& f = frames_[given_++];
    out = CapturedPacket{};
    out.frame = given_;
    out.ts = TimeNs(given_) * 1000;
    out.cap_len = uint32_t(f.size());
    out.wire_len = uint32_t(f.size());
    out.link = LinkType::kEthernet;
    out.data = f.empty() ? nullptr : f.data();
    return true;
  }
  const std::vector<CaptureInterface>& interfaces() const override { return interfaces_; }
  const std::string& error() const override { return error_; }
  uint64_t position() const override { return given_; }
  uint64_t size() const override { return frames_.size(); }
  std::string format() const override { return "mapped"; }
  const test::Bytes& frame(size_t i) const { return frames_[i]; }

 private:
  std::vector<test::Bytes> frames_;
  std::vector<CaptureInterface> interfaces_;
  std::string error_;
  size_t given_ = 0;
};

TEST(ReadAhead, DecodingAheadLeavesTheBytesAndHandsOverTheirDecoding) {
  // NVMe commands (their CIDs and keys known), completions, WRITEs, ACKs, PFC, malformed and
  // non-RoCE frames, over several batches.
  std::vector<test::Bytes> frames;
  std::vector<uint16_t> cid_of;  // of each frame that is a command, else 0xFFFF
  for (uint32_t i = 0; i < 5000; ++i) {
    test::RoceSpec s = test::up(0x04, 1000 + i);  // SEND ONLY
    uint16_t cid = 0xFFFF;
    switch (i % 7) {
      case 0: cid = uint16_t(i); s.payload = test::sqe(0x01, cid, 1, 0x40, 4096, 0xA0000 + i); break;
      case 1: s = test::down(0x04, i); s.payload = test::cqe(uint16_t(i), 0); break;
      case 2: s = test::up(0x0A, i); s.ext = test::reth(0x1000, 7, 4096); s.payload.assign(64, uint8_t(i)); break;
      case 3: s = test::down(0x11, i); s.ext = test::aeth(0, i); break;
      case 4: { const uint16_t q[8] = {0, 0, 0, uint16_t(i), 0, 0, 0, 0}; frames.push_back(test::pfc_frame(0x08, q)); cid_of.push_back(cid); continue; }
      case 5: frames.push_back(test::Bytes(i % 3 == 0 ? 0 : 30, 0x45)); cid_of.push_back(cid); continue;  // too short / nothing
      case 6: s.pad = 3; s.payload.assign(2, 0); break;  // headers longer than the packet: malformed
    }
    frames.push_back(test::build_roce(s));
    cid_of.push_back(cid);
  }
  auto source = std::make_unique<MappedLikeSource>(frames);
  const MappedLikeSource& mapped = *source;
  std::unique_ptr<CaptureSource> ahead = read_ahead(std::move(source), ReadAhead::kDecode);
  CapturedPacket p;
  size_t n = 0, commands = 0;
  while (ahead->next(p)) {
    SCOPED_TRACE("frame " + std::to_string(n));
    const test::Bytes& bytes = mapped.frame(n);
    ASSERT_EQ(p.data, bytes.empty() ? nullptr : bytes.data()) << "the bytes stay where the source has them";
    ASSERT_EQ(p.cap_len, bytes.size());
    DecodedFrame here;
    decode_frame(LinkType::kEthernet, p.data, p.cap_len, p.wire_len, here);
    if (n == 0) {
      EXPECT_EQ(p.decoded, nullptr) << "the first packet is read by the caller, not decoded ahead";
    } else {
      ASSERT_NE(p.decoded, nullptr);
      const DecodedFrame& d = *p.decoded;
      EXPECT_EQ(d.roce.kind, here.roce.kind);
      EXPECT_EQ(d.roce.error, here.roce.error);
      EXPECT_EQ(d.roce.bth.psn, here.roce.bth.psn);
      EXPECT_EQ(d.roce.bth.opcode, here.roce.bth.opcode);
      EXPECT_EQ(d.roce.payload_offset, here.roce.payload_offset);
      EXPECT_EQ(d.roce.aeth.msn, here.roce.aeth.msn);
      EXPECT_EQ(d.roce.reth.rkey, here.roce.reth.rkey);
      EXPECT_EQ(d.roce.pfc.quanta[3], here.roce.pfc.quanta[3]);
      EXPECT_EQ(d.payload_hash, here.payload_hash);
      EXPECT_EQ(d.headers.kind, here.headers.kind);
      EXPECT_EQ(d.headers.bth.psn, here.headers.bth.psn);
      EXPECT_EQ(d.headers.bth.psn, d.roce.bth.psn);
      EXPECT_EQ(d.headers.payload_len, d.roce.payload_len);
      EXPECT_EQ(d.headers.aeth.msn, d.roce.aeth.msn);
      EXPECT_EQ(d.capsule.kind, here.capsule.kind);
      EXPECT_EQ(d.capsule.cid, here.capsule.cid);
      EXPECT_EQ(d.capsule.key_count, here.capsule.key_count);
      EXPECT_EQ(d.capsule.keys[0], here.capsule.keys[0]);
      // And what the test built: the command's CID and key.
      if (cid_of[n] != 0xFFFF) {
        ++commands;
        EXPECT_EQ(d.capsule.kind, CapsuleKind::kCommand);
        EXPECT_EQ(d.capsule.cid, cid_of[n]);
        EXPECT_EQ(d.capsule.keys[0], 0xA0000u + n);
      }
    }
    ++n;
  }
  EXPECT_EQ(n, frames.size());
  EXPECT_GT(commands, 700u);
}

}  // namespace
}  // namespace rdmatel
