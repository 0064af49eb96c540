// SPDX-License-Identifier: GPL-2.0-or-later
// The engine on two threads (threads 2) delivers exactly what it delivers on one, in the same
// order: every record (final and the provisional first-pass snapshots), every frame note and
// every warning, here with frame notes on, as the analyzer asks for them (the CLI's outputs are
// compared by tests/integration/test_threads.py).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "rdmatel/session.h"

namespace rdmatel {
namespace {

// Everything a front end hears, in order, as text.
class Log final : public RecordSink {
 public:
  std::vector<std::string> lines;
  size_t records = 0, provisional = 0, notes = 0;

  void on_record(const Record& r) override {
    ++records;
    provisional += r.provisional;
    std::string line = std::string(r.schema->channel) + (r.provisional ? " provisional" : "");
    for (const Column& c : r.schema->columns) {
      Value v;
      if (!c.get(r.data, v)) continue;
      line += std::string(" ") + c.name + "=";
      switch (c.type) {
        case ValueType::kBool: line += v.b ? "1" : "0"; break;
        case ValueType::kUnsigned: line += std::to_string(v.u); break;
        case ValueType::kSigned:
        case ValueType::kMicros: line += std::to_string(v.i); break;
        case ValueType::kRate:
        case ValueType::kRatio: line += std::to_string(v.d); break;
        case ValueType::kString: line += std::string(v.s); break;
        case ValueType::kAddress: line += v.ip ? v.ip->to_string() : "?"; break;
        case ValueType::kPoint: line += std::to_string(v.point); break;
      }
    }
    lines.push_back(std::move(line));
  }
  void on_note(const FrameNote& n) override {
    ++notes;
    lines.push_back("note " + std::string(note_kind_name(n.kind)) + " frame=" + std::to_string(n.frame) +
                    " ref=" + std::to_string(n.ref) + " detail=" + std::to_string(n.detail));
  }
  void on_warning(const Warning& w) override { lines.push_back("warning " + std::string(w.key) + ": " + w.text); }
};

Log run(const std::vector<std::string>& files, uint64_t threads, const char* reorder_window) {
  Settings s;
  s.frame_notes = true;
  std::string error;
  EXPECT_TRUE(s.set("threads", std::to_string(threads), error)) << error;
  EXPECT_TRUE(s.set("reorder_window", reorder_window, error)) << error;
  EXPECT_TRUE(s.set("alert", "rtt>20", error)) << error;
  EXPECT_TRUE(s.set("max_messages", "60", error)) << error;  // evictions, and their warning
  auto session = Session::open(files, s, nullptr, error);
  EXPECT_TRUE(session) << error;
  Log log;
  if (!session) return log;
  session->subscribe(log);
  session->run();
  return log;
}

// With the default reorder window, and with none: then every frame is measured as it is pushed
// and the components make first-pass snapshots of messages and I/Os (Ctx::packet_shown_now,
// carried to the second thread with each packet).
void expect_same(const std::vector<std::string>& files) {
  for (const char* window : {"250", "0"}) {
    const Log one = run(files, 1, window);
    const Log two = run(files, 2, window);
    ASSERT_GT(one.records, 0u);
    EXPECT_GT(one.provisional, 0u);  // frame notes on: snapshots are part of the order
    EXPECT_GT(one.notes, 0u);
    ASSERT_EQ(one.lines.size(), two.lines.size()) << "reorder window " << window;
    for (size_t i = 0; i < one.lines.size(); ++i)
      ASSERT_EQ(one.lines[i], two.lines[i]) << "at output " << i << ", reorder window " << window;
  }
}

const std::string kSamples = std::string(RDMATEL_SOURCE_DIR) + "/samples/";

TEST(Threads, MixedCaptureThreePointsWithFrameNotes) { expect_same({kSamples + "mixed.pcapng"}); }
TEST(Threads, WriteFlowsWithFrameNotes) { expect_same({kSamples + "write_flows.pcapng"}); }
TEST(Threads, MidstreamAndTwoFilesMerged) {
  expect_same({kSamples + "nvme_midstream.pcapng"});
  expect_same({kSamples + "nvme_2point.pcapng", kSamples + "nvme_3point.pcapng"});
}

}  // namespace
}  // namespace rdmatel
