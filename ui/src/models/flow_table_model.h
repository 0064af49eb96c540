// SPDX-License-Identifier: GPL-2.0-or-later
// One row per RDMA flow (source IP, destination IP, destination QPN) and observation point: the
// engine's FlowStats (messages, FCT, FET, FNR, NAKs), as `rdmatel analyze` prints them.
#pragma once

#include <QAbstractTableModel>
#include <memory>
#include <vector>

#include "core/analysis.h"

namespace rdmatel::ui {

class FlowTableModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column {
    kSrc,
    kDst,
    kQpn,
    kPoint,
    kMessages,
    kPartial,
    kPackets,
    kBytes,
    kRetransPackets,
    kRetransBytes,
    kNaks,
    kFctAvg,
    kFctP99,
    kFctMax,
    kFet,
    kFnr,
    // The congestion component's record of the same flow and point (ECN, CNPs).
    kCe,
    kCeRatio,
    kCnpsReceived,
    kColumnCount
  };
  explicit FlowTableModel(QObject* parent = nullptr);
  void set_analysis(std::shared_ptr<const Analysis> a);
  const FlowKeyAtPoint& key(int row) const { return *rows_[size_t(row)].first; }
  const FlowStats& stats(int row) const { return *rows_[size_t(row)].second; }
  const EcnRecord* congestion(int row) const { return congestion_[size_t(row)]; }

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation o, int role = Qt::DisplayRole) const override;

 private:
  std::shared_ptr<const Analysis> analysis_;
  std::vector<std::pair<const FlowKeyAtPoint*, const FlowStats*>> rows_;
  std::vector<const EcnRecord*> congestion_;  ///< per row, nullptr without a record
};

}  // namespace rdmatel::ui
