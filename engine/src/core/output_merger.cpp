// SPDX-License-Identifier: GPL-2.0-or-later
#include "engine/src/core/output_merger.h"

namespace rdmatel {

OutputMerger::OutputMerger(BatchChannel<OutBatch>& home, const std::vector<RecordSink*>& sinks, Warnings& warnings,
                           Ctx& ctx, const std::atomic<bool>& stop)
    : home_channel_(home), sinks_(sinks), warnings_(warnings), ctx_(ctx), stop_(stop) {}

void OutputMerger::add_stage(uint16_t slot, Component& stage) { stages_.emplace_back(slot, &stage); }

void OutputMerger::add_local(std::vector<OutItem>& items, StepTag completed_through) {
  for (OutItem& i : items) local_.push_back(std::move(i));
  items.clear();
  local_completed_ = completed_through;
}

void OutputMerger::take_home_batches(bool wait) {
  OutBatch b;
  while (wait ? home_channel_.pop(b) : home_channel_.try_pop(b)) {
    for (OutItem& i : b.items) home_.push_back(std::move(i));
    home_bound_ = b.bound;
    b.items.clear();
    home_channel_.recycle(std::move(b));
  }
}

void OutputMerger::pump(bool to_the_end) {
  take_home_batches(to_the_end);
  deliver_certain();
}

void OutputMerger::deliver_certain() {
  while (!stop_) {
    std::deque<OutItem>* from = nullptr;
    if (!home_.empty() && !local_.empty()) {
      from = home_.front().tag < local_.front().tag ? &home_ : &local_;
    } else if (!home_.empty()) {
      // The pair-local thread makes nothing more at or before what it completed.
      if (home_.front().tag <= local_completed_) from = &home_;
    } else if (!local_.empty()) {
      if (local_.front().tag < home_bound_) from = &local_;
    }
    if (!from) break;
    OutItem item = std::move(from->front());
    from->pop_front();
    deliver(item);
  }
}

bool OutputMerger::deliver_now(const Record& r, StepTag tag, std::vector<OutItem>& pending) {
  // The pair-local thread is at `tag`: it has made everything before it (component slots start
  // at 1, so the tag before is in the same step).
  add_local(pending, StepTag{tag.step, uint16_t(tag.slot - 1)});
  deliver_certain();
  // The home thread's batches are taken only when what came is not enough (a lock each time).
  if (home_.empty() && !(tag < home_bound_)) pump(false);
  if (stop_ || !local_.empty()) return false;
  if (home_.empty() ? !(tag < home_bound_) : home_.front().tag < tag) return false;
  deliver_record(r);
  return true;
}

void OutputMerger::deliver_record(const Record& r) {
  for (RecordSink* s : sinks_) s->on_record(r);
}

void OutputMerger::deliver(OutItem& item) {
  switch (item.kind) {
    case OutItem::Kind::kRecord: {
      deliver_record(Record{item.schema, item.record, item.provisional});
      item.free_record();
      return;
    }
    case OutItem::Kind::kNote:
      for (RecordSink* s : sinks_) s->on_note(item.note);
      return;
    case OutItem::Kind::kWarning:
      warnings_.warn(item.key, [&] { return std::move(item.text); });
      return;
    case OutItem::Kind::kDirectWarning: {
      const Warning w{item.key, std::move(item.text)};
      for (RecordSink* s : sinks_) s->on_warning(w);
      return;
    }
    case OutItem::Kind::kFinishStage:
      for (auto& [slot, stage] : stages_)
        if (slot == item.tag.slot) stage->finish(ctx_);
      return;
  }
}

}  // namespace rdmatel
