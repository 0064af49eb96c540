// SPDX-License-Identifier: GPL-2.0-or-later
#include "models/flow_table_model.h"

#include <map>

#include "models/cell_format.h"
#include "rdmatel/names.h"

namespace rdmatel::ui {

FlowTableModel::FlowTableModel(QObject* parent) : QAbstractTableModel(parent) {}

void FlowTableModel::set_analysis(std::shared_ptr<const Analysis> a) {
  beginResetModel();
  analysis_ = std::move(a);
  rows_.clear();
  if (analysis_)
    for (const auto& [k, f] : analysis_->flow_report.flows()) rows_.emplace_back(&k, &f);
  congestion_.assign(rows_.size(), nullptr);
  if (analysis_) {
    std::map<FlowKeyAtPoint, const EcnRecord*> by_key;
    for (const EcnRecord& c : analysis_->congestion)
      by_key[{c.src, c.dst, c.dst_qpn, c.point}] = &c;
    for (size_t i = 0; i < rows_.size(); ++i) {
      auto it = by_key.find(*rows_[i].first);
      if (it != by_key.end()) congestion_[i] = it->second;
    }
  }
  endResetModel();
}

int FlowTableModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : int(rows_.size());
}
int FlowTableModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : kColumnCount;
}

QVariant FlowTableModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || size_t(index.row()) >= rows_.size()) return {};
  const FlowKeyAtPoint& k = *rows_[size_t(index.row())].first;
  const FlowStats& f = *rows_[size_t(index.row())].second;
  auto count = [role](uint64_t n) { return number_cell(double(n), QString::number(n), role); };
  auto text = [role](const QString& s) -> QVariant {
    return role == Qt::DisplayRole || role == kSortRole || role == kExportRole ? QVariant(s)
                                                                               : QVariant();
  };
  switch (index.column()) {
    case kSrc:
      return text(QString::fromStdString(k.src.to_string()));
    case kDst:
      return text(QString::fromStdString(k.dst.to_string()));
    case kQpn:
      return number_cell(double(k.dst_qpn), QString::fromStdString(qpn_text(k.dst_qpn)), role);  // hex, as Wireshark shows it
    case kPoint:
      return text(QString::fromStdString(analysis_->point_name(k.point)));
    case kMessages:
      return count(f.messages);
    case kPartial:
      return count(f.partial);
    case kPackets:
      return count(f.packets);
    case kBytes:
      return count(f.bytes);
    case kRetransPackets:
      return count(f.retrans_packets);
    case kRetransBytes:
      return count(f.retrans_bytes);
    case kNaks:
      return count(f.naks);
    case kFctAvg:
      return stat_cell(f.fct, Stat::kAvg, role);
    case kFctP99:
      return stat_cell(f.fct, Stat::kP99, role);
    case kFctMax:
      return stat_cell(f.fct, Stat::kMax, role);
    case kFet: {
      std::optional<double> g = f.fet_bps();
      if (g) *g /= 1e6;
      return optional_cell(g, 3, role);
    }
    case kFnr:
      return optional_cell(f.fnr(), 6, role);
    case kCe:
    case kCeRatio:
    case kCnpsReceived: {
      const EcnRecord* c = congestion_[size_t(index.row())];
      if (!c) return optional_cell(std::nullopt, 0, role);
      if (index.column() == kCe) return count(c->ce_packets);
      if (index.column() == kCeRatio) return optional_cell(c->ce_ratio(), 6, role);
      return c->cnps_received ? count(*c->cnps_received) : optional_cell(std::nullopt, 0, role);
    }
  }
  return {};
}

QVariant FlowTableModel::headerData(int section, Qt::Orientation o, int role) const {
  if (o != Qt::Horizontal) return {};
  if (role == Qt::ToolTipRole && section == kFet)
    return "Effective bytes of the multi-packet messages × 8 / the sum of their FCTs";
  if (role == Qt::ToolTipRole && section == kFnr)
    return "NAKs / original (not retransmitted) packets";
  if (role == Qt::ToolTipRole && section == kCe)
    return "Packets marked ECN congestion experienced at the point";
  if (role == Qt::ToolTipRole && section == kCeRatio) return "CE-marked / ECN-capable packets";
  if (role == Qt::ToolTipRole && section == kCnpsReceived)
    return "CNPs on the reverse direction of the queue pair: how often the sender was told to slow "
           "down";
  if (role != Qt::DisplayRole) return {};
  static const char* const kHeaders[kColumnCount] = {
      "Source",  "Destination",  "Dest QPN",     "Point",           "Messages",
      "Partial", "Packets",      "Bytes",        "Retrans packets", "Retrans bytes",
      "NAKs",    "FCT avg (µs)", "FCT p99 (µs)", "FCT max (µs)",    "FET (Mb/s)",
      "FNR",     "ECN CE",       "CE ratio",     "CNPs received"};
  return section >= 0 && section < kColumnCount ? QString::fromUtf8(kHeaders[section]) : QVariant();
}

}  // namespace rdmatel::ui
