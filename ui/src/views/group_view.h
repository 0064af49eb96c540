// SPDX-License-Identifier: GPL-2.0-or-later
// Host, storage or pair view: the groups' table; selecting a row lists its I/Os; selecting an
// I/O shows its detail.
#pragma once

#include <QWidget>
#include <memory>

#include "models/group_stats_model.h"
#include "models/io_table_model.h"
#include "views/io_detail_view.h"
#include "views/table_panel.h"

namespace rdmatel::ui {

class GroupView : public QWidget {
  Q_OBJECT
 public:
  GroupView(Grouping g, QWidget* parent = nullptr);
  void set_analysis(std::shared_ptr<const Analysis> a);
  /// Filters the groups' table (the topology's clicks); selects the first row left.
  void set_filter(const QString& text);
  TablePanel* groups() const { return groups_; }
  TablePanel* ios() const { return ios_; }
  IoDetailView* detail() const { return detail_; }
  GroupStatsModel* model() const { return model_; }
  IoTableModel* io_model() const { return io_model_; }

 private:
  void group_selected(int row);
  void io_selected(int row);

  std::shared_ptr<const Analysis> analysis_;
  GroupStatsModel* model_;
  IoTableModel* io_model_;
  TablePanel* groups_;
  TablePanel* ios_;
  IoDetailView* detail_;
};

}  // namespace rdmatel::ui
