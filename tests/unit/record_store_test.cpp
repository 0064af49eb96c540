// SPDX-License-Identifier: GPL-2.0-or-later
// The store's notes by frame once indexed (engine/include/rdmatel/record_store.h): each frame's
// notes, and only them, in the order they came, whatever order the frames came in; frames
// numbered densely (sorted by counting, moved in place) and far apart (sorted by comparison).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "rdmatel/record_store.h"

namespace rdmatel {
namespace {

void notes_by_frame(uint64_t frame_stride) {
  std::mt19937_64 rng(42);
  std::vector<FrameNote> given;
  // Notes come a reorder window late and interleaved: frames in a shuffled order, a frame's
  // several notes apart from one another.
  for (int i = 0; i < 20000; ++i) {
    FrameNote n;
    n.frame = 1 + (rng() % 5000) * frame_stride;
    n.ref = uint64_t(i);  // the order it came in
    n.detail = uint32_t(rng());
    given.push_back(n);
  }
  RecordStore store;
  for (const FrameNote& n : given) store.on_note(n);
  store.index();
  size_t seen = 0;
  uint64_t previous = 0;
  for (const FrameNote& n : store.all_notes()) {
    ASSERT_GE(n.frame, previous) << "all notes in frame order";
    previous = n.frame;
  }
  for (uint64_t f = 1; f <= 1 + 5000 * frame_stride; f += frame_stride) {
    std::vector<FrameNote> expected;
    for (const FrameNote& n : given)
      if (n.frame == f) expected.push_back(n);
    const auto got = store.notes(f);
    ASSERT_EQ(got.size(), expected.size()) << "frame " << f;
    for (size_t i = 0; i < got.size(); ++i) {
      ASSERT_EQ(got[i].ref, expected[i].ref) << "frame " << f << ": the order they came in";
      ASSERT_EQ(got[i].detail, expected[i].detail) << "frame " << f;
    }
    seen += got.size();
  }
  EXPECT_EQ(seen, given.size());
  // A lookup starts where the one before began (the plugin's passes ask frame after frame): in
  // any other order (the GUI's clicks, the same frame twice, frames without notes, beyond the
  // last) it answers the same.
  std::vector<uint64_t> asked;
  for (uint64_t f = 0; f <= 2 + 5000 * frame_stride; f += std::max<uint64_t>(1, frame_stride / 3)) asked.push_back(f);
  std::shuffle(asked.begin(), asked.end(), rng);
  for (size_t i = 0; i < 3000 && i < asked.size(); ++i) {
    const uint64_t f = asked[i];
    size_t expected = 0;
    for (const FrameNote& n : given) expected += n.frame == f;
    ASSERT_EQ(store.notes(f).size(), expected) << "frame " << f << ", asked " << i + 1 << ". in a shuffled order";
    ASSERT_EQ(store.notes(f).size(), expected) << "frame " << f << " asked twice";
    for (const FrameNote& n : store.notes(f)) ASSERT_EQ(n.frame, f);
  }
}

TEST(RecordStore, NotesByFrameInTheOrderTheyCameDenseFrames) { notes_by_frame(1); }

TEST(RecordStore, NotesByFrameInTheOrderTheyCameSparseFrames) { notes_by_frame(100000); }

// As the engine makes them on a capture: many more notes than the store's first block holds (it
// grows several times, and the sort gives the source's pages back as it reads them), in about frame
// order with notes of earlier frames made later (an I/O's command noted at its completion).
TEST(RecordStore, HundredsOfThousandsOfNotesAboutInFrameOrderKeepEveryNoteOfEveryFrame) {
  std::mt19937_64 rng(3);
  constexpr uint64_t kFrames = 200000;
  std::vector<std::vector<std::pair<uint64_t, uint32_t>>> expected(kFrames + 1);  // (ref, detail) by frame
  RecordStore store;
  uint64_t ref = 0;
  for (uint64_t f = 1; f <= kFrames; ++f)
    for (int k = int(rng() % 4); k > 0; --k) {
      FrameNote n;
      const uint64_t back = rng() % 8 ? 0 : rng() % 5000;
      n.frame = f > back ? f - back : 1;
      n.ref = ++ref;
      n.detail = uint32_t(rng());
      store.on_note(n);
      expected[n.frame].emplace_back(n.ref, n.detail);
    }
  ASSERT_GT(ref, 250000u) << "more notes than the first block";
  store.index();
  ASSERT_EQ(store.all_notes().size(), ref);
  for (uint64_t f = 0; f <= kFrames + 1; ++f) {
    const auto got = store.notes(f);
    const size_t want = f <= kFrames ? expected[f].size() : 0;
    ASSERT_EQ(got.size(), want) << "frame " << f;
    for (size_t i = 0; i < got.size(); ++i) {
      ASSERT_EQ(got[i].frame, f);
      ASSERT_EQ(got[i].ref, expected[f][i].first) << "frame " << f << ": the order they came in";
      ASSERT_EQ(got[i].detail, expected[f][i].second) << "frame " << f;
    }
  }
}

// A first pass asks, for each packet of a message, whether the message it is (following merges:
// a message found to continue an earlier one points to it) completed on that packet's frame.
TEST(RecordStore, MessageCompletedOnFollowsMergesAndNamesTheMessageCounted) {
  RecordStore store;
  auto add = [&](uint64_t id, bool complete, uint64_t last_frame, uint64_t merged_into) {
    MessageRecord m;
    m.id = id;
    m.complete = complete;
    m.first_frame = 1;
    m.last_frame = last_frame;
    m.merged_into = merged_into;
    store.on_record(Record{&kMessageSchema, &m});
  };
  add(1, true, 10, 0);   // complete on frame 10
  add(2, false, 12, 0);  // still open
  add(3, true, 7, 1);    // merged into 1: its packets count for 1
  add(5, true, 9, 3);    // merged into 3, merged into 1
  add(6, true, 20, 4);   // merged into 4, of which no record came
  EXPECT_EQ(store.message_completed_on(1, 10), 1u);
  EXPECT_EQ(store.message_completed_on(1, 9), 0u) << "not its last frame";
  EXPECT_EQ(store.message_completed_on(2, 12), 0u) << "not complete";
  EXPECT_EQ(store.message_completed_on(3, 10), 1u) << "the message it was merged into";
  EXPECT_EQ(store.message_completed_on(3, 7), 0u) << "its own last frame no longer counts";
  EXPECT_EQ(store.message_completed_on(5, 10), 1u) << "two merges";
  EXPECT_EQ(store.message_completed_on(6, 20), 0u) << "merged into a message never stored";
  EXPECT_EQ(store.message_completed_on(4, 20), 0u);
  EXPECT_EQ(store.message_completed_on(0, 10), 0u);
  EXPECT_EQ(store.message_completed_on(99, 10), 0u);
  // And the record it names is the one message() gives for any packet of it.
  ASSERT_TRUE(store.message(5));
  EXPECT_EQ(store.message(5)->id, 1u);
}

// Congestion records are counted on their first frame: PFC priorities several on one frame, ECN
// flows and CNP pairs one each. Asked in frame order, backwards and shuffled, each frame gives
// what a scan of what was given finds.
TEST(RecordStore, CongestionCountedOnItsFirstFrameInAnyOrderOfLookups) {
  std::mt19937_64 rng(7);
  RecordStore store;
  std::vector<uint64_t> pfc_frames, ecn_frames, cnp_frames;
  for (int i = 0; i < 3000; ++i) {
    const uint64_t frame = 1 + rng() % 4000;
    switch (rng() % 3) {
      case 0: {
        PfcRecord r;
        r.first_frame = frame;
        r.priority = uint8_t(i % 8);
        store.on_record(Record{&kCongestionSchema, static_cast<const CongestionHead*>(&r)});
        pfc_frames.push_back(frame);
        break;
      }
      case 1: {
        if (std::count(ecn_frames.begin(), ecn_frames.end(), frame)) break;  // one flow's first packet
        EcnRecord r;
        r.first_frame = frame;
        store.on_record(Record{&kCongestionSchema, static_cast<const CongestionHead*>(&r)});
        ecn_frames.push_back(frame);
        break;
      }
      default: {
        if (std::count(cnp_frames.begin(), cnp_frames.end(), frame)) break;
        CnpRecord r;
        r.first_frame = frame;
        store.on_record(Record{&kCongestionSchema, static_cast<const CongestionHead*>(&r)});
        cnp_frames.push_back(frame);
      }
    }
  }
  store.index();
  std::vector<uint64_t> order;
  for (uint64_t f = 0; f <= 4001; ++f) order.push_back(f);
  auto check = [&](const char* how) {
    for (uint64_t f : order) {
      const size_t pfc = size_t(std::count(pfc_frames.begin(), pfc_frames.end(), f));
      const auto got = store.pfc_counted_on(f);
      ASSERT_EQ(got.size(), f ? pfc : 0) << "frame " << f << ", " << how;
      for (const PfcRecord* r : got) ASSERT_EQ(r->first_frame, f);
      const bool ecn = f && std::count(ecn_frames.begin(), ecn_frames.end(), f);
      ASSERT_EQ(store.congestion_counted_on(f) != nullptr, ecn) << "frame " << f << ", " << how;
      if (ecn) {
        ASSERT_EQ(store.congestion_counted_on(f)->first_frame, f);
      }
      const bool cnp = f && std::count(cnp_frames.begin(), cnp_frames.end(), f);
      ASSERT_EQ(store.cnp_counted_on(f) != nullptr, cnp) << "frame " << f << ", " << how;
    }
  };
  check("in frame order");
  std::reverse(order.begin(), order.end());
  check("backwards");
  std::shuffle(order.begin(), order.end(), rng);
  check("shuffled");
}

}  // namespace
}  // namespace rdmatel
