// SPDX-License-Identifier: GPL-2.0-or-later
// One row per host IP, storage IP or host–storage pair: the engine's IoGroupStats (the numbers
// `rdmatel analyze` prints), with avg / p99 / max of DAL, DPL, RTT, IOL1, IOL2 in µs.
#pragma once

#include <QAbstractTableModel>
#include <memory>
#include <vector>

#include "core/analysis.h"
#include "models/cell_format.h"

namespace rdmatel::ui {

enum class Grouping { kHost, kStorage, kPair };
const char* grouping_name(Grouping g);  ///< "host", "storage", "pair"

class GroupStatsModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  explicit GroupStatsModel(Grouping g, QObject* parent = nullptr);

  void set_analysis(std::shared_ptr<const Analysis> a);
  Grouping grouping() const { return grouping_; }

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation o, int role = Qt::DisplayRole) const override;

  /// The group of a row: host and/or storage (the other is unset for host and storage rows).
  struct Key {
    std::optional<IpAddress> host, storage;
    QString label;  ///< "10.1.0.1", "10.1.0.1 → 10.2.0.1"
  };
  const Key& key(int row) const { return rows_[size_t(row)].key; }
  const IoGroupStats& stats(int row) const { return *rows_[size_t(row)].stats; }
  /// The row of a group, or -1.
  int row_of(const std::optional<IpAddress>& host, const std::optional<IpAddress>& storage) const;

  /// What a column shows, for tests and the trends: a count, or a metric's statistic.
  struct ColumnDef {
    enum Kind {
      kKeyHost,
      kKeyStorage,
      kIos,
      kReads,
      kWrites,
      kOthers,
      kIncomplete,
      kErrors,
      kDiagnosis,  ///< the engine's verdict on this scope ("#1 the storage is slow")
      kMetric
    } kind;
    IoMetric metric = IoMetric::kDal;
    Stat stat = Stat::kAvg;
  };
  const std::vector<ColumnDef>& columns() const { return columns_; }
  /// The column of a metric's statistic, or -1.
  int column_of(IoMetric m, Stat s) const;

 private:
  struct Row {
    Key key;
    const IoGroupStats* stats;
    const DiagnosisRecord* diagnosis = nullptr;
  };
  Grouping grouping_;
  std::shared_ptr<const Analysis> analysis_;
  std::vector<Row> rows_;
  std::vector<ColumnDef> columns_;
};

}  // namespace rdmatel::ui
