// SPDX-License-Identifier: GPL-2.0-or-later
#include "views/table_panel.h"

#include <QFileDialog>
#include <QHeaderView>
#include <QMenu>
#include <QMessageBox>
#include <QRegularExpression>
#include <QVBoxLayout>

#include "core/csv_export.h"
#include "models/cell_format.h"

namespace rdmatel::ui {

bool SortProxy::lessThan(const QModelIndex& left, const QModelIndex& right) const {
  QVariant l = left.data(kSortRole), r = right.data(kSortRole);
  if (!l.isValid() || !r.isValid()) return !l.isValid() && r.isValid();
  const bool ln = l.typeId() == QMetaType::Double, rn = r.typeId() == QMetaType::Double;
  if (ln && rn) return l.toDouble() < r.toDouble();
  if (ln != rn) return ln;  // numbers before text
  return QString::localeAwareCompare(l.toString(), r.toString()) < 0;
}

TablePanel::TablePanel(const QString& title, QAbstractItemModel* model, bool filter_box,
                       QWidget* parent)
    : QWidget(parent), title_(title) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  heading_ = new QLabel("<b>" + title.toHtmlEscaped() + "</b>", this);
  layout->addWidget(heading_);
  proxy_ = new SortProxy(this);
  proxy_->setSourceModel(model);
  proxy_->setFilterKeyColumn(-1);
  proxy_->setFilterCaseSensitivity(Qt::CaseInsensitive);
  if (filter_box) {
    filter_ = new QLineEdit(this);
    filter_->setPlaceholderText("Filter (any column, e.g. an IP address)");
    filter_->setClearButtonEnabled(true);
    connect(filter_, &QLineEdit::textChanged, proxy_, &QSortFilterProxyModel::setFilterFixedString);
    layout->addWidget(filter_);
  }
  view_ = new QTableView(this);
  view_->setModel(proxy_);
  view_->setSortingEnabled(true);
  view_->sortByColumn(-1, Qt::AscendingOrder);
  view_->setSelectionBehavior(QAbstractItemView::SelectRows);
  view_->setSelectionMode(QAbstractItemView::SingleSelection);
  view_->setAlternatingRowColors(true);
  view_->verticalHeader()->setVisible(false);
  view_->verticalHeader()->setDefaultSectionSize(view_->fontMetrics().height() + 6);
  view_->horizontalHeader()->setHighlightSections(false);
  view_->setContextMenuPolicy(Qt::CustomContextMenu);
  layout->addWidget(view_);
  connect(view_, &QWidget::customContextMenuRequested, this, [this](const QPoint& pos) {
    QMenu menu(this);
    menu.addAction("Export table as CSV…", this, &TablePanel::export_csv);
    menu.exec(view_->viewport()->mapToGlobal(pos));
  });
  connect(view_->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
          [this](const QModelIndex&, const QModelIndex&) {
            emit current_row_changed(current_source_row());
          });
  connect(model, &QAbstractItemModel::modelReset, this, &TablePanel::fit_columns);
}

void TablePanel::set_filter(const QString& text) {
  if (filter_)
    filter_->setText(text);
  else
    proxy_->setFilterFixedString(text);
}

int TablePanel::current_source_row() const {
  QModelIndex i = view_->currentIndex();
  return i.isValid() ? proxy_->mapToSource(i).row() : -1;
}

void TablePanel::select_first_row() {
  if (proxy_->rowCount() == 0) return;
  view_->setCurrentIndex(proxy_->index(0, 0));
  view_->selectRow(0);
}

void TablePanel::fit_columns() {
  view_->resizeColumnsToContents();
  // Long headers ("IOL1 p99 (µs)") set the width; cap very wide text columns.
  for (int c = 0; c < proxy_->columnCount(); ++c)
    if (view_->columnWidth(c) > 260) view_->setColumnWidth(c, 260);
}

void TablePanel::export_csv() {
  QString name = title_.toLower();
  name.replace(QRegularExpression("[^a-z0-9]+"), "-");
  QString path = QFileDialog::getSaveFileName(this, "Export " + title_ + " as CSV", name + ".csv",
                                              "CSV (*.csv)");
  if (path.isEmpty()) return;
  QString error;
  if (!write_csv(*proxy_, path, error)) QMessageBox::critical(this, "rdmatel-analyzer", error);
}

}  // namespace rdmatel::ui
