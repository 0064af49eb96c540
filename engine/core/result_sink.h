// SPDX-License-Identifier: GPL-2.0-or-later
// Where the engine delivers its results. Front ends implement what they need.
#pragma once

#include <string>

#include "engine/core/frame_note.h"
#include "engine/core/records.h"

namespace rdmatel {

/// Things that went wrong or limits that were reached, reported once per kind.
struct EngineWarning {
  std::string what;
};

class ResultSink {
 public:
  virtual ~ResultSink() = default;
  /// Per-frame notes; only delivered when EngineConfig::frame_notes is set.
  virtual void on_frame_note(const FrameNote&) {}
  /// An I/O record. Provisional records (first-pass snapshots) only reach sinks that want frame
  /// notes; every I/O ends with exactly one final record.
  virtual void on_io(const IoRecord&) {}
  /// An RDMA message at one point; provisional snapshots as for I/Os.
  virtual void on_message(const MessageRecord&) {}
  /// Counters of one flow at one point over one period.
  virtual void on_flow_period(const FlowPeriodRecord&) {}
  virtual void on_warning(const EngineWarning&) {}
};

}  // namespace rdmatel
