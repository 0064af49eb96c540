// SPDX-License-Identifier: GPL-2.0-or-later
// The text of `rdmatel analyze`.
#pragma once

#include <cstdio>
#include <map>
#include <optional>
#include <string>
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
  std::vector<EcnRecord> congestion;  ///< one per flow and point: small beside the packets
  std::vector<PfcRecord> pfc;
  std::vector<OffsetRecord> offsets;
  std::vector<PathRecord> paths;  ///< one per flow and hop
  std::vector<DiagnosisRecord> diagnosis;  ///< one per host, storage and pair
  std::optional<DimensionReport> by;       ///< analyze --by gpu|node|job
  /// Alerts: counted per rule; the first ones kept for the report (bounded).
  struct Alerts {
    static constexpr size_t kKept = 1000;
    std::map<std::string, uint64_t> per_rule;  ///< rule text (spikes: their scope kind) -> count
    std::vector<AlertRecord> first;
    void add(const AlertRecord& a);
  } alerts;
};

void print_analysis(std::FILE* out, const Options& o, const Engine& engine, const SessionSummary& input,
                    const Analysis& analysis, const char* version);

}  // namespace rdmatel::cli
