// SPDX-License-Identifier: GPL-2.0-or-later
// One analysis: a Session run over the captures and everything the engine produced, kept for
// the views (final records, the engine's aggregates, the frames of each I/O). Plain C++: built
// in the worker thread, then only read by the GUI thread.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/record_table.h"
#include "rdmatel/engine.h"
#include "rdmatel/flow_diagnosis.h"
#include "rdmatel/records.h"
#include "rdmatel/report.h"
#include "rdmatel/session.h"
#include "rdmatel/settings.h"

namespace rdmatel::ui {

/// Settings as the user changed them: (name, text) in the order given, applied over the
/// engine's defaults for every run (the settings dialog edits this list).
struct SettingOverrides {
  std::vector<std::pair<std::string, std::string>> values;

  /// The analyzer's own defaults: 10 ms flow periods, so that the sub-second captures people
  /// take draw a throughput curve (the CLI's 1 s gives one point).
  static SettingOverrides analyzer_defaults();
  /// The text of a setting: the override, else the engine's default.
  std::string text(const std::string& name) const;
  void set(const std::string& name, const std::string& text);
  /// Builds the engine's Settings; false with the engine's sentence in `error`.
  bool apply(Settings& out, std::string& error) const;
};

/// A frame of an I/O, from the engine's frame notes.
struct IoFrame {
  uint64_t frame = 0;
  std::string stage;  ///< "command", "data", "read_request", "read_response", "completion"
  bool copy = false;  ///< a repeated copy (retransmission) of that stage's packet
};

struct Analysis {
  std::vector<std::string> paths;
  SessionSummary summary;
  EngineStats stats;
  std::vector<PointInfo> points;
  std::vector<IoRecord> ios;  ///< final records, in the order the engine finished them
  std::unordered_map<uint64_t, std::vector<IoFrame>> io_frames;  ///< by I/O id, in frame order
  std::vector<MessageRecord> messages;
  std::vector<FlowPeriodRecord> flow_periods;
  std::vector<EcnRecord> congestion;  ///< per flow and point (also in tables["congestion:ecn"])
  std::vector<DiagnosisRecord> diagnosis;    ///< per host, storage, pair and job (also in tables)
  IoReport io_report;  ///< the engine's aggregation, as `rdmatel analyze` prints it
  FlowReport flow_report;
  std::vector<PfcRecord> pfc;       ///< per point and priority
  std::vector<PathRecord> hops;     ///< per flow and hop
  /// The message flows that lose packets, are marked or paused (rdmatel/flow_diagnosis.h),
  /// worked out at the end of the load while the engine still knows the queue pairs.
  std::vector<FlowFinding> flow_findings;
  /// Every other record kind by channel ("congestion:ecn", "congestion:cnp", "congestion:pfc"
  /// (the channel's three kinds), "offsets", and "diagnosis" or "alerts" when the engine has
  /// them), rendered from its schema.
  std::map<std::string, RecordTable> tables;
  std::vector<std::string> warnings;  ///< the engine's and the session's, once each
  double load_seconds = 0;

  std::string point_name(PointId id) const;
  const IoRecord* io(uint64_t id) const;
  /// Capture length in seconds (first to last stamp over all points).
  double span_seconds() const;

 private:
  friend class AnalysisSink;
  std::unordered_map<uint64_t, size_t> io_index_;
};

/// Runs a session over `paths`. Returns nullptr with the CLI's sentence in `error` when an input
/// cannot be opened or a setting names no point; otherwise the analysis (read errors and
/// cancellation are in its summary).
std::unique_ptr<Analysis> run_analysis(const std::vector<std::string>& paths,
                                       const SettingOverrides& settings, const ProgressFn& progress,
                                       const CancelToken* cancel, std::string& error);

/// The opener for formats the fast reader does not read (libwiretap), or nullptr in builds without
/// it.
CaptureOpener fallback_opener();

}  // namespace rdmatel::ui
