// SPDX-License-Identifier: GPL-2.0-or-later
// Record exports (SPEC §9): JSON Lines and CSV, one record per line.
#pragma once

#include <cstdio>
#include <string>

#include "engine/core/points.h"
#include "engine/core/records.h"

namespace rdmatel {

enum class RecordFormat { kJsonl, kCsv };

/// Writes I/O records to a stdio stream (CSV gets a header line first).
class IoRecordWriter {
 public:
  IoRecordWriter(std::FILE* out, RecordFormat format, const PointRegistry& points);
  void write(const IoRecord& r);

 private:
  std::FILE* out_;
  RecordFormat format_;
  const PointRegistry& points_;
};

/// JSON string escaping (quotes included).
std::string json_quote(const std::string& s);
/// CSV field quoting when needed.
std::string csv_field(const std::string& s);

}  // namespace rdmatel
