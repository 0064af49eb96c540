// SPDX-License-Identifier: GPL-2.0-or-later
// The analyzer's window on the offscreen platform: a capture read through the worker thread,
// the views filled from it, the topology's clicks filtering the other views, an I/O's detail.
// Expected values from the generator's ground truth.
#include <gtest/gtest.h>
#include <unistd.h>

#include <QApplication>
#include <QEventLoop>
#include <QGraphicsItem>
#include <QGraphicsScene>
#include <QLineEdit>
#include <QPushButton>
#include <QTimer>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "models/group_stats_model.h"
#include "models/io_table_model.h"
#include "views/group_view.h"
#include "views/main_window.h"
#include "views/overview_view.h"
#include "views/table_panel.h"
#include "views/topology_view.h"

using json = nlohmann::json;
using namespace rdmatel;
using namespace rdmatel::ui;

namespace {

const std::string kSample = std::string(RDMATEL_SOURCE_DIR) + "/samples/nvme_2point";

// Opens the sample and waits for the worker to finish (at most 30 s).
bool load(MainWindow& w, const std::string& path) {
  bool ok = false, done = false;
  QEventLoop loop;
  QObject::connect(&w, &MainWindow::loaded, &loop, [&](bool r) {
    ok = r;
    done = true;
    loop.quit();
  });
  QTimer::singleShot(30000, &loop, &QEventLoop::quit);
  w.open_captures({QString::fromStdString(path)});
  if (!done) loop.exec();
  return done && ok;
}

std::set<std::string> truth_set(const char* field) {
  std::ifstream in(kSample + ".truth.json");
  json t = json::parse(in);
  std::set<std::string> out;
  for (const json& io : t["ios"]) out.insert(io[field].get<std::string>());
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

TEST(AnalyzerWindow, LoadsInTheWorkerAndFillsTheViews) {
  MainWindow w(SettingOverrides::analyzer_defaults());
  w.set_interactive(false);
  ASSERT_TRUE(load(w, kSample + ".pcapng"));
  ASSERT_TRUE(w.analysis());
  EXPECT_EQ(size_t(w.view_of(int(Grouping::kHost))->model()->rowCount()), truth_set("host").size());
  EXPECT_EQ(size_t(w.view_of(int(Grouping::kStorage))->model()->rowCount()),
            truth_set("storage").size());
  // The first host is selected: its I/Os are listed and the first one's detail has a filter.
  GroupView* hosts = w.view_of(int(Grouping::kHost));
  EXPECT_GT(hosts->io_model()->rowCount(), 0);
  EXPECT_TRUE(hosts->detail()->filter().startsWith("frame.number in {"));
}

TEST(AnalyzerWindow, TopologyClicksFilterTheOtherViews) {
  MainWindow w(SettingOverrides::analyzer_defaults());
  w.set_interactive(false);
  ASSERT_TRUE(load(w, kSample + ".pcapng"));
  auto* topo = w.findChild<TopologyView*>();
  ASSERT_TRUE(topo);
  // A node per host and storage server: click (emit) the first host's.
  const std::string host = *truth_set("host").begin();
  QGraphicsItem* node = nullptr;
  for (QGraphicsItem* i : topo->scene()->items())
    if (i->data(0).toInt() == 1 && i->data(1).toString().toStdString() == host) node = i;
  ASSERT_TRUE(node) << "no node for host " << host;
  emit topo->filter_requested(QString::fromStdString(host));
  TablePanel* host_table = w.view_of(int(Grouping::kHost))->groups();
  EXPECT_EQ(host_table->proxy()->rowCount(), 1);
  TablePanel* pairs = w.view_of(int(Grouping::kPair))->groups();
  std::set<std::string> its_storage;
  {
    std::ifstream in(kSample + ".truth.json");
    const json truth = json::parse(in);
    for (const json& io : truth["ios"])
      if (io["host"] == host) its_storage.insert(io["storage"].get<std::string>());
  }
  EXPECT_EQ(size_t(pairs->proxy()->rowCount()), its_storage.size());  // that host's pairs
  // A host IP matches no storage row: the storage view stays unfiltered.
  EXPECT_EQ(size_t(w.view_of(int(Grouping::kStorage))->groups()->proxy()->rowCount()),
            truth_set("storage").size());
  emit topo->filter_requested(QString());
  EXPECT_EQ(size_t(host_table->proxy()->rowCount()), truth_set("host").size());
  // An edge opens its pair in the Pairs tab.
  const std::string storage = *truth_set("storage").rbegin();
  emit topo->pair_requested(QString::fromStdString(host), QString::fromStdString(storage));
  EXPECT_EQ(w.tabs()->currentWidget(), w.view_of(int(Grouping::kPair)));
  GroupView* pv = w.view_of(int(Grouping::kPair));
  int row = pv->groups()->current_source_row();
  ASSERT_GE(row, 0);
  EXPECT_EQ(pv->model()->key(row).host->to_string(), host);
  EXPECT_EQ(pv->model()->key(row).storage->to_string(), storage);
  // Its I/Os are exactly that pair's.
  for (int i = 0; i < pv->io_model()->rowCount(); ++i) {
    EXPECT_EQ(pv->io_model()->record(i)->host.to_string(), host);
    EXPECT_EQ(pv->io_model()->record(i)->storage.to_string(), storage);
  }
}

// Cancel in the status bar stops the worker: partial results, marked as such in the Overview.
TEST(AnalyzerWindow, CancelKeepsPartialResults) {
  const std::string cap = scratch() + "/analyzer_views_cancel.pcapng";
  std::string cmd = std::string(RDMATEL_SYNTH) +
                    " --scenario nvme-2point --ios 6000 --seed 9 --out " + cap + " >/dev/null";
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  std::ifstream in(scratch() + "/analyzer_views_cancel.truth.json");
  const size_t truth_ios = json::parse(in)["ios"].size();
  MainWindow w(SettingOverrides::analyzer_defaults());
  w.set_interactive(false);
  QPushButton* cancel = nullptr;
  for (QPushButton* b : w.findChildren<QPushButton*>())
    if (b->text() == "Cancel") cancel = b;
  ASSERT_TRUE(cancel);
  bool done = false;
  QEventLoop loop;
  QObject::connect(&w, &MainWindow::loaded, &loop, [&](bool) {
    done = true;
    loop.quit();
  });
  QTimer::singleShot(30000, &loop, &QEventLoop::quit);
  w.open_captures({QString::fromStdString(cap)});
  cancel->click();  // long before the engine has read the capture's ~90 000 packets
  if (!done) loop.exec();
  ASSERT_TRUE(done);
  ASSERT_TRUE(w.analysis());
  EXPECT_TRUE(w.analysis()->summary.cancelled);
  EXPECT_LT(w.analysis()->ios.size(), truth_ios);
  EXPECT_TRUE(overview_html(*w.analysis()).contains("cancelled"));
}

// Many observation points: the overview names 50, those with a role first, and sums up the rest
// (a capture of 4,000 interfaces listed every one).
TEST(AnalyzerViews, OverviewNamesFiftyPointsAndSumsUpTheRest) {
  Analysis a;
  for (int k = 0; k < 60; ++k) {
    PointInfo p;
    p.name = "p" + std::to_string(k);
    p.packets = uint64_t(k) + 1;
    if (k == 57) {
      p.role = PointRole::kCompute;
      p.compute_endpoints = 1;
    }
    a.points.push_back(p);
  }
  const QString h = overview_html(a);
  EXPECT_TRUE(h.contains("Observation points (60)"));
  std::set<int> named;
  for (int k = 0; k < 60; ++k)
    if (h.contains(QString("p%1 (").arg(k))) named.insert(k);
  std::set<int> expected = {57};
  for (int k = 0; k < 49; ++k) expected.insert(k);
  EXPECT_EQ(named, expected);
  // Not named: p49 .. p56, p58, p59, carrying 50 .. 57, 59 and 60 packets.
  EXPECT_TRUE(h.contains("10 more not listed: 10 of unknown role, 547 packets")) << h.toStdString();
}

TEST(AnalyzerWindow, AnUnreadableFileFailsAndShowsNoAnalysis) {
  MainWindow w(SettingOverrides::analyzer_defaults());
  w.set_interactive(false);
  EXPECT_FALSE(load(w, "/nonexistent/capture.pcapng"));
  EXPECT_FALSE(w.analysis());
}

int main(int argc, char** argv) {
  qputenv("QT_QPA_PLATFORM", "offscreen");
  QApplication app(argc, argv);
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
