// SPDX-License-Identifier: GPL-2.0-or-later
#include "models/record_table_model.h"

#include <cmath>

#include "models/cell_format.h"

namespace rdmatel::ui {

RecordTableModel::RecordTableModel(std::string table, QObject* parent)
    : QAbstractTableModel(parent),
      table_name_(std::move(table)),
      schema_(find_schema(table_name_.substr(0, table_name_.find(':')))) {
  if (schema_)
    for (size_t c = 0; c < schema_->columns.size(); ++c) columns_.push_back(c);
}

void RecordTableModel::set_analysis(std::shared_ptr<const Analysis> a) {
  beginResetModel();
  analysis_ = std::move(a);
  table_ = nullptr;
  if (analysis_) {
    auto it = analysis_->tables.find(table_name_);
    if (it != analysis_->tables.end()) table_ = &it->second;
  }
  columns_.clear();
  for (size_t c = 0; schema_ && c < schema_->columns.size(); ++c) {
    bool shown = !table_ || table_->rows.empty();
    for (size_t r = 0; table_ && !shown && r < table_->rows.size(); ++r)
      shown = c < table_->rows[r].size() && table_->rows[r][c].present;
    if (shown) columns_.push_back(c);
  }
  endResetModel();
}

int RecordTableModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() || !table_ ? 0 : int(table_->rows.size());
}
int RecordTableModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : int(columns_.size());
}

QVariant RecordTableModel::data(const QModelIndex& index, int role) const {
  if (!table_ || !index.isValid() || size_t(index.row()) >= table_->rows.size()) return {};
  const std::vector<RecordCell>& row = table_->rows[size_t(index.row())];
  if (size_t(index.column()) >= columns_.size() || columns_[size_t(index.column())] >= row.size()) return {};
  const RecordCell& c = row[columns_[size_t(index.column())]];
  const bool numeric = !std::isnan(c.number);
  switch (role) {
    case Qt::DisplayRole:
      return c.present ? QString::fromStdString(c.text) : kAbsent;
    case kExportRole:
      return QString::fromStdString(c.text);
    case kSortRole:
      return !c.present ? QVariant()
             : numeric  ? QVariant(c.number)
                        : QVariant(QString::fromStdString(c.text));
    case Qt::TextAlignmentRole:
      return numeric ? int(Qt::AlignRight | Qt::AlignVCenter) : QVariant();
    default:
      return {};
  }
}

QVariant RecordTableModel::headerData(int section, Qt::Orientation o, int role) const {
  if (o != Qt::Horizontal || !schema_ || size_t(section) >= columns_.size()) return {};
  const Column& c = schema_->columns[columns_[size_t(section)]];
  if (role == Qt::DisplayRole) return QString::fromStdString(column_header(c.name));
  if (role == Qt::ToolTipRole) return QString::fromUtf8(c.help);
  return {};
}

}  // namespace rdmatel::ui
