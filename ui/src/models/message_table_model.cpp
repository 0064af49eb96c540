// SPDX-License-Identifier: GPL-2.0-or-later
#include "models/message_table_model.h"

#include "models/cell_format.h"

namespace rdmatel::ui {

MessageTableModel::MessageTableModel(QObject* parent) : QAbstractTableModel(parent) {}

void MessageTableModel::set_flow(std::shared_ptr<const Analysis> a, const FlowKeyAtPoint* flow) {
  beginResetModel();
  analysis_ = std::move(a);
  rows_.clear();
  if (analysis_ && flow)
    for (const MessageRecord& m : analysis_->messages)
      if (m.src == flow->src && m.dst == flow->dst && m.dst_qpn == flow->dst_qpn &&
          m.point == flow->point)
        rows_.push_back(&m);
  endResetModel();
}

const MessageRecord* MessageTableModel::record(int row) const {
  return row >= 0 && size_t(row) < rows_.size() ? rows_[size_t(row)] : nullptr;
}

int MessageTableModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : int(rows_.size());
}
int MessageTableModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : kColumnCount;
}

QVariant MessageTableModel::data(const QModelIndex& index, int role) const {
  const MessageRecord* m = record(index.row());
  if (!m || !index.isValid()) return {};
  auto count = [role](uint64_t n) { return number_cell(double(n), QString::number(n), role); };
  auto text = [role](const QString& s) -> QVariant {
    return role == Qt::DisplayRole || role == kSortRole || role == kExportRole ? QVariant(s)
                                                                               : QVariant();
  };
  switch (index.column()) {
    case kKind:
      return text(QString::fromLatin1(message_kind_name(m->kind)) +
                  (m->with_immediate ? " (imm)" : ""));
    case kFirstPsn:
      return count(m->first_psn);
    case kLastPsn:
      return count(m->last_psn);
    case kComplete:
      return text(m->complete ? "yes" : "no");
    case kPackets:
      return count(m->packets);
    case kBytes:
      return count(m->bytes);
    case kRetransPackets:
      return count(m->retrans_packets);
    case kRetransBytes:
      return count(m->retrans_bytes);
    case kNaks:
      return count(m->naks);
    case kFct:
      return us_cell(m->fct_ns(), role);
    case kFet: {
      std::optional<double> g = m->fet_bps();
      if (g) *g /= 1e6;
      return optional_cell(g, 3, role);
    }
    case kFnr:
      return optional_cell(m->fnr(), 6, role);
    case kFirstFrame:
      return count(m->first_frame);
    case kLastFrame:
      return count(m->last_frame);
  }
  return {};
}

QVariant MessageTableModel::headerData(int section, Qt::Orientation o, int role) const {
  if (o != Qt::Horizontal || role != Qt::DisplayRole) return {};
  static const char* const kHeaders[kColumnCount] = {
      "Kind",        "First PSN", "Last PSN",        "Complete",
      "Packets",     "Bytes",     "Retrans packets", "Retrans bytes",
      "NAKs",        "FCT (µs)",  "FET (Mb/s)",      "FNR",
      "First frame", "Last frame"};
  return section >= 0 && section < kColumnCount ? QString::fromUtf8(kHeaders[section]) : QVariant();
}

}  // namespace rdmatel::ui
