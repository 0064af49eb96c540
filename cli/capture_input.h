// SPDX-License-Identifier: GPL-2.0-or-later
// Reads one or several capture files and feeds their packets to the engine. Several files are
// merged by timestamp as mergecap does (so frame numbers match a mergecap'd file); each file's
// interfaces become observation points.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "engine/capture/capture_source.h"
#include "engine/core/engine.h"

namespace rdmatel::cli {

struct InputSummary {
  uint64_t frames = 0;
  TimeNs first_ts = 0, last_ts = 0;
  std::vector<std::string> formats;
  std::vector<std::string> errors;    ///< read errors (the file was cut or corrupt)
  std::vector<std::string> warnings;  ///< things the user should know (unsupported link types)
};

class CaptureInput {
 public:
  /// Opens every file; on failure returns false with `error` set (nothing has been read).
  bool open(const std::vector<std::string>& paths, std::string& error);

  /// Feeds every packet to `engine` in merged order. `progress` shows a status line on stderr.
  InputSummary run(Engine& engine, bool progress);

 private:
  struct File {
    std::string path;
    std::string label;  ///< prefix for interface names that collide with another file's
    std::unique_ptr<CaptureSource> src;
    std::vector<PointId> points;  ///< per interface
    CapturedPacket next;
    bool has_next = false;
  };
  void declare_interfaces(Engine& engine, File& f, InputSummary& sum);

  std::vector<File> files_;
  std::vector<std::pair<const File*, std::string>> names_;  ///< point names already taken, by file
};

}  // namespace rdmatel::cli
