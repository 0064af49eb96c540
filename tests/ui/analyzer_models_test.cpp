// SPDX-License-Identifier: GPL-2.0-or-later
// The analyzer's models on generated captures, against the generator's ground truth (every
// I/O's metrics and every message, from its own event log): the per-host / storage / pair rows,
// the I/O lists, the flows, the trends' buckets, the Wireshark filter of an I/O, CSV export,
// cancellation and the CLI's error sentences. Expected values are computed here from the truth
// files, never by the code under test.
#include <gtest/gtest.h>
#include <unistd.h>

#include <QString>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <tuple>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/analysis.h"
#include "rdmatel/capture.h"
#include "core/csv_export.h"
#include "core/wireshark_link.h"
#include "models/diagnosis_model.h"
#include "models/flow_table_model.h"
#include "models/group_stats_model.h"
#include "models/io_table_model.h"
#include "models/record_table_model.h"
#include "models/trend_data.h"
#include "tests/support/capture_builder.h"

using json = nlohmann::json;
using namespace rdmatel;
using namespace rdmatel::ui;

namespace {

const std::string kSamples = std::string(RDMATEL_SOURCE_DIR) + "/samples/";
const char* const kNvmeSamples[] = {"nvme_2point", "nvme_3point", "mixed", "nvme_midstream"};

json load_truth(const std::string& name) {
  std::ifstream in(kSamples + name + ".truth.json");
  return json::parse(in);
}

std::shared_ptr<const Analysis> analyse(const std::vector<std::string>& paths) {
  std::string error;
  std::shared_ptr<const Analysis> a =
      run_analysis(paths, SettingOverrides::analyzer_defaults(), {}, nullptr, error);
  EXPECT_TRUE(a) << error;
  return a;
}

bool is_data_io(const json& io) {
  // SPEC §4: latency statistics cover reads (opcode 2) and writes (opcode 1) of I/O queues.
  return !io.value("admin", false) && (io["opcode"] == 1 || io["opcode"] == 2);
}

// µs in the truth (three decimals) to ns, exactly.
int64_t ns_of(const json& us) {
  return std::llround(us.get<double>() * 1000.0);
}

struct Expected {
  uint64_t reads = 0, writes = 0, incomplete = 0;
  std::map<std::string, std::vector<int64_t>> values;  ///< metric name -> ns of data I/Os
};

// The statistic the tables show, by hand: mean, nearest-rank p99, max.
double mean_us(const std::vector<int64_t>& v) {
  double s = 0;
  for (int64_t x : v) s += double(x);
  return s / double(v.size()) / 1000.0;
}
double p99_us(std::vector<int64_t> v) {
  std::sort(v.begin(), v.end());
  size_t rank = size_t(std::ceil(0.99 * double(v.size())));
  return double(v[std::max<size_t>(rank, 1) - 1]) / 1000.0;
}
double max_us(const std::vector<int64_t>& v) {
  return double(*std::max_element(v.begin(), v.end())) / 1000.0;
}

const std::pair<IoMetric, const char*> kMetrics[] = {{IoMetric::kDal, "dal_us"},
                                                     {IoMetric::kDpl, "dpl_us"},
                                                     {IoMetric::kRtt, "rtt_us"},
                                                     {IoMetric::kIol1, "iol1_us"},
                                                     {IoMetric::kIol2, "iol2_us"}};

std::string group_key(const json& io, Grouping g) {
  std::string h = io["host"], s = io["storage"];
  return g == Grouping::kHost ? h : g == Grouping::kStorage ? s : h + ">" + s;
}

std::map<std::string, Expected> expected_groups(const json& truth, Grouping g) {
  std::map<std::string, Expected> out;
  for (const json& io : truth["ios"]) {
    Expected& e = out[group_key(io, g)];
    if (!io["complete"].get<bool>()) ++e.incomplete;
    if (!is_data_io(io)) continue;
    ++(io["opcode"] == 2 ? e.reads : e.writes);
    for (const auto& [m, field] : kMetrics)
      if (io.contains(field)) e.values[field].push_back(ns_of(io[field]));
  }
  return out;
}

int column(const GroupStatsModel& m, const QString& header) {
  for (int c = 0; c < m.columnCount(); ++c)
    if (m.headerData(c, Qt::Horizontal).toString() == header) return c;
  return -1;
}

double cell(const QAbstractItemModel& m, int row, int col) {
  return m.index(row, col).data(kSortRole).toDouble();
}

std::string row_key(const GroupStatsModel& m, int row) {
  const GroupStatsModel::Key& k = m.key(row);
  if (k.host && k.storage) return k.host->to_string() + ">" + k.storage->to_string();
  return k.host ? k.host->to_string() : k.storage->to_string();
}

bool have(const char* tool) {
  std::string cmd = std::string("command -v ") + tool + " >/dev/null 2>&1";
  return std::system(cmd.c_str()) == 0;
}

// The frame numbers tshark shows for a display filter.
std::vector<uint64_t> tshark_frames(const std::string& capture, const std::string& filter) {
  std::string cmd =
      "tshark -r '" + capture + "' -Y '" + filter + "' -T fields -e frame.number 2>/dev/null";
  std::vector<uint64_t> out;
  FILE* p = popen(cmd.c_str(), "r");
  char line[64];
  while (p && fgets(line, sizeof line, p)) out.push_back(std::strtoull(line, nullptr, 10));
  if (p) pclose(p);
  return out;
}

// A folder of this test process's own: concurrent test runs (other build trees) never share files.
// Removed when the process exits (never destroyed itself: the exit handler needs it).
std::string scratch() {
  static const std::string* dir = [] {
    auto* d = new std::string(::testing::TempDir() + "/rdmatel_analyzer_test_" +
                              std::to_string(getpid()));
    std::system(("mkdir -p " + *d).c_str());
    std::atexit([] { std::system(("rm -rf " + scratch()).c_str()); });
    return d;
  }();
  return *dir;
}

}  // namespace

// Every host / storage / pair row: counts and avg / p99 / max of each metric as the truth gives.
TEST(AnalyzerGroupStatsModel, RowsMatchGroundTruth) {
  size_t rows_checked = 0;
  for (const char* sample : kNvmeSamples) {
    const json truth = load_truth(sample);
    auto a = analyse({kSamples + sample + ".pcapng"});
    ASSERT_TRUE(a);
    for (Grouping g : {Grouping::kHost, Grouping::kStorage, Grouping::kPair}) {
      SCOPED_TRACE(std::string(sample) + " per " + grouping_name(g));
      const std::map<std::string, Expected> want = expected_groups(truth, g);
      GroupStatsModel model(g);
      model.set_analysis(a);
      ASSERT_EQ(size_t(model.rowCount()), want.size());
      for (int r = 0; r < model.rowCount(); ++r) {
        const std::string key = row_key(model, r);
        SCOPED_TRACE(key);
        ASSERT_TRUE(want.count(key));
        const Expected& e = want.at(key);
        EXPECT_EQ(cell(model, r, column(model, "I/Os")), double(e.reads + e.writes));  // reads and writes
        EXPECT_EQ(cell(model, r, column(model, "Reads")), double(e.reads));
        EXPECT_EQ(cell(model, r, column(model, "Writes")), double(e.writes));
        EXPECT_EQ(cell(model, r, column(model, "Incomplete")), double(e.incomplete));
        for (const auto& [m, field] : kMetrics) {
          const QString name = io_metric_name(m);
          auto it = e.values.find(field);
          int avg = column(model, name + " avg (µs)"), p99 = column(model, name + " p99 (µs)"),
              mx = column(model, name + " max (µs)");
          ASSERT_GE(avg, 0);
          ASSERT_GE(p99, 0);
          ASSERT_GE(mx, 0);
          if (it == e.values.end()) {
            // No I/O has it: shown as a dash, never 0.
            EXPECT_FALSE(model.index(r, avg).data(kSortRole).isValid()) << field;
            EXPECT_EQ(model.index(r, avg).data().toString(), QString("–"));
            continue;
          }
          EXPECT_NEAR(cell(model, r, avg), mean_us(it->second), 0.0005) << field;
          EXPECT_NEAR(cell(model, r, p99), p99_us(it->second), 1e-9) << field;
          EXPECT_NEAR(cell(model, r, mx), max_us(it->second), 1e-9) << field;
        }
        ++rows_checked;
      }
    }
  }
  EXPECT_GT(rows_checked, 20u);
}

// Selecting a host lists exactly its I/Os, each with the truth's metrics.
TEST(AnalyzerIoTableModel, ListsTheSelectedHostsIosWithTruthMetrics) {
  const json truth = load_truth("nvme_2point");
  auto a = analyse({kSamples + "nvme_2point.pcapng"});
  ASSERT_TRUE(a);
  GroupStatsModel hosts(Grouping::kHost);
  hosts.set_analysis(a);
  size_t checked = 0;
  for (int r = 0; r < hosts.rowCount(); ++r) {
    IoTableModel ios;
    ios.set_selection(a, hosts.key(r).host, std::nullopt);
    const std::string host = hosts.key(r).host->to_string();
    std::map<std::tuple<std::string, uint64_t, uint64_t, uint64_t>, const json*> want;
    for (const json& io : truth["ios"])
      if (io["host"] == host) want[{io["storage"], io["qpn"], io["cid"], io["cmd_psn"]}] = &io;
    ASSERT_EQ(size_t(ios.rowCount()), want.size()) << host;
    for (int i = 0; i < ios.rowCount(); ++i) {
      const IoRecord* rec = ios.record(i);
      ASSERT_TRUE(rec);
      auto it = want.find({rec->storage.to_string(), rec->qpn, rec->cid, rec->cmd_psn});
      ASSERT_NE(it, want.end());
      const json& t = *it->second;
      const std::pair<int, const char*> cols[] = {{IoTableModel::kDal, "dal_us"},
                                                  {IoTableModel::kDpl, "dpl_us"},
                                                  {IoTableModel::kRtt, "rtt_us"},
                                                  {IoTableModel::kIol1, "iol1_us"},
                                                  {IoTableModel::kIol2, "iol2_us"}};
      for (const auto& [col, field] : cols) {
        QVariant v = ios.index(i, col).data(kSortRole);
        ASSERT_EQ(v.isValid(), t.contains(field)) << field;
        if (v.isValid()) {
          EXPECT_NEAR(v.toDouble(), t[field].get<double>(), 1e-9) << field;
        }
      }
      EXPECT_EQ(ios.index(i, IoTableModel::kOp).data().toString().toStdString(),
                t["op"].get<std::string>());
      ++checked;
    }
  }
  EXPECT_EQ(checked, truth["ios"].size());
}

// One row per flow and point; messages, bytes, NAKs and the longest FCT as the truth's messages.
TEST(AnalyzerFlowTableModel, RowsMatchGroundTruthMessages) {
  for (const char* sample : {"write_flows", "mixed", "nvme_2point"}) {
    SCOPED_TRACE(sample);
    const json truth = load_truth(sample);
    auto a = analyse({kSamples + sample + ".pcapng"});
    ASSERT_TRUE(a);
    struct Want {
      uint64_t messages = 0, bytes = 0, naks = 0;
      double fct_max = 0;
    };
    std::map<std::string, Want> want;
    for (const json& m : truth["messages"]) {
      std::string key = m["src"].get<std::string>() + ">" + m["dst"].get<std::string>() + "/" +
                        std::to_string(m["dst_qpn"].get<uint64_t>()) + "@" +
                        m["point"].get<std::string>();
      Want& w = want[key];
      ++w.messages;
      w.bytes += m["bytes"].get<uint64_t>();
      w.naks += m["naks"].get<uint64_t>();
      w.fct_max = std::max(w.fct_max, m["fct_us"].get<double>());
    }
    FlowTableModel model;
    model.set_analysis(a);
    ASSERT_EQ(size_t(model.rowCount()), want.size());
    for (int r = 0; r < model.rowCount(); ++r) {
      const FlowKeyAtPoint& k = model.key(r);
      std::string key = k.src.to_string() + ">" + k.dst.to_string() + "/" +
                        std::to_string(k.dst_qpn) + "@" + a->point_name(k.point);
      ASSERT_TRUE(want.count(key)) << key;
      const Want& w = want[key];
      EXPECT_EQ(cell(model, r, FlowTableModel::kMessages), double(w.messages)) << key;
      EXPECT_EQ(cell(model, r, FlowTableModel::kBytes), double(w.bytes)) << key;
      EXPECT_EQ(cell(model, r, FlowTableModel::kNaks), double(w.naks)) << key;
      EXPECT_NEAR(cell(model, r, FlowTableModel::kFctMax), w.fct_max, 1e-9) << key;
    }
  }
}

// The congestion columns of a flow are its ECN marks: a hand-built capture of 6 WRITE ONLY
// packets of one flow with ECN 10, 10, 11, 11, 11, 00 — 5 ECN-capable, 3 CE, ratio 3 / 6 (SPEC §6:
// CE-marked / RoCE packets).
TEST(AnalyzerFlowTableModel, CongestionColumnsAreTheFlowsEcnMarks) {
  namespace t = rdmatel::test;
  t::Bytes file = t::concat({t::pcapng::shb(), t::pcapng::idb("p0")});
  const uint8_t ecn[6] = {2, 2, 3, 3, 3, 0};
  for (uint32_t i = 0; i < 6; ++i) {
    t::RoceSpec s = t::up(0x0A, 100 + i);  // RDMA WRITE ONLY
    s.ecn = ecn[i];
    s.ext = t::reth(0x1000, 0x77, 64);
    s.payload = t::Bytes(64, 0);
    t::Bytes ep = t::pcapng::epb(0, 1'700'000'000'000'000'000ull + i * 1000, t::build_roce(s));
    file.insert(file.end(), ep.begin(), ep.end());
  }
  t::TempCapture cap(file);
  auto a = analyse({cap.path});
  ASSERT_TRUE(a);
  FlowTableModel model;
  model.set_analysis(a);
  ASSERT_EQ(model.rowCount(), 1);
  EXPECT_EQ(cell(model, 0, FlowTableModel::kMessages), 6.0);
  EXPECT_EQ(cell(model, 0, FlowTableModel::kCe), 3.0);
  EXPECT_NEAR(cell(model, 0, FlowTableModel::kCeRatio), 0.5, 1e-12);
  // No reverse direction: whether CNPs came back is unknown, shown as a dash.
  EXPECT_FALSE(model.index(0, FlowTableModel::kCnpsReceived).data(kSortRole).isValid());
}

// The trend of RTT avg per host: every I/O with an RTT lands in the interval of its T1, and each
// point is the mean of that interval's truth values.
TEST(AnalyzerTrendData, BucketsAreTheTruthsPerIntervalMeans) {
  const json truth = load_truth("nvme_2point");
  auto a = analyse({kSamples + "nvme_2point.pcapng"});
  ASSERT_TRUE(a);
  const DurationNs interval = trend_interval(a->span_seconds());
  // 21 ms of capture: about 60 intervals of a 1-2-5 step.
  EXPECT_EQ(interval, 500 * kNsPerUs);
  TrendData d = build_trend(*a, Grouping::kHost, IoMetric::kRtt, Stat::kAvg, interval);
  std::map<std::string, std::map<int64_t, std::vector<int64_t>>> want;
  for (const json& io : truth["ios"])
    if (is_data_io(io) && io.contains("rtt_us"))
      want[io["host"]][(io["t1_ns"].get<int64_t>() - a->summary.first_ts) / interval].push_back(
          ns_of(io["rtt_us"]));
  ASSERT_EQ(d.series.size(), want.size());
  for (const TrendSeries& s : d.series) {
    const auto& buckets = want[s.name.toStdString()];
    ASSERT_EQ(s.points.size(), buckets.size()) << s.name.toStdString();
    size_t i = 0;
    uint64_t n = 0;
    for (const auto& [b, values] : buckets) {
      EXPECT_NEAR(s.points[i].x(), double(b * interval) / 1e9, 1e-12);
      EXPECT_NEAR(s.points[i].y(), mean_us(values), 0.0005);
      n += values.size();
      ++i;
    }
    EXPECT_EQ(s.samples, n);
  }
}

// The filter of an I/O names its command and completion frames at the compute side, and every
// stage's frame at both points: 6 frames for a read (command, first data, completion), 8 for a
// write with a READ REQUEST (command, READ REQUEST, first READ RESPONSE, completion).
TEST(AnalyzerWiresharkLink, FilterHasExactlyTheFramesOfTheIo) {
  const json truth = load_truth("nvme_2point");
  auto a = analyse({kSamples + "nvme_2point.pcapng"});
  ASSERT_TRUE(a);
  std::map<std::tuple<std::string, uint64_t, uint64_t, uint64_t>, const IoRecord*> by_key;
  for (const IoRecord& r : a->ios) by_key[{r.host.to_string(), r.qpn, r.cid, r.cmd_psn}] = &r;
  size_t checked = 0;
  for (const json& t : truth["ios"]) {
    if (!is_data_io(t) || !t["complete"].get<bool>() || t["retransmitted"].get<bool>() ||
        t["in_capsule"].get<bool>())
      continue;
    if (!t.contains("t3_ns")) continue;  // e.g. a zero-length read
    const IoRecord* r = by_key[{t["host"], t["qpn"], t["cid"], t["cmd_psn"]}];
    ASSERT_TRUE(r);
    std::vector<uint64_t> frames = io_frame_numbers(*a, *r);
    const size_t stages = t["opcode"] == 2 ? 3 : 4;
    EXPECT_EQ(frames.size(), 2 * stages) << t.dump();
    EXPECT_TRUE(std::count(frames.begin(), frames.end(), t["cmd_frame"].get<uint64_t>()));
    EXPECT_TRUE(std::count(frames.begin(), frames.end(), t["rsp_frame"].get<uint64_t>()));
    QString f = io_display_filter(*a, *r);
    EXPECT_TRUE(f.startsWith("frame.number in {")) << f.toStdString();
    EXPECT_EQ(f.count(','), qsizetype(frames.size() - 1))
        << f.toStdString();  // "frame.number in {a, b, c}"
    // What Wireshark shows with the filter: exactly these frames (a few I/Os: tshark is slow).
    if (checked < 3 && have("tshark")) {
      EXPECT_EQ(tshark_frames(kSamples + "nvme_2point.pcapng", f.toStdString()), frames)
          << f.toStdString();
    }
    ++checked;
  }
  EXPECT_GT(checked, 40u);
  // Several files are merged first: Wireshark opens the merge, whose frame numbers the engine's
  // are.
  auto two = analyse({kSamples + "nvme_2point.pcapng", kSamples + "mixed.pcapng"});
  ASSERT_TRUE(two);
  WiresharkCommand c =
      wireshark_command(*two, "frame.number in {1}", QString::fromStdString(scratch()));
  EXPECT_EQ(c.merge_inputs.size(), 2);
  EXPECT_EQ(c.arguments, (QStringList{"-r", c.merged_file, "-Y", "frame.number in {1}"}));
  // mergecap numbers the frames of the merge as the session does: each I/O's frames are the same
  // when the merged file is read on its own.
  if (!have("mergecap")) GTEST_SKIP() << "mergecap is not installed";
  QString error;
  c.program = "true";  // merge only
  ASSERT_TRUE(open_in_wireshark(c, error)) << error.toStdString();
  auto merged = analyse({c.merged_file.toStdString()});
  std::remove(c.merged_file.toStdString().c_str());
  ASSERT_TRUE(merged);
  ASSERT_EQ(merged->ios.size(), two->ios.size());
  std::map<std::tuple<std::string, uint64_t, uint64_t, uint64_t>, std::pair<uint64_t, uint64_t>>
      frames_of;
  for (const IoRecord& r : two->ios)
    frames_of[{r.host.to_string(), r.qpn, r.cid, r.cmd_psn}] = {r.cmd_frame, r.rsp_frame};
  for (const IoRecord& r : merged->ios) {
    auto expected = frames_of[{r.host.to_string(), r.qpn, r.cid, r.cmd_psn}];
    EXPECT_EQ(r.cmd_frame, expected.first);
    EXPECT_EQ(r.rsp_frame, expected.second);
  }
}

// One pcap file per observation point (pcap has no interface names): the analysis has a point per
// file, and so must the merge Wireshark opens (mergecap merges alike interfaces unless -I none).
TEST(AnalyzerWireshark, PcapFilesPerPointStayPointsInTheMerge) {
  std::unique_ptr<CaptureSource> src;
  std::string error;
  ASSERT_EQ(open_fast_capture(kSamples + "nvme_2point.pcapng", src, error), OpenStatus::kOk) << error;
  QString merge_error;
  test::Bytes per_point[2] = {test::pcap::header(), test::pcap::header()};
  CapturedPacket p;
  while (src->next(p)) {
    ASSERT_LT(p.interface, 2u);
    test::Bytes data(p.data, p.data + p.cap_len);
    const test::Bytes r = test::pcap::record(uint32_t(p.ts / 1000000000), uint32_t(p.ts % 1000000000), data, p.wire_len);
    per_point[p.interface].insert(per_point[p.interface].end(), r.begin(), r.end());
  }
  test::TempCapture a(per_point[0], ".pcap"), b(per_point[1], ".pcap");
  auto named = analyse({kSamples + "nvme_2point.pcapng"});
  auto files = analyse({a.path, b.path});
  ASSERT_TRUE(named && files);
  ASSERT_EQ(files->points.size(), 2u);
  EXPECT_EQ(files->ios.size(), named->ios.size());
  WiresharkCommand c = wireshark_command(*files, "", QString::fromStdString(scratch()));
  EXPECT_EQ(c.merge_options, (QStringList{"-I", "none"}));
  if (!have("mergecap")) GTEST_SKIP() << "mergecap is not installed";
  c.program = "true";  // merge only
  ASSERT_TRUE(open_in_wireshark(c, merge_error)) << merge_error.toStdString();
  auto merged = analyse({c.merged_file.toStdString()});
  std::remove(c.merged_file.toStdString().c_str());
  ASSERT_TRUE(merged);
  EXPECT_EQ(merged->points.size(), 2u);
  // The same I/Os with the same latencies (two points: RTT measured), frame numbers included.
  ASSERT_EQ(merged->ios.size(), files->ios.size());
  size_t with_rtt = 0;
  for (size_t i = 0; i < merged->ios.size(); ++i) {
    const std::optional<DurationNs> rtt = io_metrics(merged->ios[i]).rtt;
    EXPECT_EQ(rtt, io_metrics(files->ios[i]).rtt) << i;
    EXPECT_EQ(merged->ios[i].cmd_frame, files->ios[i].cmd_frame) << i;
    with_rtt += rtt.has_value();
  }
  EXPECT_GT(with_rtt, 100u);
  // Named interfaces (pcapng files) keep mergecap's default, which merges a name's ring files.
  auto one = analyse({kSamples + "nvme_2point.pcapng", kSamples + "mixed.pcapng"});
  ASSERT_TRUE(one);
  EXPECT_TRUE(wireshark_command(*one, "", QString::fromStdString(scratch())).merge_options.isEmpty());
}

// CSV: a header and one line per row; absent values empty, as the CLI writes them.
TEST(AnalyzerCsvExport, OneLinePerRowAbsentValuesEmpty) {
  auto a = analyse({kSamples + "nvme_2point.pcapng"});
  ASSERT_TRUE(a);
  GroupStatsModel hosts(Grouping::kHost);
  hosts.set_analysis(a);
  IoTableModel ios;
  ios.set_selection(a, hosts.key(0).host, std::nullopt);
  QString csv = model_to_csv(ios);
  QStringList lines = csv.split('\n', Qt::SkipEmptyParts);
  ASSERT_EQ(lines.size(), ios.rowCount() + 1);
  EXPECT_TRUE(lines[0].startsWith("ID,Op,Host,Storage,DAL (µs),DPL (µs),RTT (µs),"))
      << lines[0].toStdString();
  // A Connect has no DAL: its cell is empty.
  int connect = -1;
  for (int r = 0; r < ios.rowCount() && connect < 0; ++r)
    if (QString(ios.record(r)->op) == "connect") connect = r;
  ASSERT_GE(connect, 0);
  QStringList cells = lines[connect + 1].split(',');
  EXPECT_EQ(cells[IoTableModel::kDal], QString());
  EXPECT_FALSE(csv.contains("–"));
}

// Schema-driven tables (congestion per kind, offsets, alerts): exported as CSV they are the
// CLI's `export KIND --format csv` rows of that kind, in the same order, in the columns the
// table shows (those some row has a value in).
TEST(AnalyzerRecordTableModel, CsvRowsAreTheClisExport) {
  if (std::string(RDMATEL_CLI).empty()) GTEST_SKIP() << "the CLI is not built";
  const std::string sample = kSamples + "mixed.pcapng";
  auto a = analyse({sample});
  ASSERT_TRUE(a);
  size_t compared = 0;
  for (const char* table : {"congestion:ecn", "offsets", "paths"}) {
    SCOPED_TRACE(table);
    const std::string kind = std::string(table).substr(0, std::string(table).find(':'));
    const QString sub = std::string(table) == kind ? QString() : QString(table).section(':', 1);
    RecordTableModel model(table);
    model.set_analysis(a);
    QStringList ours = model_to_csv(model).split('\n', Qt::SkipEmptyParts);
    std::string cli;
    FILE* p = popen(
        (std::string(RDMATEL_CLI) + " export " + kind + " --format csv " + sample).c_str(), "r");
    char buf[4096];
    while (p && fgets(buf, sizeof buf, p)) cli += buf;
    if (p) pclose(p);
    QStringList lines = QString::fromStdString(cli).split('\n', Qt::SkipEmptyParts);
    ASSERT_GT(lines.size(), 1);
    const QStringList header = lines[0].split(',');
    QStringList theirs = {QString()};
    for (int i = 1; i < lines.size(); ++i) {
      const QStringList cells = lines[i].split(',');
      if (!sub.isEmpty() && cells[int(header.indexOf("kind"))] != sub) continue;
      QStringList shown;
      for (int c = 0; c < model.columnCount(); ++c) shown << cells[int(header.indexOf(model.column_name(c)))];
      theirs << shown.join(',');
    }
    ASSERT_EQ(ours.size(), theirs.size());
    ASSERT_GT(ours.size(), 1);
    for (int i = 1; i < ours.size(); ++i) EXPECT_EQ(ours[i].toStdString(), theirs[i].toStdString());
    compared += size_t(ours.size() - 1);
    // The table shows QPNs as Wireshark writes them (hex); the CSV keeps the CLI's number.
    for (int c = 0; c < model.columnCount(); ++c) {
      if (std::string(model.column_name(c)).ends_with("qpn")) {
        EXPECT_TRUE(model.index(0, c).data(Qt::DisplayRole).toString().startsWith("0x")) << model.column_name(c);
      }
    }
  }
  EXPECT_GT(compared, 10u);
}

// The CLI's sentences for what cannot be opened and for a role naming no point.
TEST(AnalyzerRunAnalysis, ErrorsAreTheClisSentences) {
  if (std::string(RDMATEL_CLI).empty()) GTEST_SKIP() << "the CLI is not built";
  auto cli_error = [](const std::string& args) {
    std::string out;
    std::string cmd = std::string(RDMATEL_CLI) + " analyze " + args + " 2>&1 >/dev/null";
    FILE* p = popen(cmd.c_str(), "r");
    char buf[512];
    while (p && fgets(buf, sizeof buf, p)) out += buf;
    if (p) pclose(p);
    return out;
  };
  std::string error;
  const std::string missing = "/nonexistent/capture.pcapng";
  EXPECT_FALSE(run_analysis({missing}, SettingOverrides::analyzer_defaults(), {}, nullptr, error));
  EXPECT_EQ("rdmatel: " + error + "\n", cli_error(missing));
  SettingOverrides roles = SettingOverrides::analyzer_defaults();
  roles.set("point", "nosuch=compute");
  const std::string sample = kSamples + "nvme_2point.pcapng";
  EXPECT_FALSE(run_analysis({sample}, roles, {}, nullptr, error));
  EXPECT_EQ("rdmatel: " + error + "\n", cli_error("--point nosuch=compute " + sample));
}

// The diagnosis names the fault the generator injected: storage 2 takes 400 µs more per data
// access, so the first finding is storage 10.2.0.2, segment storage, and the Overview says so.
TEST(AnalyzerDiagnosisModel, FirstFindingIsTheInjectedFault) {
  const std::string cap = scratch() + "/analyzer_slow_storage.pcapng";
  std::string cmd = std::string(RDMATEL_SYNTH) +
                    " --scenario nvme-2point --hosts 3 --storages 3 --ios 900 --slow-storage 2=400 "
                    "--seed 21 --out " +
                    cap + " >/dev/null";
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  auto a = analyse({cap});
  ASSERT_TRUE(a);
  DiagnosisModel model;
  model.set_analysis(a);
  ASSERT_GT(model.rowCount(), 0);
  const DiagnosisRecord* top = model.record(0);
  ASSERT_TRUE(top);
  EXPECT_EQ(top->rank, 1u);
  EXPECT_EQ(top->scope, DiagnosisScope::kStorage);
  ASSERT_TRUE(top->storage);
  EXPECT_EQ(top->storage->to_string(), "10.2.0.2");
  EXPECT_STREQ(top->segment, "storage");
  EXPECT_EQ(model.index(0, DiagnosisModel::kRank).data().toString(), QString("1"));
  QString html = diagnosis_html(*a);
  EXPECT_TRUE(html.contains("<li><b>")) << html.toStdString();
  EXPECT_TRUE(html.contains("10.2.0.2")) << html.toStdString();
  // The storage view names the finding on that row only.
  GroupStatsModel storage(Grouping::kStorage);
  storage.set_analysis(a);
  const int diag = column(storage, "Diagnosis");
  ASSERT_GE(diag, 0);
  for (int r = 0; r < storage.rowCount(); ++r) {
    const QString v = storage.index(r, diag).data().toString();
    if (storage.key(r).storage->to_string() == "10.2.0.2")
      EXPECT_TRUE(v.startsWith("#1 ")) << v.toStdString();
    else
      EXPECT_FALSE(v.startsWith("#")) << v.toStdString();
  }
  // A healthy capture of the same shape: nothing stands out.
  const std::string healthy = scratch() + "/analyzer_healthy.pcapng";
  cmd = std::string(RDMATEL_SYNTH) +
        " --scenario nvme-2point --hosts 3 --storages 3 --ios 900 --seed 21 --out " + healthy +
        " >/dev/null";
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  auto h = analyse({healthy});
  ASSERT_TRUE(h);
  EXPECT_TRUE(diagnosis_html(*h).contains("Nothing stands out"))
      << diagnosis_html(*h).toStdString();
}

// GPU write flows, packets dropped between leafA-gpu and spine1: the Overview's message-flow
// diagnosis blames that link for the message flow that lost the largest share there (the truth's
// hops).
TEST(AnalyzerDiagnosisModel, MessageFlowsLosingPacketsNameTheLink) {
  const std::string cap = scratch() + "/analyzer_flow_drops.pcapng";
  std::string cmd = std::string(RDMATEL_SYNTH) +
                    " --scenario write-flows --flows 4 --messages 10 --points 3 --loss 0 "
                    "--drop-between leafA-gpu:spine1=0.05 --seed 5 --out " +
                    cap + " >/dev/null";
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  auto a = analyse({cap});
  ASSERT_TRUE(a);
  std::ifstream in(scratch() + "/analyzer_flow_drops.truth.json");
  const json truth = json::parse(in);
  // Flows that carry messages (READ requests and ACKs are the other direction's).
  std::set<std::tuple<std::string, std::string, unsigned>> messages;
  for (const auto& f : truth["flows"])
    messages.insert({f["src"].get<std::string>(), f["dst"].get<std::string>(), f["dst_qpn"].get<unsigned>()});
  double worst = 0;
  std::string expected;
  for (const auto& h : truth["hops"]) {
    if (!messages.count({h["src"].get<std::string>(), h["dst"].get<std::string>(), h["dst_qpn"].get<unsigned>()}))
      continue;
    const double packets = h["packets"].get<double>(), lost = h["lost"].get<double>();
    if (packets > 0 && lost / packets > worst) {
      worst = lost / packets;
      char qpn[16];
      std::snprintf(qpn, sizeof qpn, "0x%06x", h["dst_qpn"].get<unsigned>());
      expected = h["src"].get<std::string>() + " &gt; " + h["dst"].get<std::string>() + " " + qpn +
                 ": the network loses its packets, between " + h["from_point"].get<std::string>() + " and " +
                 h["to_point"].get<std::string>();
    }
  }
  ASSERT_GT(worst, 0.0);
  const QString html = diagnosis_html(*a);
  EXPECT_TRUE(html.contains("Diagnosis: RDMA message flows")) << html.toStdString();
  EXPECT_TRUE(html.contains(QString::fromStdString(expected))) << expected << "\n" << html.toStdString();
}

// Cancel stops the run at the next packet batch: partial results, marked as such.
TEST(AnalyzerRunAnalysis, CancelStopsEarly) {
  const std::string cap = scratch() + "/analyzer_cancel.pcapng";
  std::string cmd = std::string(RDMATEL_SYNTH) +
                    " --scenario nvme-2point --ios 1500 --seed 5 --out " + cap + " >/dev/null";
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  CancelToken cancel;
  cancel.cancel();
  std::string error;
  auto a = run_analysis({cap}, SettingOverrides::analyzer_defaults(), {}, &cancel, error);
  ASSERT_TRUE(a) << error;
  EXPECT_TRUE(a->summary.cancelled);
  auto full = run_analysis({cap}, SettingOverrides::analyzer_defaults(), {}, nullptr, error);
  ASSERT_TRUE(full);
  EXPECT_FALSE(full->summary.cancelled);
  EXPECT_LT(a->summary.frames, full->summary.frames);
  std::ifstream in(scratch() + "/analyzer_cancel.truth.json");
  EXPECT_EQ(full->ios.size(), json::parse(in)["ios"].size());
}
