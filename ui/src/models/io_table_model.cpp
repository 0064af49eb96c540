// SPDX-License-Identifier: GPL-2.0-or-later
#include "models/io_table_model.h"

#include <algorithm>

#include "models/cell_format.h"
#include "rdmatel/names.h"

namespace rdmatel::ui {

IoTableModel::IoTableModel(QObject* parent) : QAbstractTableModel(parent) {}

void IoTableModel::set_selection(std::shared_ptr<const Analysis> a, std::optional<IpAddress> host,
                                 std::optional<IpAddress> storage) {
  beginResetModel();
  analysis_ = std::move(a);
  rows_.clear();
  if (analysis_ && (host || storage))
    for (const IoRecord& r : analysis_->ios)
      if ((!host || r.host == *host) && (!storage || r.storage == *storage)) rows_.push_back(&r);
  // The engine finishes I/Os out of order; list them as they were issued (ids follow commands).
  std::sort(rows_.begin(), rows_.end(),
            [](const IoRecord* a, const IoRecord* b) { return a->id < b->id; });
  endResetModel();
}

const IoRecord* IoTableModel::record(int row) const {
  return row >= 0 && size_t(row) < rows_.size() ? rows_[size_t(row)] : nullptr;
}

int IoTableModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : int(rows_.size());
}
int IoTableModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : kColumnCount;
}

QVariant IoTableModel::data(const QModelIndex& index, int role) const {
  const IoRecord* r = record(index.row());
  if (!r || !index.isValid()) return {};
  auto count = [role](uint64_t n) { return number_cell(double(n), QString::number(n), role); };
  auto text = [role](const QString& s) -> QVariant {
    return role == Qt::DisplayRole || role == kSortRole || role == kExportRole ? QVariant(s)
                                                                               : QVariant();
  };
  const IoMetrics m = io_metrics(*r);
  switch (index.column()) {
    case kId:
      return count(r->id);
    case kOp:
      return text(QString::fromLatin1(r->op));
    case kHost:
      return text(QString::fromStdString(r->host.to_string()));
    case kStorage:
      return text(QString::fromStdString(r->storage.to_string()));
    case kQpn:
      return number_cell(double(r->qpn), QString::fromStdString(qpn_text(r->qpn)), role);  // hex, as Wireshark shows it
    case kCid:
      return count(r->cid);
    case kLength:
      return count(r->length);
    case kComplete:
      return text(r->complete ? "yes" : "no");
    case kEnd:
      return text(QString::fromLatin1(io_end_name(r->end)));
    case kStatus:
      if (!r->status_known) return text(role == Qt::DisplayRole ? kAbsent : QString());
      return text(r->status ? QString("0x%1").arg(r->status, 4, 16, QChar('0'))
                            : QString("success"));
    case kDal:
      return us_cell(m.dal, role);
    case kDpl:
      return us_cell(m.dpl, role);
    case kRtt:
      return us_cell(m.rtt, role);
    case kIol1:
      return us_cell(m.iol1, role);
    case kIol2:
      return us_cell(m.iol2, role);
    case kIol:
      return us_cell(m.iol, role);
    case kComputePoint:
      return text(QString::fromStdString(analysis_->point_name(r->compute_point)));
    case kStoragePoint:
      return text(QString::fromStdString(analysis_->point_name(r->storage_point)));
    case kCmdFrame:
      return r->cmd_frame ? count(r->cmd_frame) : us_cell(std::nullopt, role);
    case kRspFrame:
      return r->rsp_frame ? count(r->rsp_frame) : us_cell(std::nullopt, role);
  }
  return {};
}

QVariant IoTableModel::headerData(int section, Qt::Orientation o, int role) const {
  if (o != Qt::Horizontal || role != Qt::DisplayRole) return {};
  static const char* const kHeaders[kColumnCount] = {"ID",
                                                     "Op",
                                                     "Host",
                                                     "Storage",
                                                     "DAL (µs)",
                                                     "DPL (µs)",
                                                     "RTT (µs)",
                                                     "IOL1 (µs)",
                                                     "IOL2 (µs)",
                                                     "IOL (µs)",
                                                     "Length (B)",
                                                     "CID",
                                                     "QPN",
                                                     "Complete",
                                                     "End",
                                                     "Status",
                                                     "Compute point",
                                                     "Storage point",
                                                     "Command frame",
                                                     "Completion frame"};
  return section >= 0 && section < kColumnCount ? QString::fromUtf8(kHeaders[section]) : QVariant();
}

}  // namespace rdmatel::ui
