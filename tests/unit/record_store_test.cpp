// SPDX-License-Identifier: GPL-2.0-or-later
// The store's notes by frame once indexed (engine/include/rdmatel/record_store.h): each frame's
// notes, and only them, in the order they came, whatever order the frames came in; frames
// numbered densely (sorted by counting, moved in place) and far apart (sorted by comparison).
#include <gtest/gtest.h>

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
}

TEST(RecordStore, NotesByFrameInTheOrderTheyCameDenseFrames) { notes_by_frame(1); }

TEST(RecordStore, NotesByFrameInTheOrderTheyCameSparseFrames) { notes_by_frame(100000); }

}  // namespace
}  // namespace rdmatel
