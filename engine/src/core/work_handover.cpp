// SPDX-License-Identifier: GPL-2.0-or-later
#include "engine/src/core/work_handover.h"

namespace rdmatel {
namespace {

// Work items per batch: the lock is taken once per batch on either side.
constexpr size_t kBatchEvents = 512;

}  // namespace

WorkHandover::WorkHandover(std::unique_ptr<PairLocalWorker> worker, FlowTable& flows) : worker_(std::move(worker)) {
  flows.keep_journal(&journal_);
}

WorkHandover::~WorkHandover() { worker_->abort(); }

void WorkHandover::declared(const std::string& name, uint32_t interface_id, uint64_t speed_bps, bool added) {
  // The replica declares it too (a repeat may set the speed).
  WorkEvent& e = batch_.events.emplace_back();
  e.kind = WorkEvent::Kind::kDeclare;
  e.index = uint32_t(batch_.declares.size());
  batch_.declares.push_back(PointDeclaration{name, interface_id, speed_bps});
  if (added) {
    // Sinks on the other thread ask for names while this one may declare more.
    std::lock_guard lock(names_mutex_);
    names_.push_back(name);
  }
}

void WorkHandover::capture_dropped(PointId point, uint64_t dropped) {
  WorkEvent& e = batch_.events.emplace_back();
  e.kind = WorkEvent::Kind::kCaptureDropped;
  e.index = point;
  e.step = dropped;
}

const std::string& WorkHandover::point_name(PointId id) const {
  static const std::string unknown = "?";
  std::lock_guard lock(names_mutex_);
  return id < names_.size() ? names_[id] : unknown;
}

void WorkHandover::forward_journal() {
  for (const FlowFact& f : journal_) {
    WorkEvent& e = batch_.events.emplace_back();
    e.kind = WorkEvent::Kind::kFact;
    e.index = uint32_t(batch_.facts.size());
    batch_.facts.push_back(f);
  }
  journal_.clear();
}

void WorkHandover::end_packet_step(const Packet& p, uint32_t cls, uint8_t measured) {
  if (cls & worker_->wanted()) batch_.events.emplace_back(p, cursor_.step, cls, measured);
  end_step();
}

void WorkHandover::end_advance_step(PointId point, TimeNs horizon) {
  WorkEvent& e = batch_.events.emplace_back();
  e.kind = WorkEvent::Kind::kAdvance;
  e.step = cursor_.step;
  e.index = point;
  e.horizon = horizon;
  end_step();
}

// After a step: the pairings proposed while it ran follow it; the batch goes when full.
void WorkHandover::end_step() {
  forward_facts();
  if (batch_.events.size() >= kBatchEvents) hand_over(false);
}

void WorkHandover::finish_pair_local(uint16_t slot) {
  forward_facts();  // the pairings learned by the components that finished before it
  WorkEvent& e = batch_.events.emplace_back();
  e.kind = WorkEvent::Kind::kFinish;
  e.step = cursor_.step;
  e.slot = slot;
}

void WorkHandover::last_warning(std::string_view key, std::string text) {
  cursor_.slot = StepTag::kAfterComponents;
  collector_.add_warning(Warning{key, std::move(text)}, OutItem::Kind::kDirectWarning);
}

void WorkHandover::end() {
  forward_facts();
  hand_over(true);
  worker_->join();
}

// What this thread's components made so far goes to the merge first, then the work: when the
// other thread reads a step, this thread's outputs up to it are there.
void WorkHandover::hand_over(bool end) {
  if (!started_) {
    worker_->start();
    started_ = true;
  }
  OutBatch out = worker_->home_output().spare();
  std::swap(out.items, collector_.items());
  out.bound = end ? kEndOfSteps : cursor_;
  worker_->home_output().push(std::move(out));
  if (end) worker_->home_output().close();
  batch_.end = end;
  worker_->work().push(std::move(batch_));
  batch_ = worker_->work().spare();
}

}  // namespace rdmatel
