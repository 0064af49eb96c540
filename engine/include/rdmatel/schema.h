// SPDX-License-Identifier: GPL-2.0-or-later
// Record schemas: what a record kind carries, column by column, so that generic writers (JSONL,
// CSV, ClickHouse), tables and Wireshark fields can be driven by them without knowing the kind.
// Every metric component declares the schemas of the records it emits.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "rdmatel/types.h"

namespace rdmatel {

/// How a column's value is typed and rendered.
enum class ValueType : uint8_t {
  kBool,      ///< true / false
  kUnsigned,  ///< uint64
  kSigned,    ///< int64 (stamps in ns)
  kMicros,    ///< a duration held in ns, rendered as µs with exactly three decimals
  kRate,      ///< a double rendered with three decimals (bit/s)
  kRatio,     ///< a double rendered with 12 significant digits
  kString,
  kAddress,   ///< an IP address, rendered as text
  kPoint,     ///< an observation point id, rendered as the point's name
};

/// One column's value. Which member is set follows the column's ValueType.
struct Value {
  bool b = false;
  uint64_t u = 0;
  int64_t i = 0;
  double d = 0;
  std::string_view s;
  const IpAddress* ip = nullptr;
  PointId point = kNoPoint;
};

/// For column getters: a name that may be absent (null).
inline bool name_or_absent(const char* s, Value& v) {
  if (!s) return false;
  v.s = s;
  return true;
}

struct Column {
  const char* name;  ///< JSONL key and CSV header, e.g. "dal_us"
  ValueType type;
  /// Reads the column from a record of the schema's kind; false when the value is absent
  /// (left out of JSON, empty in CSV, NULL in a database — never 0).
  bool (*get)(const void* record, Value& out);
  const char* help = "";  ///< one sentence, with the unit
};

/// How a record of a kind is copied and freed, for an engine that hands records from the thread
/// that made them to the one that delivers them (Settings threads > 1).
struct RecordCopy {
  void* (*clone)(const void* record) = nullptr;
  void (*destroy)(void* copy) = nullptr;
};
/// The RecordCopy of a kind whose records are one struct T, copied as a value.
template <typename T>
constexpr RecordCopy copy_as() {
  return {[](const void* r) -> void* { return new T(*static_cast<const T*>(r)); },
          [](void* c) { delete static_cast<T*>(c); }};
}

class LineFormat;
/// One record's line (JSON Lines, CSV) written by code made for a kind's columns at compile time
/// (engine/src/output/column_line_writer.h) into format's buffer; returns its length. Null: the
/// writer walks the columns (the same characters, slower).
struct LineWriters {
  size_t (*jsonl)(const void* record, LineFormat& format) = nullptr;
  size_t (*csv)(const void* record, LineFormat& format) = nullptr;
};

struct RecordSchema {
  const char* channel;  ///< "io", "messages", "flows", ...
  const char* help;     ///< what one record is
  std::span<const Column> columns;
  /// Needed by kinds that components on another thread than the delivering one emit.
  RecordCopy copy = {};
  LineWriters lines = {};
};

/// A record as delivered to sinks: its schema and a pointer to the kind's struct (valid during
/// the callback only).
struct Record {
  const RecordSchema* schema = nullptr;
  const void* data = nullptr;
  /// A first-pass snapshot (front ends with frame notes only); the final record follows.
  bool provisional = false;

  template <typename T>
  const T& as() const {
    return *static_cast<const T*>(data);
  }
  bool is(const RecordSchema& s) const { return schema == &s; }
};

/// The schemas of the built-in record kinds.
extern const RecordSchema kIoSchema;        ///< channel "io": one per NVMe I/O
extern const RecordSchema kIoPointSchema;   ///< channel "io_points": one per I/O and point (--point-local)
extern const RecordSchema kMessageSchema;   ///< channel "messages": one per RDMA message and point
extern const RecordSchema kFlowSchema;      ///< channel "flows": per flow, point and period
/// channel "congestion": per point and kind (ecn per flow, cnp per IP pair, pfc per priority);
/// the record is a CongestionHead of an EcnRecord, CnpRecord or PfcRecord.
extern const RecordSchema kCongestionSchema;
extern const RecordSchema kPathSchema;        ///< channel "paths": per flow and hop (point A -> B)
extern const RecordSchema kOffsetSchema;      ///< channel "offsets": per pair of points seen together
extern const RecordSchema kAlertSchema;       ///< channel "alerts": per threshold crossing or spike
extern const RecordSchema kDiagnosisSchema;   ///< channel "diagnosis": per host, storage, pair and job

/// Every schema the engine's components can emit (for `export KIND`, database tables).
std::span<const RecordSchema* const> all_schemas();
/// The schema of a channel, or nullptr.
const RecordSchema* find_schema(std::string_view channel);

}  // namespace rdmatel
