// SPDX-License-Identifier: GPL-2.0-or-later
// The tables of `rdmatel analyze`, laid out from the engine's aggregation (rdmatel/report.h).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "rdmatel/engine.h"
#include "rdmatel/records.h"
#include "rdmatel/report.h"

namespace rdmatel::cli {

/// The three per-group tables (host, storage, pair), µs with 3 decimals.
/// Rows of each I/O table shown at least (more with --top): the slowest beyond.
inline constexpr size_t kIoTableRows = 50;
/// Observation points named on analyze's points line (or --top N, if more); the rest summed up.
inline constexpr size_t kPointsListed = 50;
std::string render_io_tables(const IoReport& report, size_t top);
/// "Flows" section: top `n` by bytes, worst `n` by FET and by FNR.
std::string render_flow_tables(const FlowReport& report, const Engine& engine, size_t n);
/// "Congestion" section: ECN totals, the `n` flows with the highest CE ratio, PFC per point and
/// priority.
/// "Clock offsets" section: each pair of points seen together.
/// analyze --by gpu|node|job: I/O latency and messages per GPU (pair), node (pair) or AI job, worst first.
std::string render_by_dimension(const DimensionReport& report, const Engine& engine, size_t top);
/// The alerts section: counts per rule, then the first alerts.
std::string render_alerts(const std::map<std::string, uint64_t>& per_rule, const std::vector<AlertRecord>& first,
                          const Engine& engine, size_t top);
/// The answer first: who is to blame, and where the time goes per host and storage server.
std::string render_diagnosis(const std::vector<DiagnosisRecord>& records, size_t top);
/// The answer for RDMA message flows (flow_diagnosis_table.cpp): the `top` flows that lose
/// packets, are congested or paused, with the evidence on their path; empty without flows.
std::string render_flow_diagnosis(const FlowReport& flows, const std::vector<EcnRecord>& congestion,
                                  const std::vector<PfcRecord>& pfc, const std::vector<PathRecord>& hops,
                                  const Engine& engine, size_t top);
/// "Hops" section: the `n` slowest hops by average delay and the `n` lossiest; empty with a single
/// observation point (no hop).
/// The Hops section; `offsets` (export offsets' records) tell which raw delays cross clocks that differ.
/// The links that lose packets clearly (1 % and 20 packets at least), named before the tables.
std::string render_lossy_links(const std::vector<PathRecord>& hops, const Engine& engine, size_t n);
std::string render_hops(const std::vector<PathRecord>& hops, const std::vector<OffsetRecord>& offsets,
                        const Engine& engine, size_t n);
std::string render_offsets(const std::vector<OffsetRecord>& offsets, const Engine& engine, size_t top);
std::string render_congestion(const std::vector<EcnRecord>& flows, const std::vector<PfcRecord>& pfc,
                              const Engine& engine, size_t n);

}  // namespace rdmatel::cli
