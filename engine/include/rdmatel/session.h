// SPDX-License-Identifier: GPL-2.0-or-later
// A Session: the engine over a set of inputs, as every front end needs it (CLI, analyzer, live
// mode). It opens the inputs, names their interfaces as observation points, merges them by
// timestamp as mergecap does, feeds the engine, reports progress and can be cancelled.
//
// Points across files (SPEC §3): interfaces with the same name and link type are the same point
// (dumpcap ring buffers, split files). Unnamed interfaces (classic pcap, pcapng without if_name)
// of different files are one point when the files follow each other in time and two points when
// their packets interleave (two sniffers). The same packets given twice are counted once, with
// a warning (the engine drops exact duplicates at a point).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "rdmatel/capture.h"
#include "rdmatel/engine.h"

namespace rdmatel {

/// Progress of a run, reported about every 100 ms.
struct Progress {
  uint64_t frames = 0;
  uint64_t bytes = 0;        ///< read so far, over all inputs
  uint64_t total_bytes = 0;  ///< 0 when unknown (pipes, compressed files)
  double seconds = 0;        ///< wall time since the run started
};
using ProgressFn = std::function<void(const Progress&)>;

/// Set from any thread to stop a run at the next packet batch.
class CancelToken {
 public:
  void cancel() { flag_.store(true, std::memory_order_relaxed); }
  bool cancelled() const { return flag_.load(std::memory_order_relaxed); }

 private:
  std::atomic<bool> flag_{false};
};

struct SessionSummary {
  std::vector<std::string> formats;  ///< per input: "pcapng", "pcap (ns)", ...
  uint64_t frames = 0;
  TimeNs first_ts = 0, last_ts = 0;
  std::vector<std::string> warnings;  ///< about the inputs (unsupported link types, naming)
  std::vector<std::string> errors;    ///< read errors, each after what could be read
  bool cancelled = false;
};

/// One input: a label for messages and the source it reads.
struct SessionInput {
  std::string label;  ///< the path as given ("-" for standard input)
  std::unique_ptr<CaptureSource> source;
};

class Session {
 public:
  /// Opens capture files ("-" is standard input): the fast reader for pcap/pcapng files,
  /// `fallback` (may be null) for anything else. nullptr with one sentence in `error` when an
  /// input cannot be opened.
  static std::unique_ptr<Session> open(const std::vector<std::string>& paths, const Settings& settings,
                                       CaptureOpener fallback, std::string& error);
  /// A session over sources the front end opened itself (live interfaces, tests).
  Session(std::vector<SessionInput> inputs, const Settings& settings);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  void subscribe(RecordSink& sink);

  /// Mistakes only the user can fix, found once the inputs' interfaces are known (a --point
  /// that names no observation point). One sentence each; empty when there are none. The
  /// unnamed interfaces of several files (pcap files) become points at their first packets:
  /// then a --point is checked at the end of run(), which reports one naming none among its errors.
  std::vector<std::string> usage_errors() const;

  /// Reads every input to its end (or until cancelled), then finishes the engine.
  SessionSummary run(const ProgressFn& progress = {}, const CancelToken* cancel = nullptr);

  Engine& engine();
  const Engine& engine() const;

  class Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace rdmatel
