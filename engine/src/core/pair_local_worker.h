// SPDX-License-Identifier: GPL-2.0-or-later
// The engine's second thread (threads > 1). The home thread reads, decodes, orders packets per
// point and runs the components that share facts across IP pairs (io_quality learns roles and
// pairs queues, paths the clocks); this thread runs the pair-local components (ComponentSpec::
// pair_local: messages, congestion) and everything after them: the merge of both threads'
// outputs, the record stages (alerts, diagnosis) and the front ends' sinks (writers, reports).
//
// Why the results are those of one thread, byte for byte:
//  - a pair-local component reads only facts the home thread hands over in their one-thread
//    place: a flow created or paired before the packet it was learned from is handled, a pairing
//    proposed while a packet was handled after it; a point's horizon with the step that moved it;
//  - it gets the same packets (the home thread decided key flows and polling) and steps in the
//    same order, so its state evolves as on one thread;
//  - everything either thread produces is tagged with its step and slot, and the merge delivers
//    in tag order (core/output_merger.h).
// The home thread never waits for this one except when its work queue is full: it runs ahead,
// and this thread follows.
#pragma once

#include <atomic>
#include <exception>
#include <memory>
#include <thread>
#include <vector>

#include "rdmatel/batch_channel.h"
#include "engine/src/core/component.h"
#include "engine/src/core/output_merger.h"
#include "engine/src/core/pipeline_items.h"
#include "engine/src/core/stage_sink.h"

namespace rdmatel {

class PairLocalWorker {
 public:
  PairLocalWorker(const Settings& settings, const GpuMap& gpus, const Sampling& sampling, bool frame_notes,
                  DurationNs reorder_window, DurationNs idle_point);
  ~PairLocalWorker();
  PairLocalWorker(const PairLocalWorker&) = delete;
  PairLocalWorker& operator=(const PairLocalWorker&) = delete;

  /// The context pair-local components are made with and run in (replicas of the facts).
  Ctx& pair_ctx() { return pair_ctx_; }
  /// The context record stages are made with and run in.
  Ctx& stage_ctx() { return stage_ctx_; }
  void add_component(std::unique_ptr<Component> c, const ComponentSpec& spec, uint16_t slot);
  void add_stage(std::unique_ptr<Component> c, const ComponentSpec& spec, uint16_t slot);
  /// A front end's sink: it hears everything on this thread, after the stages.
  void subscribe(RecordSink& sink) { sinks_.push_back(&sink); }
  /// The packet classes the pair-local components ask for.
  uint32_t wanted() const { return wanted_; }

  /// Starts the thread (once every component and sink is in).
  void start();
  BatchChannel<WorkBatch>& work() { return work_; }
  BatchChannel<OutBatch>& home_output() { return home_out_; }
  /// Waits for the thread, which ends after the batch marked `end`; rethrows what it threw.
  void join();
  /// Stops the thread without delivering more (the engine is destroyed unfinished).
  void abort();

 private:
  void run();
  void handle(const WorkBatch& batch);

  // Replicas of the facts pair-local components read, and what they need of the rest of Ctx.
  PointTable points_;
  FlowTable flows_;
  Roles roles_;            // not read by pair-local components
  ClockRelations clock_;   // not read by pair-local components
  StepTag cursor_, completed_;
  OutputCollector collector_{cursor_};
  std::vector<RecordSink*> local_sinks_;  ///< the collector, once started (none while components are made)
  Warnings local_warnings_{local_sinks_};
  Ctx pair_ctx_;

  std::vector<RecordSink*> sinks_;  ///< the stages' sinks, then the front ends'
  Warnings warnings_{sinks_};
  Ctx stage_ctx_;

  struct Local {
    std::unique_ptr<Component> component;
    uint32_t mask;
    Sampled sampled;
    uint16_t slot;
  };
  std::vector<Local> components_;
  uint32_t wanted_ = 0;
  std::vector<std::unique_ptr<Component>> stages_;
  std::vector<std::unique_ptr<StageSink>> stage_sinks_;

  BatchChannel<WorkBatch> work_;
  BatchChannel<OutBatch> home_out_;
  std::atomic<bool> stop_{false};  ///< abort(): deliver nothing more (the sinks may be gone)
  OutputMerger merger_;
  std::thread thread_;
  std::exception_ptr error_;
};

}  // namespace rdmatel
