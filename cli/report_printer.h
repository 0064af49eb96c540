// SPDX-License-Identifier: GPL-2.0-or-later
// The text of `rdmatel analyze`.
#pragma once

#include <cstdio>
#include <vector>

#include "cli/options.h"
#include "rdmatel/records.h"
#include "rdmatel/report.h"
#include "rdmatel/session.h"

namespace rdmatel::cli {

/// What `analyze` aggregates from the final records.
struct Analysis {
  IoReport ios;
  FlowReport flows;
  std::vector<CongestionRecord> congestion;  ///< one per flow and point: small beside the packets
  std::vector<PfcRecord> pfc;
  std::vector<OffsetRecord> offsets;
  std::vector<DiagnosisRecord> diagnosis;  ///< one per host, storage and pair
};

void print_analysis(std::FILE* out, const Options& o, const Engine& engine, const SessionSummary& input,
                    const Analysis& analysis, const char* version);

}  // namespace rdmatel::cli
