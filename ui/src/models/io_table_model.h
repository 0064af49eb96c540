// SPDX-License-Identifier: GPL-2.0-or-later
// The I/Os of a host, a storage server or a pair: one row per final I/O record, its metrics as
// the engine defines them (io_metrics), in µs.
#pragma once

#include <QAbstractTableModel>
#include <memory>
#include <optional>
#include <vector>

#include "core/analysis.h"

namespace rdmatel::ui {

class IoTableModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column {
    // The metrics first: what a user scans the list for.
    kId,
    kOp,
    kHost,
    kStorage,
    kDal,
    kDpl,
    kRtt,
    kIol1,
    kIol2,
    kIol,
    kLength,
    kCid,
    kQpn,
    kComplete,
    kEnd,
    kStatus,
    kComputePoint,
    kStoragePoint,
    kCmdFrame,
    kRspFrame,
    kColumnCount
  };
  explicit IoTableModel(QObject* parent = nullptr);

  /// Shows the I/Os of `host` and/or `storage` (both unset: none).
  void set_selection(std::shared_ptr<const Analysis> a, std::optional<IpAddress> host,
                     std::optional<IpAddress> storage);
  const IoRecord* record(int row) const;

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation o, int role = Qt::DisplayRole) const override;

 private:
  std::shared_ptr<const Analysis> analysis_;
  std::vector<const IoRecord*> rows_;
};

}  // namespace rdmatel::ui
