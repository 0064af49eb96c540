// SPDX-License-Identifier: GPL-2.0-or-later
// Puts the outputs of the engine's two threads (threads > 1) back into the order one thread gives
// and delivers them: each thread's outputs come in tag order (core/pipeline_items.h); an output
// goes out once the other thread can no longer produce one with an earlier tag. The home thread
// (reader, core, components that share facts) says how far it is with each batch it hands over;
// the pair-local thread, which runs the merge, knows how far it is itself.
//
// Delivery is what one thread does in Ctx::emit, note and warn: every sink in order, record
// stages first (a stage's own records, emitted while it handles one, come before that one reaches
// the front ends), warnings once per key.
#pragma once

#include <atomic>
#include <deque>
#include <vector>

#include "rdmatel/batch_channel.h"
#include "engine/src/core/component.h"
#include "engine/src/core/pipeline_items.h"

namespace rdmatel {

class OutputMerger final : public DirectDelivery {
 public:
  /// `sinks`: the stages' sinks, then the front ends'; `warnings` dedups by key for all of them.
  /// `stages` by slot: the record stages that finish when their kFinishStage output comes.
  /// Once `stop` is set, nothing more is delivered.
  OutputMerger(BatchChannel<OutBatch>& home, const std::vector<RecordSink*>& sinks, Warnings& warnings, Ctx& ctx,
               const std::atomic<bool>& stop);

  void add_stage(uint16_t slot, Component& stage);

  /// The pair-local thread's outputs so far; it will produce none before `completed_through`
  /// (exclusive of tags at or before it).
  void add_local(std::vector<OutItem>& items, StepTag completed_through);
  /// Delivers every output whose place is certain; with `to_the_end`, waits for the home thread's
  /// last outputs and delivers everything.
  void pump(bool to_the_end);
  /// A record the pair-local thread makes at `tag` (a component's slot, never the home thread's):
  /// delivered at once, uncopied, when nothing either thread made before it is still waiting and
  /// the home thread has said it makes nothing more before it. `pending`: the pair-local
  /// thread's outputs made before it, queued first.
  bool deliver_now(const Record& r, StepTag tag, std::vector<OutItem>& pending) override;

 private:
  void take_home_batches(bool wait);
  void deliver_certain();
  void deliver(OutItem& item);
  void deliver_record(const Record& r);

  BatchChannel<OutBatch>& home_channel_;
  const std::vector<RecordSink*>& sinks_;
  Warnings& warnings_;
  Ctx& ctx_;
  const std::atomic<bool>& stop_;
  std::vector<std::pair<uint16_t, Component*>> stages_;
  std::deque<OutItem> home_, local_;
  StepTag home_bound_{};       ///< the home thread's later outputs have tags at or after it
  StepTag local_completed_{};  ///< the pair-local thread has produced everything tagged at or before it
};

}  // namespace rdmatel
