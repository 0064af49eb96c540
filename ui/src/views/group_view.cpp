// SPDX-License-Identifier: GPL-2.0-or-later
#include "views/group_view.h"

#include <QSplitter>
#include <QVBoxLayout>

namespace rdmatel::ui {

GroupView::GroupView(Grouping g, QWidget* parent) : QWidget(parent) {
  model_ = new GroupStatsModel(g, this);
  io_model_ = new IoTableModel(this);
  const char* titles[] = {"NVMe I/O latency per host IP", "NVMe I/O latency per storage IP",
                          "NVMe I/O latency per host → storage pair"};
  groups_ = new TablePanel(titles[int(g)], model_, true, this);
  ios_ = new TablePanel("I/Os of the selected row", io_model_, true, this);
  detail_ = new IoDetailView(this);
  auto* bottom = new QSplitter(Qt::Horizontal, this);
  bottom->addWidget(ios_);
  bottom->addWidget(detail_);
  bottom->setSizes({700, 700});
  auto* split = new QSplitter(Qt::Vertical, this);
  split->addWidget(groups_);
  split->addWidget(bottom);
  split->setStretchFactor(0, 2);
  split->setStretchFactor(1, 3);
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(split);
  connect(groups_, &TablePanel::current_row_changed, this, &GroupView::group_selected);
  connect(ios_, &TablePanel::current_row_changed, this, &GroupView::io_selected);
}

void GroupView::set_analysis(std::shared_ptr<const Analysis> a) {
  analysis_ = std::move(a);
  model_->set_analysis(analysis_);
  group_selected(-1);
  groups_->select_first_row();
}

void GroupView::set_filter(const QString& text) {
  groups_->set_filter(text);
  groups_->select_first_row();
}

void GroupView::group_selected(int row) {
  if (row < 0 || row >= model_->rowCount()) {
    io_model_->set_selection(analysis_, std::nullopt, std::nullopt);
    detail_->set_io(analysis_, nullptr);
    return;
  }
  const GroupStatsModel::Key& k = model_->key(row);
  io_model_->set_selection(analysis_, k.host, k.storage);
  detail_->set_io(analysis_, nullptr);
  ios_->select_first_row();
}

void GroupView::io_selected(int row) {
  detail_->set_io(analysis_, io_model_->record(row));
}

}  // namespace rdmatel::ui
