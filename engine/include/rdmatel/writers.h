// SPDX-License-Identifier: GPL-2.0-or-later
// Record writers driven by schemas: JSON Lines and CSV, one record per line, formatted into one
// reused buffer. Absent values are left out of JSON and empty in CSV (never written as 0).
#pragma once

#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "rdmatel/schema.h"
#include "rdmatel/sink.h"

namespace rdmatel {

enum class RecordFormat { kJsonl, kCsv };

/// Names observation points for kPoint columns.
using PointNamer = std::function<const std::string&(PointId)>;

/// Appends one value as its column type renders it (numbers as numbers, text unquoted).
void append_value(std::string& out, ValueType type, const Value& v, const PointNamer& names);
/// Appends `s` as a JSON string (quotes included); bytes that are not UTF-8 become U+FFFD.
void append_json_string(std::string& out, std::string_view s);
/// Appends `s` as a CSV field (quoted when it needs to be).
void append_csv_field(std::string& out, std::string_view s);

class LineFormat;

/// Writes the final records of one schema to a stdio stream (CSV: a header line first).
class RecordWriter final : public RecordSink {
 public:
  RecordWriter(std::FILE* out, RecordFormat format, const RecordSchema& schema, PointNamer names);
  ~RecordWriter() override;
  void on_record(const Record& r) override;
  /// Writes one record of the writer's schema.
  void write(const void* record);

 private:
  size_t write_columns(const void* record);  ///< a kind without LineWriters: its columns walked

  std::FILE* out_;
  const RecordSchema& schema_;
  std::unique_ptr<LineFormat> format_;
  size_t (*line_writer_)(const void* record, LineFormat& format) = nullptr;
  /// A column's "name": (JSON), in a 32-byte slot where it fits (one fixed-size copy each).
  struct Key {
    char text[32] = {};
    size_t size = 0;
    std::string long_text;
  };
  std::vector<Key> keys_;
};

}  // namespace rdmatel
