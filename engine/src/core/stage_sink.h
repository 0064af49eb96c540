// SPDX-License-Identifier: GPL-2.0-or-later
// Hands a record stage the final records of the kinds it consumes (provisional first-pass
// snapshots are left to front ends: a stage's results are computed once, from final records).
#pragma once

#include <span>

#include "engine/src/core/component.h"

namespace rdmatel {

class StageSink final : public RecordSink {
 public:
  StageSink(Component& stage, std::span<const RecordSchema* const> inputs, Ctx& ctx)
      : stage_(stage), inputs_(inputs), ctx_(ctx) {}
  void on_record(const Record& r) override {
    if (r.provisional) return;
    for (const RecordSchema* s : inputs_)
      if (r.schema == s) return stage_.on_record(r, ctx_);
  }

 private:
  Component& stage_;
  std::span<const RecordSchema* const> inputs_;
  Ctx& ctx_;
};

}  // namespace rdmatel
