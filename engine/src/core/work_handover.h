// SPDX-License-Identifier: GPL-2.0-or-later
// The home thread's side of threads > 1 (the other side: core/pair_local_worker.h). The engine
// tells it where it is (each step, and the component slot within it) and what the pair-local
// components must know (the packets they ask for, horizons, the end, points declared, the flow
// table's changes); it tags what the home components produce with that place, gathers the work
// in batches and hands both over.
#pragma once

#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "engine/src/core/pair_local_worker.h"

namespace rdmatel {

class WorkHandover {
 public:
  /// Keeps `flows`' journal: its changes are handed over in their place.
  WorkHandover(std::unique_ptr<PairLocalWorker> worker, FlowTable& flows);
  ~WorkHandover();
  WorkHandover(const WorkHandover&) = delete;
  WorkHandover& operator=(const WorkHandover&) = delete;

  PairLocalWorker& worker() { return *worker_; }
  /// The sink of the home components (and the core's warnings): their outputs go to the merge.
  RecordSink& collector() { return collector_; }

  /// A point declared (`added`: new), for the replica and for point_name().
  void declared(const std::string& name, uint32_t interface_id, uint64_t speed_bps, bool added);
  /// The replica learns what a point's capture dropped (the record stages' evidence).
  void capture_dropped(PointId point, uint64_t dropped);
  /// A point's name, from any thread.
  const std::string& point_name(PointId id) const;

  void begin_step() { cursor_ = StepTag{cursor_.step + 1, 0}; }
  void slot(uint16_t s) { cursor_.slot = s; }
  /// The flow table's changes so far, before what comes next (called twice a packet: inline
  /// while there are none, which is nearly always).
  void forward_facts() {
    if (!journal_.empty()) forward_journal();
  }
  /// The step of the packet `p` of class `cls` ends; the pair-local components get it when they
  /// ask for its class. `measured`: bit s set when Sampled(s) components measure it.
  void end_packet_step(const Packet& p, uint32_t cls, uint8_t measured);
  /// The step of point `point`'s horizon moving to `horizon` ends.
  void end_advance_step(PointId point, TimeNs horizon);

  /// The end, in registry order: a pair-local component's or a record stage's finish at `slot`.
  void finish_pair_local(uint16_t slot);
  void finish_stage(uint16_t slot) { collector_.add_finish_stage(slot); }
  /// After every finish: delivered as it is, after everything else.
  void last_warning(std::string_view key, std::string text);
  /// Hands the end over and waits for the other thread (rethrows what it threw).
  void end();

 private:
  void forward_journal();
  void end_step();
  void hand_over(bool end);

  std::unique_ptr<PairLocalWorker> worker_;
  StepTag cursor_;  ///< the step and slot this thread is at (tags its outputs)
  OutputCollector collector_{cursor_};
  std::vector<FlowFact> journal_;  ///< flow facts not handed over yet
  WorkBatch batch_;                ///< work being gathered
  bool started_ = false;
  std::deque<std::string> names_;  ///< point names (a deque: references stay valid as it grows)
  mutable std::mutex names_mutex_;
};

}  // namespace rdmatel
