// SPDX-License-Identifier: GPL-2.0-or-later
#include "views/main_window.h"

#include <QApplication>
#include <QFileDialog>
#include <QMenuBar>
#include <QMessageBox>
#include <QStatusBar>
#include <cstdio>

#include "views/flows_view.h"
#include "views/group_view.h"
#include "views/overview_view.h"
#include "views/records_view.h"
#include "views/settings_dialog.h"
#include "views/table_panel.h"
#include "views/topology_view.h"
#include "views/trends_view.h"

namespace rdmatel::ui {

MainWindow::MainWindow(SettingOverrides settings, QWidget* parent)
    : QMainWindow(parent), settings_(std::move(settings)) {
  setWindowTitle("rdmatel-analyzer");
  worker_ = new SessionWorker(this);
  tabs_ = new QTabWidget(this);
  overview_ = new OverviewView(this);
  tabs_->addTab(overview_, "Overview");
  const char* names[] = {"Hosts", "Storage", "Pairs"};
  for (int g = 0; g < 3; ++g) {
    groups_[g] = new GroupView(Grouping(g), this);
    tabs_->addTab(groups_[g], names[g]);
  }
  trends_ = new TrendsView(this);
  tabs_->addTab(trends_, "Trends");
  flows_ = new FlowsView(this);
  tabs_->addTab(flows_, "Flows");
  topology_ = new TopologyView(this);
  tabs_->addTab(topology_, "Topology");
  congestion_ =
      new RecordsView({{"congestion:ecn", "ECN and CNPs per flow and point"},
                       {"congestion:cnp", "CNPs per IP pair and point"},
                       {"congestion:pfc", "PFC per point and priority"},
                       {"paths", "Hops per flow: the same packets at two points (delays raw unless offsets are given)"},
                       {"offsets", "Clock offsets between points (no metric needs them)"}},
                      this);
  tabs_->addTab(congestion_, "Congestion");
  alerts_ = new RecordsView({{"alerts", "Alerts"}}, this);
  if (!alerts_->empty()) tabs_->addTab(alerts_, "Alerts");
  setCentralWidget(tabs_);

  QMenu* file = menuBar()->addMenu("&File");
  file->addAction("&Open…", QKeySequence::Open, this, &MainWindow::open_dialog);
  file->addAction("&Reload", QKeySequence::Refresh, this, [this] { open_captures(paths_); });
  file->addAction("&Export table as CSV…", QKeySequence("Ctrl+E"), this, &MainWindow::export_csv);
  file->addSeparator();
  file->addAction("&Quit", QKeySequence::Quit, qApp, &QApplication::quit);
  QMenu* analysis = menuBar()->addMenu("&Analysis");
  analysis->addAction("&Settings…", this, &MainWindow::edit_settings);

  status_ = new QLabel("Open a capture: File ▸ Open.", this);
  progress_ = new QProgressBar(this);
  progress_->setRange(0, 1000);
  progress_->setMaximumWidth(260);
  cancel_ = new QPushButton("Cancel", this);
  statusBar()->addWidget(status_, 1);
  statusBar()->addPermanentWidget(progress_);
  statusBar()->addPermanentWidget(cancel_);
  show_running(false);

  connect(cancel_, &QPushButton::clicked, worker_, &SessionWorker::cancel);
  connect(worker_, &SessionWorker::progress, this, [this](double f, quint64 frames) {
    if (f < 0)
      progress_->setRange(0, 0);  // unknown total: a busy indicator
    else
      progress_->setValue(int(f * 1000));
    status_->setText(QString("Reading: %1 packets…").arg(frames));
  });
  connect(worker_, &SessionWorker::finished, this, &MainWindow::on_finished);
  connect(worker_, &SessionWorker::failed, this, &MainWindow::on_failed);
  connect(topology_, &TopologyView::filter_requested, this, &MainWindow::filter_on);
  connect(topology_, &TopologyView::pair_requested, this, &MainWindow::open_pair);
  resize(1400, 900);
}

void MainWindow::show_running(bool running) {
  progress_->setVisible(running);
  cancel_->setVisible(running);
  if (running) {
    progress_->setRange(0, 1000);
    progress_->setValue(0);
  }
}

void MainWindow::open_captures(const QStringList& paths) {
  if (paths.isEmpty() || worker_->running()) return;
  paths_ = paths;
  status_->setText("Reading " + paths.join(", ") + "…");
  show_running(true);
  worker_->start(paths, settings_);
}

void MainWindow::open_dialog() {
  QStringList files = QFileDialog::getOpenFileNames(
      this, "Open captures (several files are merged into one capture)", QString(),
      "Captures (*.pcapng *.pcap *.pcapng.gz *.pcap.gz *.cap *.erf);;All files (*)");
  open_captures(files);
}

void MainWindow::on_failed(const QString& message) {
  show_running(false);
  status_->setText("Could not read the capture.");
  if (interactive_)
    QMessageBox::critical(this, "rdmatel-analyzer", message);
  else
    std::fprintf(stderr, "rdmatel-analyzer: %s\n", message.toLocal8Bit().constData());
  emit loaded(false);
}

void MainWindow::on_finished(std::shared_ptr<const Analysis> a) {
  show_running(false);
  analysis_ = a;
  setWindowTitle("rdmatel-analyzer — " + paths_.join(", "));
  overview_->set_analysis(a);
  for (GroupView* g : groups_) g->set_analysis(a);
  trends_->set_analysis(a);
  flows_->set_analysis(a);
  topology_->set_analysis(a);
  congestion_->set_analysis(a);
  alerts_->set_analysis(a);
  status_->setText(QString("%1 frames, %2 NVMe commands, %3 RDMA messages, read in %4 s%5")
                       .arg(a->stats.frames)
                       .arg(a->ios.size())
                       .arg(a->messages.size())
                       .arg(a->load_seconds, 0, 'f', 2)
                       .arg(a->summary.cancelled ? " — cancelled: partial results" : ""));
  // Read errors come after the results of what could be read, as in the CLI.
  if (!a->summary.errors.empty()) {
    QString text;
    for (const std::string& e : a->summary.errors) text += QString::fromStdString(e) + "\n";
    if (interactive_)
      QMessageBox::warning(this, "rdmatel-analyzer", text.trimmed());
    else
      std::fprintf(stderr, "rdmatel-analyzer: error: %s", text.toLocal8Bit().constData());
  }
  emit loaded(true);
}

std::vector<TablePanel*> MainWindow::tables_of(QWidget* tab) const {
  if (tab == overview_)
    return overview_->diagnosis() ? std::vector<TablePanel*>{overview_->diagnosis()}
                                  : std::vector<TablePanel*>{};
  for (GroupView* g : groups_)
    if (tab == g) return {g->groups(), g->ios()};
  if (tab == flows_) return {flows_->flows(), flows_->messages()};
  if (tab == congestion_) return congestion_->tables();
  if (tab == alerts_) return alerts_->tables();
  return {};
}

void MainWindow::export_csv() {
  std::vector<TablePanel*> tables = tables_of(tabs_->currentWidget());
  if (tables.empty()) {
    QMessageBox::information(this, "rdmatel-analyzer",
                             "This view has no table: choose a tab with a table.");
    return;
  }
  // The table that has the focus, else the tab's main table.
  TablePanel* t = tables.front();
  for (TablePanel* x : tables)
    if (x->view()->hasFocus()) t = x;
  t->export_csv();
}

void MainWindow::edit_settings() {
  SettingsDialog d(settings_, this);
  if (d.exec() != QDialog::Accepted) return;
  settings_ = d.overrides();
  if (!paths_.isEmpty()) open_captures(paths_);
}

void MainWindow::filter_on(const QString& ip) {
  // Each view keeps the filter only where it matches something (a host IP matches no row of
  // the storage view).
  auto apply = [&ip](TablePanel* t) {
    t->set_filter(ip);
    if (t->proxy()->rowCount() == 0) t->set_filter(QString());
    t->select_first_row();
  };
  for (GroupView* g : groups_) apply(g->groups());
  apply(flows_->flows());
  trends_->set_filter(ip);
  status_->setText(ip.isEmpty() ? "Filters cleared." : "Views filtered on " + ip + ".");
}

void MainWindow::open_pair(const QString& host, const QString& storage) {
  IpAddress h, s;
  if (!IpAddress::parse(host.toStdString(), h) || !IpAddress::parse(storage.toStdString(), s))
    return;
  GroupView* pairs = groups_[int(Grouping::kPair)];
  pairs->groups()->set_filter(QString());
  int row = pairs->model()->row_of(h, s);
  if (row < 0) return;
  QModelIndex i = pairs->groups()->proxy()->mapFromSource(pairs->model()->index(row, 0));
  pairs->groups()->view()->setCurrentIndex(i);
  pairs->groups()->view()->selectRow(i.row());
  tabs_->setCurrentWidget(pairs);
}

}  // namespace rdmatel::ui
