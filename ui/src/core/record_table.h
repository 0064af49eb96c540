// SPDX-License-Identifier: GPL-2.0-or-later
// Records of any kind, rendered cell by cell from their schema while the engine delivers them
// (the record's struct lives only during the callback). The analyzer shows congestion, PFC, clock
// offsets, and whatever kind a newer engine emits (diagnosis, alerts), without code of its own.
#pragma once

#include <limits>
#include <string>
#include <vector>

#include "rdmatel/schema.h"
#include "rdmatel/writers.h"

namespace rdmatel::ui {

struct RecordCell {
  bool present = false;  ///< false: the record does not carry the value (shown empty, never 0)
  std::string text;      ///< as the CLI's writers render it (and CSV exports)
  /// What the table shows when it differs from `text`: QPNs in hex, as Wireshark writes them.
  std::string display;
  double number = std::numeric_limits<double>::quiet_NaN();  ///< for sorting; NaN for text
};

struct RecordTable {
  const RecordSchema* schema = nullptr;
  std::vector<std::vector<RecordCell>> rows;
};

/// Renders one record of `schema` (every column, in schema order).
std::vector<RecordCell> render_record(const RecordSchema& schema, const void* record,
                                      const PointNamer& names);

/// A column name as a table header: "fct_us" -> "fct (µs)", "fet_bps" -> "fet (bit/s)".
std::string column_header(const char* name);

}  // namespace rdmatel::ui
