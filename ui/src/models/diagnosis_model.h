// SPDX-License-Identifier: GPL-2.0-or-later
// The engine's diagnosis: one row per scope (host, storage, pair, job) with its shares of the
// latency, the segment to blame and the evidence; findings (ranked) first. The verdict words are
// the engine's (diagnosis_verdict_text), as in `rdmatel analyze`.
#pragma once

#include <QAbstractTableModel>
#include <QString>
#include <memory>
#include <vector>

#include "core/analysis.h"

namespace rdmatel::ui {

class DiagnosisModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column {
    kRank,
    kScope,
    kVerdict,
    kIos,
    kSplitIos,
    kStorageShare,
    kNetworkShare,
    kHostShare,
    kMetric,
    kValue,
    kPeerMedian,
    kEvidence,
    kWorstFrame,
    kColumnCount
  };
  explicit DiagnosisModel(QObject* parent = nullptr);
  void set_analysis(std::shared_ptr<const Analysis> a);
  const DiagnosisRecord* record(int row) const;

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation o, int role = Qt::DisplayRole) const override;

 private:
  std::shared_ptr<const Analysis> analysis_;
  std::vector<const DiagnosisRecord*> rows_;
};

/// The findings as the CLI words them (HTML): numbered, each with its evidence; or why there is
/// none (one side seen only, nothing stands out); then the message flows' findings.
QString diagnosis_html(const Analysis& a);

}  // namespace rdmatel::ui
