// SPDX-License-Identifier: GPL-2.0-or-later
// The text of `rdmatel analyze`.
#pragma once

#include <cstdio>

#include "cli/options.h"
#include "rdmatel/report.h"
#include "rdmatel/session.h"

namespace rdmatel::cli {

void print_analysis(std::FILE* out, const Options& o, const Engine& engine, const SessionSummary& input,
                    const IoReport& report, const FlowReport& flows, const char* version);

}  // namespace rdmatel::cli
