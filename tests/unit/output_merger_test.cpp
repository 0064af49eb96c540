// SPDX-License-Identifier: GPL-2.0-or-later
// The merge of the engine's two threads' outputs (core/output_merger.h), on its own: a record the
// pair-local thread makes goes out at once and uncopied when its place is certain, and waits as
// a copy when it is not, and either way everything comes out in tag order (the one-thread order).
#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <vector>

#include "engine/src/core/output_merger.h"
#include "rdmatel/records.h"

namespace rdmatel {
namespace {

// What the front ends hear: each record's id, and whether it is the very object the component
// made (delivered directly) or a copy.
class Heard final : public RecordSink {
 public:
  std::vector<uint64_t> ids;
  std::vector<const void*> objects;
  void on_record(const Record& r) override {
    ids.push_back(r.as<MessageRecord>().id);
    objects.push_back(r.data);
  }
  void on_note(const FrameNote&) override {}
  void on_warning(const Warning&) override {}
};

class OutputMergerTest : public ::testing::Test {
 protected:
  OutputMergerTest()
      : flows_(1000),
        sampling_({}, 0, 0),
        ctx_(settings_, points_, flows_, roles_, clock_, warnings_, gpus_, sampling_, sinks_, false, 0, 0),
        merger_(home_, sinks_, warnings_, ctx_, stop_) {
    sinks_.push_back(&heard_);
  }

  static MessageRecord message(uint64_t id) {
    MessageRecord m;
    m.id = id;
    return m;
  }
  // The home thread hands over a record made at `tag` and says it makes nothing before `bound`.
  void home_makes(uint64_t id, StepTag tag, StepTag bound) {
    OutBatch b;
    OutItem& i = b.items.emplace_back();
    i.tag = tag;
    i.schema = &kMessageSchema;
    const MessageRecord m = message(id);
    i.record = kMessageSchema.copy.clone(&m);
    b.bound = bound;
    home_.push(std::move(b));
  }
  void home_is_at(StepTag bound) {
    OutBatch b;
    b.bound = bound;
    home_.push(std::move(b));
  }
  // The pair-local thread makes record `m` at `tag`, through a collector as the engine's is.
  bool local_makes(const MessageRecord& m, StepTag tag) {
    cursor_ = tag;
    collector_.on_record(Record{&kMessageSchema, &m, false});
    return !heard_.objects.empty() && heard_.objects.back() == &m;  // true: delivered itself, now
  }

  Settings settings_;
  PointTable points_;
  FlowTable flows_;
  Roles roles_;
  ClockRelations clock_;
  std::vector<RecordSink*> sinks_;
  Warnings warnings_{sinks_};
  GpuMap gpus_;
  Sampling sampling_;
  Ctx ctx_;
  BatchChannel<OutBatch> home_{1000};
  std::atomic<bool> stop_{false};
  OutputMerger merger_;
  Heard heard_;
  StepTag cursor_;
  OutputCollector collector_{cursor_};
};

TEST_F(OutputMergerTest, ARecordWhoseTurnHasComeIsDeliveredAtOnceUncopied) {
  collector_.deliver_directly(&merger_);
  home_makes(1, StepTag{3, 0}, StepTag{9, 0});  // the home thread is at step 9
  const MessageRecord m = message(2);
  EXPECT_TRUE(local_makes(m, StepTag{5, 2}));
  ASSERT_EQ(heard_.ids, (std::vector<uint64_t>{1, 2}));  // the home thread's earlier one first
  EXPECT_EQ(heard_.objects[1], &m);                       // the component's own record
}

TEST_F(OutputMergerTest, ARecordTheHomeThreadMayStillPrecedeWaitsAsACopy) {
  collector_.deliver_directly(&merger_);
  home_is_at(StepTag{5, 0});  // the home thread may still make something at step 5 or later
  const MessageRecord m = message(2);
  EXPECT_FALSE(local_makes(m, StepTag{5, 2}));
  EXPECT_TRUE(heard_.ids.empty());
  // The home thread makes one at (5, 1), before it, and moves on: both go out, in tag order.
  home_makes(1, StepTag{5, 1}, StepTag{6, 0});
  merger_.add_local(collector_.items(), StepTag{5, StepTag::kAfterComponents});
  merger_.pump(false);
  ASSERT_EQ(heard_.ids, (std::vector<uint64_t>{1, 2}));
  EXPECT_NE(heard_.objects[1], &m);  // the copy
}

TEST_F(OutputMergerTest, ARecordAfterOneStillWaitingWaitsBehindIt) {
  collector_.deliver_directly(&merger_);
  home_is_at(StepTag{5, 0});
  const MessageRecord first = message(1), second = message(2), third = message(3);
  EXPECT_FALSE(local_makes(first, StepTag{5, 2}));
  home_is_at(StepTag{20, 0});
  // Its turn has come, but the first one is still waiting: the first goes out, then this one.
  EXPECT_TRUE(local_makes(second, StepTag{7, 2}));
  EXPECT_TRUE(local_makes(third, StepTag{8, 2}));
  ASSERT_EQ(heard_.ids, (std::vector<uint64_t>{1, 2, 3}));
  EXPECT_NE(heard_.objects[0], &first);
  EXPECT_EQ(heard_.objects[1], &second);
  EXPECT_EQ(heard_.objects[2], &third);
}

TEST_F(OutputMergerTest, HomeRecordsAfterADirectOneStayAfterIt) {
  collector_.deliver_directly(&merger_);
  home_makes(3, StepTag{6, 0}, StepTag{9, 0});  // later than the local one: must wait for it
  const MessageRecord m = message(2);
  EXPECT_TRUE(local_makes(m, StepTag{5, 2}));
  EXPECT_EQ(heard_.ids, (std::vector<uint64_t>{2}));
  merger_.add_local(collector_.items(), StepTag{9, 0});
  merger_.pump(false);
  EXPECT_EQ(heard_.ids, (std::vector<uint64_t>{2, 3}));
}

TEST_F(OutputMergerTest, WithoutDirectDeliveryEveryRecordIsACopy) {
  home_is_at(StepTag{20, 0});
  const MessageRecord m = message(2);
  EXPECT_FALSE(local_makes(m, StepTag{5, 2}));
  merger_.add_local(collector_.items(), StepTag{5, StepTag::kAfterComponents});
  merger_.pump(false);
  ASSERT_EQ(heard_.ids, (std::vector<uint64_t>{2}));
  EXPECT_NE(heard_.objects[0], &m);
}

TEST_F(OutputMergerTest, NothingIsDeliveredOnceStopped) {
  collector_.deliver_directly(&merger_);
  home_is_at(StepTag{20, 0});
  merger_.pump(false);
  stop_ = true;
  const MessageRecord m = message(2);
  local_makes(m, StepTag{5, 2});
  EXPECT_TRUE(heard_.ids.empty());
}

}  // namespace
}  // namespace rdmatel
