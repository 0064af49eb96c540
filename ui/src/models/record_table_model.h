// SPDX-License-Identifier: GPL-2.0-or-later
// A table of records of any kind, columns from the record's schema (congestion, PFC, clock
// offsets; diagnosis and alerts when the engine emits them).
#pragma once

#include <QAbstractTableModel>
#include <memory>
#include <vector>

#include "core/analysis.h"

namespace rdmatel::ui {

class RecordTableModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  /// `table`: a channel ("offsets") or a channel and a kind of its records ("congestion:pfc").
  explicit RecordTableModel(std::string table, QObject* parent = nullptr);
  void set_analysis(std::shared_ptr<const Analysis> a);
  /// The schema of the channel in this engine build (nullptr: the engine has no such records).
  const RecordSchema* schema() const { return schema_; }
  /// The record field shown in column `section` ("pause_us").
  const char* column_name(int section) const { return schema_->columns[columns_[size_t(section)]].name; }

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation o, int role = Qt::DisplayRole) const override;

 private:
  std::string table_name_;
  const RecordSchema* schema_;
  std::shared_ptr<const Analysis> analysis_;
  const RecordTable* table_ = nullptr;
  /// The schema's columns shown: those some row has a value in (a kind's records leave the
  /// other kinds' columns absent), every column while there is no row.
  std::vector<size_t> columns_;
};

}  // namespace rdmatel::ui
