// SPDX-License-Identifier: GPL-2.0-or-later
#include "models/record_table_model.h"

#include <cmath>

#include "models/cell_format.h"

namespace rdmatel::ui {

RecordTableModel::RecordTableModel(std::string channel, QObject* parent)
    : QAbstractTableModel(parent), channel_(std::move(channel)), schema_(find_schema(channel_)) {}

void RecordTableModel::set_analysis(std::shared_ptr<const Analysis> a) {
  beginResetModel();
  analysis_ = std::move(a);
  table_ = nullptr;
  if (analysis_) {
    auto it = analysis_->tables.find(channel_);
    if (it != analysis_->tables.end()) table_ = &it->second;
  }
  endResetModel();
}

int RecordTableModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() || !table_ ? 0 : int(table_->rows.size());
}
int RecordTableModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() || !schema_ ? 0 : int(schema_->columns.size());
}

QVariant RecordTableModel::data(const QModelIndex& index, int role) const {
  if (!table_ || !index.isValid() || size_t(index.row()) >= table_->rows.size()) return {};
  const std::vector<RecordCell>& row = table_->rows[size_t(index.row())];
  if (size_t(index.column()) >= row.size()) return {};
  const RecordCell& c = row[size_t(index.column())];
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
  if (o != Qt::Horizontal || !schema_ || size_t(section) >= schema_->columns.size()) return {};
  const Column& c = schema_->columns[size_t(section)];
  if (role == Qt::DisplayRole) return QString::fromStdString(column_header(c.name));
  if (role == Qt::ToolTipRole) return QString::fromUtf8(c.help);
  return {};
}

}  // namespace rdmatel::ui
