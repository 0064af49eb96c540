// SPDX-License-Identifier: GPL-2.0-or-later
// Command-line options of the rdmatel tool: the commands and output options of the CLI itself,
// and every engine and component setting, rendered from the settings table (rdmatel/settings.h).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "cli/live_options.h"
#include "rdmatel/settings.h"
#include "rdmatel/writers.h"

namespace rdmatel::cli {

enum class Command { kAnalyze, kExport, kLive, kVersion, kHelp };

struct Options {
  Command command = Command::kHelp;
  std::string export_kind;  ///< a channel: io, messages, flows, ...
  std::string help_text;    ///< kHelp: what to print
  std::vector<std::string> captures;
  RecordFormat format = RecordFormat::kJsonl;
  std::string output;  ///< empty = stdout
  std::optional<bool> progress;
  bool quiet = false;
  size_t top = 10;  ///< rows in the flows tables
  std::string by;   ///< analyze --by gpu|node|job: "" for none
  Settings settings;
  LiveOptions live;  ///< live: interfaces, outputs; --clickhouse also for analyze and export
};

/// Parses argv; on bad usage returns false with `error` set to one sentence.
bool parse_options(int argc, char** argv, Options& out, std::string& error);

/// The --help text (generated from the settings table).
std::string usage_text();

}  // namespace rdmatel::cli
