// SPDX-License-Identifier: GPL-2.0-or-later
// ClickHouse tables for the record schemas (SPEC §11: database rdmatel, one table per record
// kind with the columns of its records) and rows in JSONEachRow, both driven by the schemas, so a
// new record kind gets a table without code here.
//
// Written for ClickHouse 18.16 (Debian 12) and later: no DateTime64 or LowCardinality; stamps
// are Int64 ns, like the records. Every record column is Nullable (a value that was not
// measured is NULL, never 0). Two columns first: rdmatel_run (one rdmatel process) and
// rdmatel_seq (the record's number in its table for that run), the ReplacingMergeTree key, so
// a batch sent twice (a retry after a lost answer) collapses to one copy: read with FINAL.
#pragma once

#include <cstdint>
#include <set>
#include <string>

#include "rdmatel/schema.h"
#include "rdmatel/writers.h"

namespace rdmatel::clickhouse {

inline constexpr const char* kDatabase = "rdmatel";

/// CREATE TABLE IF NOT EXISTS rdmatel.<channel> (...) for one schema.
std::string create_table_sql(const RecordSchema& schema);
/// ALTER TABLE rdmatel.<channel> ADD COLUMN ... for the schema's columns not in `existing` (a
/// table an older rdmatel made), in schema order; empty when none is missing. ClickHouse 18.16
/// has no ADD COLUMN IF NOT EXISTS, so the caller reads the table's columns first.
std::string add_columns_sql(const RecordSchema& schema, const std::set<std::string>& existing);
/// The whole schema: the database, then every table, statements separated by ";\n\n".
std::string schema_sql();

/// Appends one record as a JSONEachRow line (absent values left out: NULL).
void append_row(std::string& out, const RecordSchema& schema, const void* record,
                const PointNamer& names, const std::string& run, uint64_t seq);

}  // namespace rdmatel::clickhouse
