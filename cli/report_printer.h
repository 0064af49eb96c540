// SPDX-License-Identifier: GPL-2.0-or-later
// The text of `rdmatel analyze`.
#pragma once

#include <cstdio>

#include "cli/capture_input.h"
#include "cli/options.h"
#include "engine/core/engine.h"
#include "engine/report/flow_report.h"
#include "engine/report/io_report.h"

namespace rdmatel::cli {

void print_analysis(std::FILE* out, const Options& o, const Engine& engine, const InputSummary& input,
                    const IoReport& report, const FlowReport& flows, const char* version);

}  // namespace rdmatel::cli
