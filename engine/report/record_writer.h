// SPDX-License-Identifier: GPL-2.0-or-later
// Record exports (SPEC §9): JSON Lines and CSV, one record per line. Each record kind has a
// fixed column list; absent values are left out of JSON and empty in CSV.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "engine/core/points.h"
#include "engine/core/records.h"

namespace rdmatel {

enum class RecordFormat { kJsonl, kCsv };

/// One cell: absent, a JSON number/literal, or a string.
struct Cell {
  enum Kind : uint8_t { kAbsent, kNumber, kString } kind = kAbsent;
  std::string text;
};

/// Writes rows of one record kind to a stdio stream (CSV gets a header line first).
class RecordWriter {
 public:
  RecordWriter(std::FILE* out, RecordFormat format, std::vector<const char*> columns);
  void write(const std::vector<Cell>& row);

 private:
  std::FILE* out_;
  RecordFormat format_;
  std::vector<const char*> columns_;
};

/// Column lists and row builders per record kind.
const std::vector<const char*>& io_columns();
std::vector<Cell> io_row(const IoRecord& r, const PointRegistry& points);
const std::vector<const char*>& message_columns();
std::vector<Cell> message_row(const MessageRecord& r, const PointRegistry& points);
const std::vector<const char*>& flow_columns();
std::vector<Cell> flow_row(const FlowPeriodRecord& r, const PointRegistry& points);

/// A writer for one record kind.
template <typename R, const std::vector<const char*>& (*Columns)(),
          std::vector<Cell> (*Row)(const R&, const PointRegistry&)>
class TypedRecordWriter {
 public:
  TypedRecordWriter(std::FILE* out, RecordFormat format, const PointRegistry& points)
      : writer_(out, format, Columns()), points_(points) {}
  void write(const R& r) { writer_.write(Row(r, points_)); }

 private:
  RecordWriter writer_;
  const PointRegistry& points_;
};
using IoRecordWriter = TypedRecordWriter<IoRecord, io_columns, io_row>;
using MessageRecordWriter = TypedRecordWriter<MessageRecord, message_columns, message_row>;
using FlowRecordWriter = TypedRecordWriter<FlowPeriodRecord, flow_columns, flow_row>;

/// JSON string escaping (quotes included).
std::string json_quote(const std::string& s);
/// CSV field quoting when needed.
std::string csv_field(const std::string& s);
/// Numbers as exported: bit/s with 3 decimals, ratios with 12 significant digits.
std::string format_rate(double bps);
std::string format_ratio(double x);

}  // namespace rdmatel
