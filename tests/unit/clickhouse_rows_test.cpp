// SPDX-License-Identifier: GPL-2.0-or-later
// ClickHouse rows and tables from a record schema, worked out by hand: JSONEachRow with the run
// and sequence first, booleans as 0/1 (UInt8), text escaped, absent values left out (NULL).
#include <gtest/gtest.h>

#include <string>

#include "adapters/clickhouse/table_schema.h"

using namespace rdmatel;

namespace {

struct Rec {
  bool flag;
  uint64_t n;
  bool has_n;
  const char* text;
};
const Rec& rec(const void* p) { return *static_cast<const Rec*>(p); }

const Column kColumns[] = {
    {"flag", ValueType::kBool, [](const void* p, Value& v) { v.b = rec(p).flag; return true; }, ""},
    {"n", ValueType::kUnsigned,
     [](const void* p, Value& v) {
       v.u = rec(p).n;
       return rec(p).has_n;
     },
     ""},
    {"text", ValueType::kString, [](const void* p, Value& v) { v.s = rec(p).text; return true; }, ""},
    {"iol_us", ValueType::kMicros, [](const void*, Value& v) { v.i = 12345; return true; }, ""},
};
const RecordSchema kTest = {"test", "a test record", kColumns};
const std::string kNoName = "?";
PointNamer names = [](PointId) -> const std::string& { return kNoName; };

}  // namespace

TEST(ClickHouseRows, JsonEachRowByHand) {
  std::string out;
  Rec r{true, 7, true, "a\"b\\c"};
  clickhouse::append_row(out, kTest, &r, names, "run-1", 41);
  EXPECT_EQ(out, "{\"rdmatel_run\":\"run-1\",\"rdmatel_seq\":41,\"flag\":1,\"n\":7,\"text\":\"a\\\"b\\\\c\",\"iol_us\":12.345}\n");
  out.clear();
  Rec absent{false, 0, false, ""};
  clickhouse::append_row(out, kTest, &absent, names, "r", 0);
  EXPECT_EQ(out, "{\"rdmatel_run\":\"r\",\"rdmatel_seq\":0,\"flag\":0,\"text\":\"\",\"iol_us\":12.345}\n");
}

TEST(ClickHouseRows, TableByHand) {
  EXPECT_EQ(clickhouse::create_table_sql(kTest),
            "CREATE TABLE IF NOT EXISTS rdmatel.test\n(\n    rdmatel_run String,\n    rdmatel_seq UInt64,\n"
            "    `flag` Nullable(UInt8),\n    `n` Nullable(UInt64),\n    `text` Nullable(String),\n"
            "    `iol_us` Nullable(Float64)\n)\nENGINE = ReplacingMergeTree()\nORDER BY (rdmatel_run, rdmatel_seq)");
}

TEST(ClickHouseRows, ColumnsAnOlderTableLacksAreAdded) {
  // A table made before `n` and `iol_us` existed: both are added, in schema order; a table
  // with every column gets no ALTER.
  EXPECT_EQ(clickhouse::add_columns_sql(kTest, {"rdmatel_run", "rdmatel_seq", "flag", "text"}),
            "ALTER TABLE rdmatel.test ADD COLUMN `n` Nullable(UInt64), ADD COLUMN `iol_us` Nullable(Float64)");
  EXPECT_EQ(clickhouse::add_columns_sql(kTest, {"rdmatel_run", "rdmatel_seq", "flag", "n", "text", "iol_us"}), "");
}
