// SPDX-License-Identifier: GPL-2.0-or-later
// The plugin's first pass as the GUI runs it during a live capture: frames dissected again while
// new ones keep coming (plugin/capture_state.h, view(..., again)) show every note made about
// them so far, and when the first pass ends (plugin/first_pass_end.h).
#include <gtest/gtest.h>

#include <memory>
#include <random>
#include <string>
#include <vector>

#include "plugin/capture_state.h"
#include "plugin/first_pass_end.h"
#include "rdmatel/capture.h"
#include "rdmatel/engine.h"
#include "rdmatel/record_store.h"

namespace rdmatel::plugin {
namespace {

// What a frame dissected again must show: the store's notes about it, in the order they were
// made, found by a plain scan (not the chain under test).
std::vector<FrameNote> notes_about(std::span<const FrameNote> all, uint64_t frame) {
  std::vector<FrameNote> out;
  for (const FrameNote& n : all)
    if (n.frame == frame) out.push_back(n);
  return out;
}

bool same_notes(std::span<const FrameNote> a, const std::vector<FrameNote>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].frame != b[i].frame || a[i].kind != b[i].kind || a[i].ref != b[i].ref || a[i].detail != b[i].detail)
      return false;
  return true;
}

// Every frame of a sample capture through CaptureState as the GUI's live capture does: each
// frame pushed once (read by nobody: with an engine thread it goes there), and between pushes
// some earlier frames dissected again. They must show what a second engine, fed the same frames
// in step, has noted about them by then.
void live_capture_revisits(const std::string& sample, bool engine_thread) {
  std::unique_ptr<CaptureSource> src;
  std::string err;
  ASSERT_EQ(open_fast_capture(sample, src, err), OpenStatus::kOk) << err;
  Settings settings;
  std::string problem;
  ASSERT_TRUE(settings.set("reorder_window", "0", problem)) << problem;  // notes about recent frames at once
  CaptureState state(settings, engine_thread);
  Settings with_notes_settings = settings;
  with_notes_settings.frame_notes = true;
  Engine reference(with_notes_settings);
  RecordStore reference_store;
  reference.subscribe(reference_store);
  std::vector<PointId> reference_points;

  std::mt19937 rng(7);
  CapturedPacket p;
  uint32_t last = 0;
  size_t checked = 0, with_notes = 0;
  while (src->next(p)) {
    ASSERT_EQ(p.link, LinkType::kEthernet);
    last = uint32_t(p.frame);
    state.process(last, p.ts, p.has_ts, p.interface, [](uint32_t) { return "leaf"; }, kWtapEncapEthernet, p.data,
                  p.cap_len, p.wire_len, /*shown=*/false);
    while (reference_points.size() <= p.interface)
      reference_points.push_back(reference.declare_point("leaf", uint32_t(reference_points.size())));
    FrameIn in;
    in.frame = p.frame;
    in.ts = p.ts;
    in.has_ts = p.has_ts;
    in.source = p.interface;
    in.point = reference_points[p.interface];
    in.link = p.link;
    in.data = p.data;
    in.cap_len = p.cap_len;
    in.wire_len = p.wire_len;
    reference.push(in);
    if (last % 7 != 0) continue;
    for (int k = 0; k < 4; ++k) {
      // The rows on screen (the newest frames) and an older one.
      const uint32_t frame = k < 3 ? (last > uint32_t(k) ? last - uint32_t(k) : 1) : 1 + uint32_t(rng() % last);
      const FrameView v = state.view(frame, p.interface, /*again=*/true);
      ASSERT_NE(v.point, nullptr) << "frame " << frame;
      const std::vector<FrameNote> expected = notes_about(reference_store.all_notes(), frame);
      ASSERT_TRUE(same_notes(v.notes, expected))
          << "frame " << frame << " shown again after frame " << last << ": " << v.notes.size() << " notes, "
          << expected.size() << " expected";
      ++checked;
      with_notes += !expected.empty();
    }
  }
  EXPECT_GT(checked, 100u);
  EXPECT_GT(with_notes, checked / 4) << "most frames of the sample carry notes";
  // The end of the capture: from now on each frame shows its final notes.
  state.finish();
  reference.finish();
  reference_store.index();
  for (uint32_t frame = 1; frame <= last; frame += 13)
    EXPECT_TRUE(same_notes(state.view(frame, 0).notes, notes_about(reference_store.all_notes(), frame))) << frame;
}

TEST(LiveCapture, FramesShownAgainShowTheirNotesSoFar) {
  live_capture_revisits(RDMATEL_SOURCE_DIR "/samples/nvme_2point.pcapng", false);
}

TEST(LiveCapture, FramesShownAgainShowTheirNotesSoFarWithTheEngineThread) {
  live_capture_revisits(RDMATEL_SOURCE_DIR "/samples/mixed.pcapng", true);
}

bool same_counts(const FrameCounts& a, const FrameCounts& b) {
  if (a.io_count != b.io_count || a.message_count != b.message_count) return false;
  for (size_t i = 0; i < a.io_count; ++i)
    if (a.ios[i]->id != b.ios[i]->id || a.ios[i]->rsp_frame != b.ios[i]->rsp_frame) return false;
  for (size_t i = 0; i < a.message_count; ++i)
    if (a.messages[i].id != b.messages[i].id || a.messages[i].last_frame != b.messages[i].last_frame) return false;
  return true;
}

// tshark in one pass: every frame dissected once, as it is read. Two states take the same frames,
// one told that frames are shown once: every frame read (every third, the others going to the
// engine thread) shows the same notes and counts in both, and the one told holds no more notes
// than the frame just shown made, where the other holds every note of the capture.
void one_pass(const std::string& sample, bool engine_thread, uint32_t read_every) {
  std::unique_ptr<CaptureSource> src;
  std::string err;
  ASSERT_EQ(open_fast_capture(sample, src, err), OpenStatus::kOk) << err;
  Settings settings;
  std::string problem;
  ASSERT_TRUE(settings.set("reorder_window", "0", problem)) << problem;  // frames show notes as they are read
  CaptureState kept(settings, engine_thread), once(settings, engine_thread);
  once.frames_shown_once();
  CapturedPacket p;
  size_t shown = 0, with_notes = 0, counted = 0;
  while (src->next(p)) {
    const uint32_t frame = uint32_t(p.frame);
    const bool read = frame % read_every == 0;
    for (CaptureState* s : {&kept, &once})
      s->process(frame, p.ts, p.has_ts, p.interface, [](uint32_t) { return "leaf"; }, kWtapEncapEthernet, p.data,
                 p.cap_len, p.wire_len, read);
    if (!read) continue;
    const FrameView a = kept.view(frame, p.interface), b = once.view(frame, p.interface);
    ASSERT_TRUE(same_notes(b.notes, std::vector<FrameNote>(a.notes.begin(), a.notes.end()))) << "frame " << frame;
    const FrameCounts ca = kept.counts(frame, a), cb = once.counts(frame, b);
    ASSERT_TRUE(same_counts(ca, cb)) << "frame " << frame;
    // Notes made while this frame was pushed, about it and others: all the state holds.
    EXPECT_LE(once.notes_held(), 64u) << "frame " << frame;
    ++shown;
    with_notes += !a.notes.empty();
    counted += ca.io_count + ca.message_count;
  }
  EXPECT_GT(shown, 100u);
  EXPECT_GT(with_notes, shown / 4) << "most frames of the sample carry notes";
  EXPECT_GT(counted, 10u) << "I/Os and messages complete on frames read";
  EXPECT_GT(kept.notes_held(), 1000u) << "a state that may show frames again keeps every note";
}

TEST(OnePass, FramesShownOnceShowTheSameAndHoldNoOldNotes) {
  one_pass(RDMATEL_SOURCE_DIR "/samples/nvme_2point.pcapng", false, 1);
}

// A one-pass run that read nothing at first and then reads a frame: the frames before it were
// not measured, and the frame read says so (with its own notes as usual).
TEST(OnePass, AFrameReadAfterUnmeasuredOnesSaysWhichWereNot) {
  std::unique_ptr<CaptureSource> src;
  std::string err;
  ASSERT_EQ(open_fast_capture(RDMATEL_SOURCE_DIR "/samples/nvme_2point.pcapng", src, err), OpenStatus::kOk) << err;
  Settings settings;
  CaptureState state(settings, /*engine_thread=*/false);
  state.frames_shown_once();
  CapturedPacket p;
  while (src->next(p) && p.frame < 40) {
  }
  const uint32_t frame = uint32_t(p.frame);
  state.not_measured_before(frame);
  state.process(frame, p.ts, p.has_ts, p.interface, [](uint32_t) { return "leaf"; }, kWtapEncapEthernet, p.data,
                p.cap_len, p.wire_len, /*shown=*/true);
  const FrameView v = state.view(frame, p.interface);
  ASSERT_EQ(v.warnings.size(), 1u);
  EXPECT_NE(v.warnings[0].find("frames 1 to 39 were not measured"), std::string::npos) << v.warnings[0];
  EXPECT_NE(v.point, nullptr);
  EXPECT_TRUE(state.view(frame + 1, p.interface).warnings.empty()) << "said once";
}

TEST(OnePass, FramesShownOnceWithTheEngineThreadAndFramesNobodyReads) {
  one_pass(RDMATEL_SOURCE_DIR "/samples/mixed.pcapng", true, 3);
}

CaptureIdentity first_frame(int64_t ts, uint8_t byte) {
  const uint8_t data[4] = {byte, 1, 2, 3};
  return CaptureIdentity::of_first_frame(ts, 0, data, sizeof data, 60);
}

TEST(FirstPassEnd, ALiveCaptureIsNotEndedByAFrameShownAgain) {
  FirstPassEnd end;
  end.new_session();
  end.first_frame(first_frame(1000, 0xAA));
  EXPECT_FALSE(end.revisit_ends_pass());
}

TEST(FirstPassEnd, ARedissectionOfACaptureReadToItsEndEndsAtItsFirstRevisit) {
  FirstPassEnd end;
  end.new_session();
  end.first_frame(first_frame(1000, 0xAA));
  end.ended();  // the file was read (or the live capture stopped)
  end.new_session();  // a preference changed: every frame again
  EXPECT_FALSE(end.revisit_ends_pass()) << "no frame of the redissection yet";
  end.first_frame(first_frame(1000, 0xAA));
  EXPECT_TRUE(end.revisit_ends_pass());
}

TEST(FirstPassEnd, ANewCaptureAfterAnotherIsNotARedissection) {
  FirstPassEnd end;
  end.new_session();
  end.first_frame(first_frame(1000, 0xAA));
  end.ended();
  for (const CaptureIdentity& other : {first_frame(1001, 0xAA), first_frame(1000, 0xAB),
                                       CaptureIdentity::of_first_frame(1000, 1, nullptr, 0, 60)}) {
    end.new_session();
    end.first_frame(other);
    EXPECT_FALSE(end.revisit_ends_pass());
  }
}

TEST(FirstPassEnd, ALiveCaptureRedissectedWhileItRunsIsNotEnded) {
  FirstPassEnd end;
  end.new_session();
  end.first_frame(first_frame(1000, 0xAA));  // capturing; never ended
  end.new_session();
  end.first_frame(first_frame(1000, 0xAA));
  EXPECT_FALSE(end.revisit_ends_pass());
}

}  // namespace
}  // namespace rdmatel::plugin
