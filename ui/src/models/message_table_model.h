// SPDX-License-Identifier: GPL-2.0-or-later
// The RDMA messages of one flow at one point: one row per final message record.
#pragma once

#include <QAbstractTableModel>
#include <memory>
#include <vector>

#include "core/analysis.h"

namespace rdmatel::ui {

class MessageTableModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column {
    kKind,
    kFirstPsn,
    kLastPsn,
    kComplete,
    kPackets,
    kBytes,
    kRetransPackets,
    kRetransBytes,
    kNaks,
    kFct,
    kFet,
    kFnr,
    kFirstFrame,
    kLastFrame,
    kColumnCount
  };
  explicit MessageTableModel(QObject* parent = nullptr);
  /// Shows the messages of `flow` (nullptr: none).
  void set_flow(std::shared_ptr<const Analysis> a, const FlowKeyAtPoint* flow);
  const MessageRecord* record(int row) const;

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation o, int role = Qt::DisplayRole) const override;

 private:
  std::shared_ptr<const Analysis> analysis_;
  std::vector<const MessageRecord*> rows_;
};

}  // namespace rdmatel::ui
