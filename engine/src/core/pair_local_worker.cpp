// SPDX-License-Identifier: GPL-2.0-or-later
#include "engine/src/core/pair_local_worker.h"

namespace rdmatel {
namespace {

// Work batches queued at most (each up to the home thread's batch size): bounds what the home
// thread can run ahead, and the memory that takes.
constexpr size_t kWorkBatches = 64;
// The home thread's outputs are never waited for by their producer (see OutputMerger): the
// queue is bounded by how far the home thread runs ahead.
constexpr size_t kUnboundedBatches = size_t(1) << 40;

}  // namespace

PairLocalWorker::PairLocalWorker(const Settings& settings, const GpuMap& gpus, const Sampling& sampling,
                                 bool frame_notes, DurationNs reorder_window, DurationNs idle_point)
    : flows_(settings.count("max_flows")),
      pair_ctx_(settings, points_, flows_, roles_, clock_, local_warnings_, gpus, sampling, local_sinks_, frame_notes,
                reorder_window, idle_point),
      stage_ctx_(settings, points_, flows_, roles_, clock_, warnings_, gpus, sampling, sinks_, frame_notes,
                 reorder_window, idle_point),
      work_(kWorkBatches),
      home_out_(kUnboundedBatches),
      merger_(home_out_, sinks_, warnings_, stage_ctx_, stop_) {}

PairLocalWorker::~PairLocalWorker() { abort(); }

void PairLocalWorker::add_component(std::unique_ptr<Component> c, const ComponentSpec& spec, uint16_t slot) {
  wanted_ |= spec.packets;
  components_.push_back(Local{std::move(c), spec.packets, spec.sampled, slot});
}

void PairLocalWorker::add_stage(std::unique_ptr<Component> c, const ComponentSpec& spec, uint16_t slot) {
  stages_.push_back(std::move(c));
  merger_.add_stage(slot, *stages_.back());
  stage_sinks_.push_back(std::make_unique<StageSink>(*stages_.back(), spec.inputs, stage_ctx_));
  sinks_.push_back(stage_sinks_.back().get());
}

void PairLocalWorker::start() {
  local_sinks_.push_back(&collector_);
  collector_.deliver_directly(&merger_);
  thread_ = std::thread([this] { run(); });
}

void PairLocalWorker::join() {
  if (thread_.joinable()) thread_.join();
  if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
}

void PairLocalWorker::abort() {
  if (!thread_.joinable()) return;
  stop_ = true;
  work_.close();  // without the end batch: the thread stops at once
  home_out_.close();
  thread_.join();
}

void PairLocalWorker::run() {
  try {
    WorkBatch batch;
    while (work_.pop(batch) && !stop_) {
      const bool end = batch.end;
      handle(batch);
      merger_.add_local(collector_.items(), end ? kEndOfSteps : completed_);
      merger_.pump(end);
      if (end) return;
      batch.clear();
      work_.recycle(std::move(batch));
    }
  } catch (...) {
    // Reported by join(); the home thread must not wait for a queue nobody empties.
    error_ = std::current_exception();
    work_.abandon();
  }
}

void PairLocalWorker::handle(const WorkBatch& batch) {
  for (const WorkEvent& e : batch.events) {
    switch (e.kind) {
      case WorkEvent::Kind::kFact:
        flows_.replicate(batch.facts[e.index]);
        break;
      case WorkEvent::Kind::kDeclare: {
        const PointDeclaration& d = batch.declares[e.index];
        points_.declare(d.name, d.interface_id, d.speed_bps);
        break;
      }
      case WorkEvent::Kind::kCaptureDropped:
        if (e.index < points_.size()) points_[PointId(e.index)].capture_dropped = e.step;
        break;
      case WorkEvent::Kind::kPacket:
        cursor_ = StepTag{e.step, 0};
        pair_ctx_.packet_shown_now = e.measured >> 7 & 1;
        for (Local& l : components_)
          if ((l.mask & e.cls) && (e.measured >> size_t(l.sampled) & 1)) {
            cursor_.slot = l.slot;
            l.component->on_packet(e.packet, pair_ctx_);
          }
        pair_ctx_.packet_shown_now = false;
        completed_ = StepTag{e.step, StepTag::kAfterComponents};
        break;
      case WorkEvent::Kind::kAdvance:
        points_.set_horizon(PointId(e.index), e.horizon);
        cursor_ = StepTag{e.step, 0};
        for (Local& l : components_) {
          cursor_.slot = l.slot;
          l.component->on_advance(PointId(e.index), pair_ctx_);
        }
        completed_ = StepTag{e.step, StepTag::kAfterComponents};
        break;
      case WorkEvent::Kind::kFinish:
        for (Local& l : components_)
          if (l.slot == e.slot) {
            cursor_ = StepTag{e.step, l.slot};
            l.component->finish(pair_ctx_);
          }
        completed_ = StepTag{e.step, e.slot};
        break;
    }
  }
}

}  // namespace rdmatel
