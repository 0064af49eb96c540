// SPDX-License-Identifier: GPL-2.0-or-later
#include "models/group_stats_model.h"

namespace rdmatel::ui {

const char* grouping_name(Grouping g) {
  switch (g) {
    case Grouping::kHost:
      return "host";
    case Grouping::kStorage:
      return "storage";
    case Grouping::kPair:
      return "pair";
  }
  return "";
}

GroupStatsModel::GroupStatsModel(Grouping g, QObject* parent)
    : QAbstractTableModel(parent), grouping_(g) {
  set_analysis(nullptr);
}

void GroupStatsModel::set_analysis(std::shared_ptr<const Analysis> a) {
  beginResetModel();
  analysis_ = std::move(a);
  rows_.clear();
  columns_.clear();
  using C = ColumnDef;
  if (grouping_ != Grouping::kStorage) columns_.push_back({C::kKeyHost});
  if (grouping_ != Grouping::kHost) columns_.push_back({C::kKeyStorage});
  for (C::Kind k : {C::kIos, C::kReads, C::kWrites, C::kOthers, C::kIncomplete, C::kErrors})
    columns_.push_back({k});
  if (find_schema("diagnosis")) columns_.push_back({C::kDiagnosis});
  std::vector<IoMetric> metrics{IoMetric::kDal, IoMetric::kDpl, IoMetric::kRtt, IoMetric::kIol1,
                                IoMetric::kIol2};
  if (analysis_) {
    // IOL equals IOL1 wherever roles are known; its columns appear only when some I/Os were
    // measured at one point only (as in the CLI's report).
    const IoGroupStats& t = analysis_->io_report.total();
    if (t[IoMetric::kIol].count() != t[IoMetric::kIol1].count()) metrics.push_back(IoMetric::kIol);
    auto label = [](const IpAddress& ip) { return QString::fromStdString(ip.to_string()); };
    switch (grouping_) {
      case Grouping::kHost:
        for (const auto& [ip, g] : analysis_->io_report.by_host())
          rows_.push_back({{ip, std::nullopt, label(ip)}, &g});
        break;
      case Grouping::kStorage:
        for (const auto& [ip, g] : analysis_->io_report.by_storage())
          rows_.push_back({{std::nullopt, ip, label(ip)}, &g});
        break;
      case Grouping::kPair:
        for (const auto& [k, g] : analysis_->io_report.by_pair())
          rows_.push_back({{k.first, k.second, label(k.first) + " → " + label(k.second)}, &g});
        break;
    }
  }
  // Each row's diagnosis record: the scope of the same kind and IPs.
  const DiagnosisScope scope = grouping_ == Grouping::kHost      ? DiagnosisScope::kHost
                               : grouping_ == Grouping::kStorage ? DiagnosisScope::kStorage
                                                                 : DiagnosisScope::kPair;
  if (analysis_)
    for (Row& r : rows_)
      for (const DiagnosisRecord& d : analysis_->diagnosis)
        if (d.scope == scope && d.host == r.key.host && d.storage == r.key.storage)
          r.diagnosis = &d;
  for (IoMetric m : metrics)
    for (Stat s : {Stat::kAvg, Stat::kP99, Stat::kMax}) columns_.push_back({C::kMetric, m, s});
  endResetModel();
}

int GroupStatsModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : int(rows_.size());
}
int GroupStatsModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : int(columns_.size());
}

int GroupStatsModel::row_of(const std::optional<IpAddress>& host,
                            const std::optional<IpAddress>& storage) const {
  for (size_t i = 0; i < rows_.size(); ++i)
    if (rows_[i].key.host == host && rows_[i].key.storage == storage) return int(i);
  return -1;
}

int GroupStatsModel::column_of(IoMetric m, Stat s) const {
  for (size_t i = 0; i < columns_.size(); ++i)
    if (columns_[i].kind == ColumnDef::kMetric && columns_[i].metric == m && columns_[i].stat == s)
      return int(i);
  return -1;
}

QVariant GroupStatsModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || size_t(index.row()) >= rows_.size() ||
      size_t(index.column()) >= columns_.size())
    return {};
  const Row& r = rows_[size_t(index.row())];
  const ColumnDef& c = columns_[size_t(index.column())];
  const IoGroupStats& g = *r.stats;
  auto count = [role](uint64_t n) { return number_cell(double(n), QString::number(n), role); };
  switch (c.kind) {
    case ColumnDef::kKeyHost:
    case ColumnDef::kKeyStorage: {
      if (role != Qt::DisplayRole && role != kSortRole && role != kExportRole) return {};
      const std::optional<IpAddress>& ip =
          c.kind == ColumnDef::kKeyHost ? r.key.host : r.key.storage;
      return ip ? QString::fromStdString(ip->to_string()) : QString();
    }
    case ColumnDef::kIos:
      return count(g.reads + g.writes);  // as in the CLI and Wireshark: other commands apart
    case ColumnDef::kReads:
      return count(g.reads);
    case ColumnDef::kWrites:
      return count(g.writes);
    case ColumnDef::kOthers:
      return count(g.others);
    case ColumnDef::kIncomplete:
      return count(g.incomplete);
    case ColumnDef::kErrors:
      return count(g.errors);
    case ColumnDef::kDiagnosis: {
      if (role != Qt::DisplayRole && role != kSortRole && role != kExportRole &&
          role != Qt::ToolTipRole)
        return {};
      const DiagnosisRecord* d = r.diagnosis;
      if (role == Qt::ToolTipRole) return d ? QString::fromStdString(d->evidence) : QVariant();
      // Findings sort first, by rank; then the scopes another finding explains.
      if (role == kSortRole) return d && d->rank ? QVariant(double(d->rank)) : QVariant();
      if (!d) return role == Qt::DisplayRole ? kAbsent : QString();
      if (d->rank)
        return QString("#%1 %2").arg(d->rank).arg(QString::fromUtf8(diagnosis_verdict_text(*d)));
      if (!d->explained_by.empty()) return "see " + QString::fromStdString(d->explained_by);
      return QString("nothing stands out");
    }
    case ColumnDef::kMetric:
      return stat_cell(g[c.metric], c.stat, role);
  }
  return {};
}

QVariant GroupStatsModel::headerData(int section, Qt::Orientation o, int role) const {
  if (o != Qt::Horizontal || size_t(section) >= columns_.size()) return {};
  const ColumnDef& c = columns_[size_t(section)];
  if (role == Qt::ToolTipRole) {
    switch (c.kind) {
      case ColumnDef::kIos:
        return "Every NVMe command tracked (read, write and others), complete or not";
      case ColumnDef::kMetric:
        return QString(
                   "%1 of %2 over the read and write I/Os that have it (engine aggregation, µs)")
            .arg(stat_name(c.stat), io_metric_name(c.metric));
      default:
        return {};
    }
  }
  if (role != Qt::DisplayRole) return {};
  switch (c.kind) {
    case ColumnDef::kKeyHost:
      return "Host";
    case ColumnDef::kKeyStorage:
      return "Storage";
    case ColumnDef::kIos:
      return "I/Os";
    case ColumnDef::kReads:
      return "Reads";
    case ColumnDef::kWrites:
      return "Writes";
    case ColumnDef::kOthers:
      return "Other";
    case ColumnDef::kIncomplete:
      return "Incomplete";
    case ColumnDef::kErrors:
      return "Errors";
    case ColumnDef::kDiagnosis:
      return "Diagnosis";
    case ColumnDef::kMetric:
      return metric_header(c.metric, c.stat);
  }
  return {};
}

}  // namespace rdmatel::ui
