// SPDX-License-Identifier: GPL-2.0-or-later
// Distributions, number formatting and record output, checked against hand-computed values.
#include <gtest/gtest.h>

#include <cstdio>
#include <limits>
#include <string>

#include "cli/tables.h"
#include "rdmatel/engine.h"
#include "rdmatel/format.h"
#include "rdmatel/records.h"
#include "rdmatel/report.h"
#include "rdmatel/schema.h"
#include "rdmatel/writers.h"

namespace rdmatel {
namespace {

std::string json_quote(const std::string& s) {
  std::string o;
  append_json_string(o, s);
  return o;
}
std::string csv_field(const std::string& s) {
  std::string o;
  append_csv_field(o, s);
  return o;
}

TEST(Distribution, NearestRankPercentiles) {
  Distribution d;
  for (int v : {40, 10, 30, 20}) d.add(v);
  EXPECT_EQ(d.count(), 4u);
  EXPECT_EQ(d.min(), 10);
  EXPECT_EQ(d.max(), 40);
  EXPECT_DOUBLE_EQ(d.mean(), 25.0);
  EXPECT_EQ(d.percentile(50), 20);  // rank ceil(0.5*4) = 2
  EXPECT_EQ(d.percentile(99), 40);  // rank ceil(3.96) = 4
  EXPECT_EQ(d.percentile(25), 10);
  EXPECT_TRUE(d.exact());
}

// Latencies are kept in 32 bits while they fit; one beyond (over 2.1 s) widens them all, and the
// percentiles stay exact either way.
TEST(Distribution, ExactAcrossTheThirtyTwoBitLimit) {
  Distribution d;
  const DurationNs big = DurationNs(3) * 1000 * 1000 * 1000;  // 3 s
  for (int i = 1; i <= 99; ++i) d.add(DurationNs(i) * 1000);
  EXPECT_EQ(d.percentile(50), 50'000);
  d.add(big);
  d.add(-big);
  EXPECT_TRUE(d.exact());
  EXPECT_EQ(d.percentile(100), big);
  EXPECT_EQ(d.percentile(0.5), -big);
  EXPECT_EQ(d.percentile(50), 50'000);  // rank 51 of 101: -3 s, then 1..50 us
  EXPECT_EQ(d.count(), 101u);
}

TEST(Distribution, HistogramModeStaysWithinOnePercent) {
  Distribution d;
  const int n = int(Distribution::kExactLimit) * 2;
  for (int i = 1; i <= n; ++i) d.add(DurationNs(i) * 1000);
  EXPECT_FALSE(d.exact());
  double p50 = double(d.percentile(50)), want = double(n / 2) * 1000;
  EXPECT_NEAR(p50, want, want * 0.01);
  EXPECT_EQ(d.max(), DurationNs(n) * 1000);
  EXPECT_DOUBLE_EQ(d.mean(), (double(n) + 1) / 2 * 1000);
}

TEST(Distribution, NegativeValues) {
  Distribution d;
  for (int i = 0; i < int(Distribution::kExactLimit) + 10; ++i) d.add(-5000);
  EXPECT_NEAR(double(d.percentile(50)), -5000.0, 50.0);
  EXPECT_EQ(d.min(), -5000);
}

TEST(Distribution, HistogramCoversTheWholeRange) {
  // The histogram is one counter per bucket of the int64 range: the extremes have buckets too.
  Distribution d;
  for (int i = 0; i < int(Distribution::kExactLimit); ++i) d.add(1000);
  d.add(std::numeric_limits<DurationNs>::min());
  d.add(std::numeric_limits<DurationNs>::max());
  EXPECT_FALSE(d.exact());
  EXPECT_EQ(d.percentile(0.0001), std::numeric_limits<DurationNs>::min());
  EXPECT_NEAR(double(d.percentile(50)), 1000.0, 10.0);
  // A bucket's midpoint (clamped to min and max): within the stated 0.8 %.
  const double top = double(std::numeric_limits<DurationNs>::max());
  EXPECT_NEAR(double(d.percentile(100)), top, top * 0.008);
}

TEST(NumberFormat, Ipv4TextByHand) {
  auto text = [](uint8_t a, uint8_t b, uint8_t c, uint8_t d) {
    const uint8_t bytes[4] = {a, b, c, d};
    return IpAddress::from_v4(bytes).to_string();
  };
  EXPECT_EQ(text(0, 0, 0, 0), "0.0.0.0");
  EXPECT_EQ(text(255, 255, 255, 255), "255.255.255.255");
  EXPECT_EQ(text(10, 1, 100, 9), "10.1.100.9");
  EXPECT_EQ(text(192, 168, 20, 109), "192.168.20.109");
}

TEST(NumberFormat, MicrosecondsExact) {
  EXPECT_EQ(format_us(DurationNs(0)), "0.000");
  EXPECT_EQ(format_us(DurationNs(1)), "0.001");
  EXPECT_EQ(format_us(DurationNs(123456789)), "123456.789");
  EXPECT_EQ(format_us(DurationNs(-1500)), "-1.500");
  EXPECT_EQ(format_us(2500.4), "2.500");
}

TEST(RecordWriter, JsonEscaping) {
  EXPECT_EQ(json_quote("a\"b\\c\n\x01"), "\"a\\\"b\\\\c\\n\\u0001\"");
  EXPECT_EQ(csv_field("a,b"), "\"a,b\"");
  EXPECT_EQ(csv_field("plain"), "plain");
}

IoRecord sample_read() {
  IoRecord r;
  r.op = "read";
  r.opcode = 0x02;
  IpAddress::parse("10.0.0.1", r.host);
  IpAddress::parse("10.0.1.1", r.storage);
  r.qpn = 0x11;
  r.cid = 3;
  r.complete = true;
  r.end = IoEnd::kCompleted;
  r.t.set(1, 1000);
  r.t.set(2, 3000);
  r.t.set(3, 10000);
  r.t.set(4, 12000);
  r.t.set(5, 15500);
  r.iol_ns = 14500;
  r.cmd_frame = 1;
  r.rsp_frame = 9;
  return r;
}

TEST(IoMetrics, ReadByHand) {
  IoMetrics m = io_metrics(sample_read());
  EXPECT_EQ(*m.dal, 7000);    // T3-T2
  EXPECT_FALSE(m.dpl);        // reads have none
  EXPECT_EQ(*m.iol1, 14500);  // T5-T1
  EXPECT_EQ(*m.iol2, 9000);   // T4-T2
  EXPECT_EQ(*m.rtt, 5500);    // IOL1-IOL2
}

TEST(IoMetrics, WriteByHandAndMissingTimestamps) {
  IoRecord r = sample_read();
  r.op = "write";
  r.opcode = 0x01;
  r.t = IoTimes{};
  r.t.set(1, 0);
  r.t.set(2, 100);
  r.t.set(3, 300);
  r.t.set(4, 500);
  r.t.set(5, 900);
  r.t.set(7, 2000);  // no T6: IOL2 and RTT must be absent, never 0
  IoMetrics m = io_metrics(r);
  EXPECT_EQ(*m.dal, 200);
  EXPECT_EQ(*m.dpl, 400);
  EXPECT_EQ(*m.iol1, 2000);
  EXPECT_FALSE(m.iol2);
  EXPECT_FALSE(m.rtt);
}

TEST(IoMetrics, OtherCommandsHaveNoDal) {
  IoRecord r = sample_read();
  r.op = "identify";
  r.opcode = 0x06;
  r.admin = true;
  IoMetrics m = io_metrics(r);
  EXPECT_FALSE(m.dal);
  EXPECT_EQ(*m.iol1, 14500);
}

TEST(RecordWriter, JsonlLineHasSpecFields) {
  char* buf = nullptr;
  size_t len = 0;
  std::FILE* f = open_memstream(&buf, &len);
  {
    RecordWriter w(f, RecordFormat::kJsonl, kIoSchema, nullptr);
    IoRecord r = sample_read();
    w.write(&r);
  }
  std::fclose(f);
  std::string line(buf, len);
  free(buf);
  for (const char* want : {"\"op\":\"read\"", "\"host\":\"10.0.0.1\"", "\"storage\":\"10.0.1.1\"", "\"qpn\":17",
                           "\"cid\":3", "\"complete\":true", "\"t1_ns\":1000", "\"t5_ns\":15500", "\"dal_us\":7.000",
                           "\"iol1_us\":14.500", "\"iol2_us\":9.000", "\"rtt_us\":5.500", "\"iol_us\":14.500",
                           "\"cmd_frame\":1", "\"rsp_frame\":9"})
    EXPECT_NE(line.find(want), std::string::npos) << want << " in " << line;
  EXPECT_EQ(line.find("t6_ns"), std::string::npos);
  EXPECT_EQ(line.find("dpl_us"), std::string::npos);
}

// A made-up record kind: a column name too long for the writer's fixed-size key slots, an IPv6
// address written in full (39 characters), a point whose name needs escaping, absent values.
struct WideRecord {
  IpAddress a;
  PointId point = 0;
  bool has_n = false;
  uint64_t n = 0;
};
const Column kWideColumns[] = {
    {"an_address_column_with_a_rather_long_name", ValueType::kAddress,
     [](const void* r, Value& v) { return v.ip = &static_cast<const WideRecord*>(r)->a, true; }},
    {"point", ValueType::kPoint, [](const void* r, Value& v) { return v.point = static_cast<const WideRecord*>(r)->point, true; }},
    {"n", ValueType::kUnsigned, [](const void* r, Value& v) {
       const auto* w = static_cast<const WideRecord*>(r);
       v.u = w->n;
       return w->has_n;
     }},
    {"us", ValueType::kMicros, [](const void*, Value& v) { return v.i = -1234567, true; }},
};
const RecordSchema kWideSchema = {"wide", "test records", kWideColumns};

std::string write_wide(RecordFormat format, const WideRecord& r) {
  char* buf = nullptr;
  size_t len = 0;
  std::FILE* f = open_memstream(&buf, &len);
  {
    const std::string name = "leaf \"A\",1";
    RecordWriter w(f, format, kWideSchema, [&](PointId) -> const std::string& { return name; });
    w.write(&r);
    w.write(&r);  // the point's text from the writer's cache the second time
  }
  std::fclose(f);
  std::string out(buf, len);
  free(buf);
  return out;
}

TEST(RecordWriter, LongNamesFullIpv6AndEscapedPoints) {
  WideRecord r;
  IpAddress::parse("2001:db8:1111:2222:3333:4444:5555:6666", r.a);
  const std::string line =
      "{\"an_address_column_with_a_rather_long_name\":\"2001:db8:1111:2222:3333:4444:5555:6666\","
      "\"point\":\"leaf \\\"A\\\",1\",\"us\":-1234.567}\n";
  EXPECT_EQ(write_wide(RecordFormat::kJsonl, r), line + line);
  r.has_n = true;
  r.n = 18446744073709551615ull;
  const std::string csv_line = "2001:db8:1111:2222:3333:4444:5555:6666,\"leaf \"\"A\"\",1\",18446744073709551615,-1234.567\n";
  EXPECT_EQ(write_wide(RecordFormat::kCsv, r),
            "an_address_column_with_a_rather_long_name,point,n,us\n" + csv_line + csv_line);
}

TEST(OffsetsTable, AtMostTopOrTwentyPairs) {
  // 8 points: 28 pairs. --top 10 shows 20 (the floor) and says how many there are; --top 30 all.
  Engine engine{Settings{}};
  for (int i = 0; i < 8; ++i) engine.declare_point("p" + std::to_string(i));
  std::vector<OffsetRecord> offsets;
  for (PointId a = 0; a < 8; ++a)
    for (PointId b = a + 1; b < 8; ++b) offsets.push_back(OffsetRecord{a, b, 1000 * a + b, 5, 10, true});
  auto lines = [](const std::string& text, const std::string& what) {
    size_t n = 0;
    for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
  };
  const std::string ten = cli::render_offsets(offsets, engine, 10);
  EXPECT_EQ(lines(ten, " -> "), 20u);
  EXPECT_NE(ten.find("(20 of 28 pairs of points shown"), std::string::npos);
  EXPECT_NE(ten.find("p0 -> p1: +0.001 µs ± 0.005 µs (10 packets)"), std::string::npos);
  const std::string all = cli::render_offsets(offsets, engine, 30);
  EXPECT_EQ(lines(all, " -> "), 28u);
  EXPECT_EQ(all.find("pairs of points shown"), std::string::npos);
}

TEST(IoReport, GroupsPerHostStoragePair) {
  IoReport rep;
  IoRecord a = sample_read();
  IoRecord b = sample_read();
  IpAddress::parse("10.0.0.2", b.host);
  IoRecord c = sample_read();
  c.op = "keep_alive";
  c.opcode = 0x18;
  c.admin = true;
  rep.add(a);
  rep.add(b);
  rep.add(c);
  EXPECT_EQ(rep.total().ios, 3u);
  EXPECT_EQ(rep.total().reads, 2u);
  EXPECT_EQ(rep.total().others, 1u);
  EXPECT_EQ(rep.by_host().size(), 2u);
  EXPECT_EQ(rep.by_storage().size(), 1u);
  EXPECT_EQ(rep.by_pair().size(), 2u);
  EXPECT_EQ(rep.total()[IoMetric::kDal].count(), 2u);  // keep-alive excluded from latency stats
  std::string text = cli::render_io_tables(rep, 10);
  EXPECT_NE(text.find("10.0.0.2"), std::string::npos);
  EXPECT_NE(text.find("7.000"), std::string::npos);
}

}  // namespace
}  // namespace rdmatel
