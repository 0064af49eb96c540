// SPDX-License-Identifier: GPL-2.0-or-later
#include "views/screenshots.h"

#include <QDir>
#include <QEventLoop>
#include <QPixmap>
#include <QTimer>
#include <cstdio>

#include "models/flow_table_model.h"
#include "views/flows_view.h"
#include "views/group_view.h"
#include "views/main_window.h"
#include "views/settings_dialog.h"

namespace rdmatel::ui {
namespace {

// Lets layouts, charts and deferred updates settle before grabbing.
void settle(int ms) {
  QEventLoop loop;
  QTimer::singleShot(ms, &loop, &QEventLoop::quit);
  loop.exec();
}

bool save(QWidget& w, const QString& path) {
  QPixmap p = w.grab();
  if (p.isNull() || !p.save(path, "PNG")) {
    std::fprintf(stderr, "rdmatel-analyzer: cannot save %s\n", path.toLocal8Bit().constData());
    return false;
  }
  std::printf("%s\n", path.toLocal8Bit().constData());
  return true;
}

// Shows a complete read or write I/O with every stamp of its kind (the timeline of a data I/O
// says more than a Connect's).
void select_data_io(GroupView* g, const char* op) {
  TablePanel* ios = g->ios();
  int best = -1, best_stamps = 0;
  for (int r = 0; r < ios->proxy()->rowCount(); ++r) {
    QModelIndex src = ios->proxy()->mapToSource(ios->proxy()->index(r, 0));
    const IoRecord* io = g->io_model()->record(src.row());
    if (!io || !io->complete || QString(io->op) != op) continue;
    int stamps = 0;
    for (int i = 1; i <= 7; ++i) stamps += io->t.has(i);
    if (stamps > best_stamps) {
      best = r;
      best_stamps = stamps;
    }
  }
  if (best < 0) return;
  ios->view()->setCurrentIndex(ios->proxy()->index(best, 0));
  ios->view()->selectRow(best);
  ios->view()->scrollTo(ios->proxy()->index(best, 0));
}

}  // namespace

int save_screenshots(MainWindow& w, const QString& dir) {
  QDir().mkpath(dir);
  int written = 0;
  select_data_io(w.view_of(0), "write");
  select_data_io(w.view_of(1), "read");
  select_data_io(w.view_of(2), "read");
  // The busiest flow, whose throughput curve has a shape.
  if (TablePanel* flows = w.flows_view()->flows(); flows->proxy()->rowCount()) {
    flows->view()->sortByColumn(FlowTableModel::kBytes, Qt::DescendingOrder);
    flows->select_first_row();
  }
  for (int i = 0; i < w.tabs()->count(); ++i) {
    w.tabs()->setCurrentIndex(i);
    settle(400);
    QString name = w.tabs()->tabText(i).toLower().replace(' ', '-');
    written += save(w, QString("%1/%2-%3.png").arg(dir).arg(i + 1, 2, 10, QChar('0')).arg(name));
  }
  SettingsDialog d(SettingOverrides::analyzer_defaults(), &w);
  d.show();
  settle(300);
  written +=
      save(d, QString("%1/%2-settings.png").arg(dir).arg(w.tabs()->count() + 1, 2, 10, QChar('0')));
  d.close();
  return written;
}

}  // namespace rdmatel::ui
