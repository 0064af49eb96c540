// SPDX-License-Identifier: GPL-2.0-or-later
// The detail of one I/O: its timeline, its stamps and frames, and "Open in Wireshark" with the
// filter that shows exactly its frames.
#pragma once

#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QTreeWidget>
#include <QWidget>
#include <memory>

#include "core/analysis.h"
#include "views/io_timeline.h"

namespace rdmatel::ui {

class IoDetailView : public QWidget {
  Q_OBJECT
 public:
  explicit IoDetailView(QWidget* parent = nullptr);
  void set_io(std::shared_ptr<const Analysis> a, const IoRecord* io);
  QString filter() const { return filter_->text(); }

 private:
  void open_in_wireshark();

  std::shared_ptr<const Analysis> analysis_;
  QLabel* summary_;
  IoTimeline* timeline_;
  QTreeWidget* frames_;
  QLineEdit* filter_;
  QPushButton* open_;
};

}  // namespace rdmatel::ui
