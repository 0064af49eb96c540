// SPDX-License-Identifier: GPL-2.0-or-later
// The line writers made at compile time for each record kind (engine/src/output/
// column_line_writer.h) write what the writer that walks the columns writes, byte for byte: every
// record of every kind the engine makes from the samples, in JSON Lines and CSV, and hand-made
// records with absent values and strings that need escaping or quoting. Whole doubles take a
// shortcut past std::to_chars: checked against it.
#include <gtest/gtest.h>

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "engine/src/output/record_line.h"
#include "rdmatel/records.h"
#include "rdmatel/schema.h"
#include "rdmatel/session.h"
#include "rdmatel/writers.h"

namespace rdmatel {
namespace {

// One kind's records written by its own line writers and by the column walk, into memory.
class TwoWriters {
 public:
  TwoWriters(const RecordSchema& schema, RecordFormat format) : walked_(schema) {
    walked_.lines = {};
    fast_file_ = open_memstream(&fast_buf_, &fast_len_);
    walked_file_ = open_memstream(&walked_buf_, &walked_len_);
    fast_ = std::make_unique<RecordWriter>(fast_file_, format, schema, names());
    walked_writer_ = std::make_unique<RecordWriter>(walked_file_, format, walked_, names());
  }
  ~TwoWriters() {
    std::free(fast_buf_);
    std::free(walked_buf_);
  }
  void write(const void* record) {
    fast_->write(record);
    walked_writer_->write(record);
    ++records;
  }
  // The two outputs, once written.
  std::pair<std::string, std::string> texts() {
    fast_.reset();
    walked_writer_.reset();
    std::fclose(fast_file_);
    std::fclose(walked_file_);
    fast_file_ = walked_file_ = nullptr;
    return {std::string(fast_buf_, fast_len_), std::string(walked_buf_, walked_len_)};
  }
  size_t records = 0;

 private:
  static PointNamer names() {
    // Point names that need quoting in CSV and escaping in JSON, and one that is not UTF-8.
    static const std::vector<std::string> kNames = {"leaf \"A\",1", "spine\\2", "p\xff" "3", "plain"};
    return [](PointId p) -> const std::string& { return kNames[p % kNames.size()]; };
  }
  RecordSchema walked_;
  char* fast_buf_ = nullptr;
  char* walked_buf_ = nullptr;
  size_t fast_len_ = 0, walked_len_ = 0;
  std::FILE* fast_file_ = nullptr;
  std::FILE* walked_file_ = nullptr;
  std::unique_ptr<RecordWriter> fast_, walked_writer_;
};

struct BothFormats : RecordSink {
  std::map<const RecordSchema*, std::unique_ptr<TwoWriters>> jsonl, csv;
  void on_record(const Record& r) override {
    if (r.provisional) return;
    for (auto* writers : {&jsonl, &csv}) {
      auto& w = (*writers)[r.schema];
      if (!w) w = std::make_unique<TwoWriters>(*r.schema, writers == &jsonl ? RecordFormat::kJsonl : RecordFormat::kCsv);
      w->write(r.data);
    }
  }
};

TEST(ColumnLineWriter, EveryRecordOfTheSamplesAsTheColumnsWalked) {
  Settings s;
  std::string error;
  ASSERT_TRUE(s.set("alert", "rtt>20", error)) << error;
  ASSERT_TRUE(s.set("estimate_offsets", "true", error)) << error;
  ASSERT_TRUE(s.set("point_local", "true", error)) << error;
  BothFormats sink;
  for (const char* sample : {"nvme_3point", "mixed", "write_flows", "nvme_midstream"}) {
    auto session = Session::open({std::string(RDMATEL_SOURCE_DIR "/samples/") + sample + ".pcapng"}, s, nullptr, error);
    ASSERT_TRUE(session) << error;
    session->subscribe(sink);
    session->run();
  }
  // Every kind with line writers of its own was written (else this test proves nothing of it).
  for (const RecordSchema* kind : {&kIoSchema, &kIoPointSchema, &kMessageSchema, &kFlowSchema, &kCongestionSchema,
                                   &kPathSchema, &kAlertSchema, &kDiagnosisSchema, &kOffsetSchema}) {
    EXPECT_TRUE(kind->lines.jsonl && kind->lines.csv) << kind->channel;
    ASSERT_TRUE(sink.jsonl.count(kind)) << "no " << kind->channel << " record from the samples";
  }
  for (auto* writers : {&sink.jsonl, &sink.csv})
    for (auto& [schema, w] : *writers) {
      const auto [fast, walked] = w->texts();
      EXPECT_GT(w->records, 0u);
      EXPECT_EQ(fast, walked) << schema->channel << (writers == &sink.csv ? " csv" : " jsonl");
    }
}

std::pair<std::string, std::string> both(const RecordSchema& schema, RecordFormat format, const void* record) {
  TwoWriters w(schema, format);
  w.write(record);
  return w.texts();
}

TEST(ColumnLineWriter, AbsentValuesAndStringsToEscape) {
  MessageRecord m;
  IpAddress::parse("10.1.0.1", m.src);
  IpAddress::parse("fe80::1:2:3:4", m.dst);
  m.point = 2;
  m.first_ns = -5;  // before the epoch
  m.last_ns = int64_t(4) * 1000000000 * 1000000000;  // far ahead (the engine bounds stamps well within)
  m.last_frame = std::numeric_limits<uint64_t>::max();
  m.gpu.src_gpu = "gpu \"0\", rack 1\n";
  m.gpu.dst_gpu = "\xc3\xa9t\xe9";  // é, then a byte that is not UTF-8
  m.gpu.job = "job\\1\t";
  FlowPeriodRecord f;
  f.point = 1;
  f.period_ns = 1500000001;  // 1.500000001 s: not whole
  f.bytes = 12345;
  for (RecordFormat format : {RecordFormat::kJsonl, RecordFormat::kCsv}) {
    auto [fast, walked] = both(kMessageSchema, format, &m);  // fet, fnr absent (no packets)
    EXPECT_EQ(fast, walked);
    m.packets = 3;
    m.naks = 1;
    m.poll_period_ns = 7;
    std::tie(fast, walked) = both(kMessageSchema, format, &m);
    EXPECT_EQ(fast, walked);
    for (int64_t period : {int64_t(0), int64_t(1), int64_t(1000000000), int64_t(1500000001), int64_t(86400) * 1000000000}) {
      f.period_ns = period;
      std::tie(fast, walked) = both(kFlowSchema, format, &f);
      EXPECT_EQ(fast, walked) << period;
    }
  }
}

std::string to_chars_text(double d, std::chars_format format, int precision) {
  char b[400];
  return std::string(b, std::to_chars(b, b + sizeof b, d, format, precision).ptr);
}

TEST(ColumnLineWriter, WholeDoublesWrittenAsToCharsWritesThem) {
  const double values[] = {0.0, -0.0, 1.0, -1.0, 0.5, 0.1, 1e-5, 5e-324, 12.0, 999999999999.0, -999999999999.0,
                           1e12, -1e12, 1e12 + 1, 123456789012.0, 1e15, 9007199254740991.0, 9007199254740992.0,
                           -9007199254740992.0, 1e300, 2.5e9, 3.0000000000001,
                           std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity(),
                           std::numeric_limits<double>::quiet_NaN()};
  for (double d : values) {
    char b[400];
    EXPECT_EQ(std::string(b, line_text::fixed3(b, d)), to_chars_text(d, std::chars_format::fixed, 3)) << d;
    EXPECT_EQ(std::string(b, line_text::general12(b, d)), to_chars_text(d, std::chars_format::general, 12)) << d;
  }
}

}  // namespace
}  // namespace rdmatel
