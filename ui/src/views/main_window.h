// SPDX-License-Identifier: GPL-2.0-or-later
// The analyzer's window: File ▸ Open (several files are one capture), the views as tabs, the
// run's progress and Cancel in the status bar, errors as dialogs with the CLI's sentences.
#pragma once

#include <QLabel>
#include <QMainWindow>
#include <QProgressBar>
#include <QPushButton>
#include <QStringList>
#include <QTabWidget>
#include <memory>
#include <vector>

#include "core/analysis.h"
#include "core/session_worker.h"

namespace rdmatel::ui {

class OverviewView;
class GroupView;
class TrendsView;
class FlowsView;
class TopologyView;
class RecordsView;
class TablePanel;

class MainWindow : public QMainWindow {
  Q_OBJECT
 public:
  explicit MainWindow(SettingOverrides settings, QWidget* parent = nullptr);

  void open_captures(const QStringList& paths);
  /// Dialogs for errors (off in the screenshot walk, which reports on stderr instead).
  void set_interactive(bool on) { interactive_ = on; }

  QTabWidget* tabs() const { return tabs_; }
  std::shared_ptr<const Analysis> analysis() const { return analysis_; }
  /// The tables of a tab (for CSV export), the first being its main one.
  std::vector<TablePanel*> tables_of(QWidget* tab) const;
  GroupView* view_of(int grouping) const { return groups_[grouping]; }
  FlowsView* flows_view() const { return flows_; }

 signals:
  /// A run ended: `ok` false when it could not start (the error was shown or printed).
  void loaded(bool ok);

 private:
  void open_dialog();
  void export_csv();
  void edit_settings();
  void on_finished(std::shared_ptr<const Analysis> a);
  void on_failed(const QString& message);
  void filter_on(const QString& ip);
  void open_pair(const QString& host, const QString& storage);
  void show_running(bool running);

  SettingOverrides settings_;
  QStringList paths_;
  bool interactive_ = true;
  SessionWorker* worker_;
  std::shared_ptr<const Analysis> analysis_;
  QTabWidget* tabs_;
  OverviewView* overview_;
  GroupView* groups_[3];
  TrendsView* trends_;
  FlowsView* flows_;
  TopologyView* topology_;
  RecordsView* congestion_;
  RecordsView* alerts_;
  QLabel* status_;
  QProgressBar* progress_;
  QPushButton* cancel_;
};

}  // namespace rdmatel::ui
