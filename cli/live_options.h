// SPDX-License-Identifier: GPL-2.0-or-later
// Options of `rdmatel live` and the database/metrics outputs shared with analyze and export.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace rdmatel::cli {

struct LiveOptions {
  std::vector<std::string> interfaces;  ///< -i: live interfaces (libpcap), one point each
  std::string records = "io";           ///< --records: the channel written as records, or "none"
  std::string filter;                   ///< --filter: BPF filter for live interfaces
  uint32_t snaplen = 262144;            ///< --snaplen
  std::string prometheus;               ///< --prometheus ADDR:PORT ("" = off)
  uint64_t prometheus_max_series = 10000;
  std::string clickhouse;             ///< --clickhouse URL ("" = off)
  uint64_t clickhouse_batch = 10000;  ///< rows per INSERT
  double clickhouse_timeout_s = 30;   ///< how long the end waits for the server to take the rest
};

/// Parses one option of live / the outputs at args[i] (i already past it on success). Returns
/// 1 when it was one (value taken), 0 when it is not such an option, -1 with `error` set.
int parse_live_option(const std::vector<std::string>& args, size_t& i, const std::string& opt,
                      bool live, LiveOptions& o, std::string& error);

/// Lines of --help for these options.
std::string live_usage_text();

}  // namespace rdmatel::cli
