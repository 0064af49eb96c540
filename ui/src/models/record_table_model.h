// SPDX-License-Identifier: GPL-2.0-or-later
// A table of records of any kind, columns from the record's schema (congestion, PFC, clock
// offsets; diagnosis and alerts when the engine emits them).
#pragma once

#include <QAbstractTableModel>
#include <memory>

#include "core/analysis.h"

namespace rdmatel::ui {

class RecordTableModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  explicit RecordTableModel(std::string channel, QObject* parent = nullptr);
  void set_analysis(std::shared_ptr<const Analysis> a);
  /// The schema of the channel in this engine build (nullptr: the engine has no such records).
  const RecordSchema* schema() const { return schema_; }

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation o, int role = Qt::DisplayRole) const override;

 private:
  std::string channel_;
  const RecordSchema* schema_;
  std::shared_ptr<const Analysis> analysis_;
  const RecordTable* table_ = nullptr;
};

}  // namespace rdmatel::ui
