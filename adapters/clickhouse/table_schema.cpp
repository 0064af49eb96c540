// SPDX-License-Identifier: GPL-2.0-or-later
#include "adapters/clickhouse/table_schema.h"

namespace rdmatel::clickhouse {
namespace {

const char* column_type(ValueType t) {
  switch (t) {
    case ValueType::kBool:
      return "Nullable(UInt8)";
    case ValueType::kUnsigned:
      return "Nullable(UInt64)";
    case ValueType::kSigned:
      return "Nullable(Int64)";
    case ValueType::kMicros:
    case ValueType::kRate:
    case ValueType::kRatio:
      return "Nullable(Float64)";
    case ValueType::kString:
    case ValueType::kAddress:
    case ValueType::kPoint:
      return "Nullable(String)";
  }
  return "Nullable(String)";
}

bool is_text(ValueType t) {
  return t == ValueType::kString || t == ValueType::kAddress || t == ValueType::kPoint;
}

}  // namespace

std::string create_table_sql(const RecordSchema& s) {
  std::string out =
      std::string("CREATE TABLE IF NOT EXISTS ") + kDatabase + "." + s.channel + "\n(\n";
  out += "    rdmatel_run String,\n    rdmatel_seq UInt64";
  for (const Column& c : s.columns)
    out += std::string(",\n    `") + c.name + "` " + column_type(c.type);
  out += "\n)\nENGINE = ReplacingMergeTree()\nORDER BY (rdmatel_run, rdmatel_seq)";
  return out;
}

std::string add_columns_sql(const RecordSchema& s, const std::set<std::string>& existing) {
  std::string out;
  for (const Column& c : s.columns) {
    if (existing.count(c.name)) continue;
    out += out.empty() ? std::string("ALTER TABLE ") + kDatabase + "." + s.channel + " ADD COLUMN `" : ", ADD COLUMN `";
    out += std::string(c.name) + "` " + column_type(c.type);
  }
  return out;
}

std::string schema_sql() {
  std::string out =
      "-- SPDX-License-Identifier: GPL-2.0-or-later\n"
      "-- The ClickHouse tables of rdmatel (printed by rdmatel clickhouse-schema; --clickhouse "
      "creates\n"
      "-- them when missing). One table per record kind, the columns of its records (rdmatel "
      "export\n"
      "-- KIND --help); read with FINAL to collapse batches a retry sent twice.\n";
  out += std::string("CREATE DATABASE IF NOT EXISTS ") + kDatabase;
  for (const RecordSchema* s : all_schemas()) out += ";\n\n" + create_table_sql(*s);
  return out + ";\n";
}

void append_row(std::string& out, const RecordSchema& s, const void* record,
                const PointNamer& names, const std::string& run, uint64_t seq) {
  out += "{\"rdmatel_run\":";
  append_json_string(out, run);
  out += ",\"rdmatel_seq\":" + std::to_string(seq);
  std::string text;
  for (const Column& c : s.columns) {
    Value v;
    if (!c.get(record, v)) continue;
    out += ",\"";
    out += c.name;
    out += "\":";
    if (c.type == ValueType::kBool) {
      out += v.b ? '1' : '0';  // UInt8: older servers take no JSON true/false
    } else if (is_text(c.type)) {
      text.clear();
      append_value(text, c.type, v, names);
      append_json_string(out, text);
    } else {
      append_value(out, c.type, v, names);
    }
  }
  out += "}\n";
}

}  // namespace rdmatel::clickhouse
