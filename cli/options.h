// SPDX-License-Identifier: GPL-2.0-or-later
// Command-line options of the rdmatel tool.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "engine/core/config.h"
#include "engine/report/record_writer.h"

namespace rdmatel::cli {

enum class Command { kAnalyze, kExport, kVersion, kHelp };

struct Options {
  Command command = Command::kHelp;
  std::string export_kind;  ///< io, messages, flows, paths, congestion, alerts
  std::vector<std::string> captures;
  RecordFormat format = RecordFormat::kJsonl;
  std::string output;  ///< empty = stdout
  std::optional<bool> progress;
  bool quiet = false;
  size_t top = 10;  ///< rows in the flows tables
  EngineConfig engine;
};

/// Parses argv; on bad usage returns false with `error` set to one sentence.
bool parse_options(int argc, char** argv, Options& out, std::string& error);

/// The --help text.
const char* usage_text();

}  // namespace rdmatel::cli
