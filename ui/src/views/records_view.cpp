// SPDX-License-Identifier: GPL-2.0-or-later
#include "views/records_view.h"

#include <QSplitter>
#include <QVBoxLayout>

namespace rdmatel::ui {

RecordsView::RecordsView(const std::vector<std::pair<std::string, QString>>& channels,
                         QWidget* parent)
    : QWidget(parent) {
  auto* split = new QSplitter(Qt::Vertical, this);
  for (const auto& [channel, title] : channels) {
    auto* m = new RecordTableModel(channel, this);
    if (!m->schema()) {
      delete m;
      continue;
    }
    auto* t = new TablePanel(title, m, true, this);
    t->setToolTip(QString::fromUtf8(m->schema()->help));
    models_.push_back(m);
    tables_.push_back(t);
    split->addWidget(t);
  }
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(split);
}

void RecordsView::set_analysis(std::shared_ptr<const Analysis> a) {
  for (RecordTableModel* m : models_) m->set_analysis(a);
}

void RecordsView::set_filter(const QString& text) {
  for (TablePanel* t : tables_) t->set_filter(text);
}

}  // namespace rdmatel::ui
