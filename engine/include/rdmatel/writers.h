// SPDX-License-Identifier: GPL-2.0-or-later
// Record writers driven by schemas: JSON Lines and CSV, one record per line, formatted into one
// reused buffer. Absent values are left out of JSON and empty in CSV (never written as 0).
#pragma once

#include <array>
#include <cstdio>
#include <functional>
#include <optional>
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

/// Writes the final records of one schema to a stdio stream (CSV: a header line first).
class RecordWriter final : public RecordSink {
 public:
  RecordWriter(std::FILE* out, RecordFormat format, const RecordSchema& schema, PointNamer names);
  void on_record(const Record& r) override;
  /// Writes one record of the writer's schema.
  void write(const void* record);

 private:
  const std::string& point_text(PointId point);

  std::FILE* out_;
  RecordFormat format_;
  const RecordSchema& schema_;
  PointNamer names_;
  std::string line_, cell_;  ///< kept between records: no allocation per record
  /// A column's "name": (JSON), in a 32-byte slot where it fits (one fixed-size copy each).
  struct Key {
    char text[32] = {};
    size_t size = 0;
    std::string long_text;
  };
  std::vector<Key> keys_;
  /// An address and its text (at most 39 characters), in a 32-byte-copyable slot of 48.
  struct AddressText {
    IpAddress address;
    uint8_t size = 0;
    char text[48] = {};
  };
  const AddressText& address_text(const IpAddress& a);
  std::array<AddressText, 64> addresses_{};
  static constexpr PointId kCachedPoints = 1 << 16;
  std::vector<std::optional<std::string>> point_texts_;  ///< by point: its name as written
  std::string uncached_;
};

}  // namespace rdmatel
