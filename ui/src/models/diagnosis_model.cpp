// SPDX-License-Identifier: GPL-2.0-or-later
#include "models/diagnosis_model.h"

#include <algorithm>

#include "models/cell_format.h"
#include "rdmatel/names.h"

namespace rdmatel::ui {

DiagnosisModel::DiagnosisModel(QObject* parent) : QAbstractTableModel(parent) {}

void DiagnosisModel::set_analysis(std::shared_ptr<const Analysis> a) {
  beginResetModel();
  analysis_ = std::move(a);
  rows_.clear();
  if (analysis_)
    for (const DiagnosisRecord& r : analysis_->diagnosis) rows_.push_back(&r);
  // Findings by rank, then the rest in the engine's order.
  std::stable_sort(rows_.begin(), rows_.end(),
                   [](const DiagnosisRecord* x, const DiagnosisRecord* y) {
                     return (x->rank ? x->rank : UINT32_MAX) < (y->rank ? y->rank : UINT32_MAX);
                   });
  endResetModel();
}

const DiagnosisRecord* DiagnosisModel::record(int row) const {
  return row >= 0 && size_t(row) < rows_.size() ? rows_[size_t(row)] : nullptr;
}

int DiagnosisModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : int(rows_.size());
}
int DiagnosisModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : kColumnCount;
}

QVariant DiagnosisModel::data(const QModelIndex& index, int role) const {
  const DiagnosisRecord* r = record(index.row());
  if (!r || !index.isValid()) return {};
  auto count = [role](uint64_t n) { return number_cell(double(n), QString::number(n), role); };
  auto text = [role](const QString& s) -> QVariant {
    return role == Qt::DisplayRole || role == kSortRole || role == kExportRole ? QVariant(s)
                                                                               : QVariant();
  };
  auto percent = [role](const std::optional<double>& share) {
    return optional_cell(share ? std::optional<double>(*share * 100) : std::nullopt, 1, role);
  };
  switch (index.column()) {
    case kRank:
      return r->rank ? count(r->rank) : optional_cell(std::nullopt, 0, role);
    case kScope:
      return text(QString::fromStdString(diagnosis_scope_text(*r)));
    case kVerdict:
      return text(r->rank                   ? QString::fromUtf8(diagnosis_verdict_text(*r))
                  : r->explained_by.empty() ? QString()
                                            : "see " + QString::fromStdString(r->explained_by));
    case kIos:
      return count(r->ios);
    case kSplitIos:
      return count(r->split_ios);
    case kStorageShare:
      return percent(r->storage_share);
    case kNetworkShare:
      return percent(r->network_share);
    case kHostShare:
      return percent(r->host_share);
    case kMetric:
      return text(QString::fromLatin1(r->metric).toUpper());
    case kValue:
      return us_cell(r->value_ns, role);
    case kPeerMedian:
      return us_cell(r->peer_median_ns, role);
    case kEvidence:
      if (role == Qt::ToolTipRole) return QString::fromStdString(r->evidence);
      return text(QString::fromStdString(r->evidence));
    case kWorstFrame:
      return r->worst_frame ? count(r->worst_frame) : optional_cell(std::nullopt, 0, role);
  }
  return {};
}

QVariant DiagnosisModel::headerData(int section, Qt::Orientation o, int role) const {
  if (o != Qt::Horizontal) return {};
  if (role == Qt::ToolTipRole && section >= kStorageShare && section <= kHostShare)
    return "Share of IOL1 over the I/Os seen at both sides: storage = IOL2 minus DPL, network = "
           "RTT, host = DPL";
  if (role == Qt::ToolTipRole && section == kWorstFrame)
    return "Where to look: the command frame of the scope's I/O with the highest metric";
  if (role != Qt::DisplayRole) return {};
  static const char* const kHeaders[kColumnCount] = {"Rank",
                                                     "Scope",
                                                     "Verdict",
                                                     "I/Os",
                                                     "Split I/Os",
                                                     "Storage share (%)",
                                                     "Network share (%)",
                                                     "Host share (%)",
                                                     "Metric",
                                                     "Mean (µs)",
                                                     "Peer median (µs)",
                                                     "Evidence",
                                                     "Worst frame"};
  return section >= 0 && section < kColumnCount ? QString::fromUtf8(kHeaders[section]) : QVariant();
}

static QString io_diagnosis_html(const Analysis& a) {
  std::vector<const DiagnosisRecord*> ranked;
  bool split = false;
  for (const DiagnosisRecord& r : a.diagnosis) {
    if (r.rank) ranked.push_back(&r);
    split |= r.split_ios > 0;
  }
  std::sort(ranked.begin(), ranked.end(), [](auto* x, auto* y) { return x->rank < y->rank; });
  QString h = "<b>Diagnosis: who is to blame</b><br>";  // <ol> starts a block of its own
  if (a.diagnosis.empty()) return h + "No read or write I/O to diagnose in this capture.";
  if (!split)
    return h +
           "The I/Os were seen on one side only: their latency cannot be split into storage, "
           "network and host. "
           "Capture at the compute side and at the storage side (two points) for a diagnosis.";
  if (ranked.empty())
    return h +
           "Nothing stands out: no host, storage server or pair is slower than its peers in this "
           "capture.";
  h += "<ol>";
  for (const DiagnosisRecord* r : ranked) {
    const std::string scope = diagnosis_scope_text(*r);
    h += "<li><b>" + QString::fromStdString(scope).toHtmlEscaped() + ": " +
         QString::fromUtf8(diagnosis_verdict_text(*r)).toHtmlEscaped() + ".</b> " +
         QString::fromStdString(r->evidence).toHtmlEscaped() + ".";
    QString also;
    for (const DiagnosisRecord& e : a.diagnosis)
      if (e.explained_by == scope)
        also += (also.isEmpty() ? "" : ", ") +
                QString::fromStdString(diagnosis_scope_text(e)).toHtmlEscaped();
    if (!also.isEmpty()) h += " The same finding on " + also + " comes from it.";
    h += "</li>";
  }
  return h + "</ol>";
}

// The message flows' findings, as `analyze` lists them: a section of its own.
static QString flow_findings_html(const Analysis& a) {
  if (a.flow_report.flows().empty()) return "";
  QString h = "<br><b>Diagnosis: RDMA message flows</b>";  // <ol> starts a block of its own
  if (a.flow_findings.empty())
    return h + "<br>Nothing stands out: no flow retransmits 1 % of its packets or more, is CE-marked, told to "
               "slow down or paused by PFC.";
  static const std::string unknown = "?";
  const PointNamer name = [&](PointId p) -> const std::string& { return p < a.points.size() ? a.points[p].name : unknown; };
  const CaptureDrops dropped = [&](PointId p) { return p < a.points.size() ? a.points[p].capture_dropped : 0; };
  constexpr size_t kShown = 10;
  h += "<ol>";
  for (size_t i = 0; i < a.flow_findings.size() && i < kShown; ++i) {
    const FlowFinding& f = a.flow_findings[i];
    const std::string flow = f.src.to_string() + " > " + f.dst.to_string() + " " + qpn_text(f.dst_qpn);
    h += "<li><b>" + QString::fromStdString(flow + ": " + flow_finding_verdict(f, name, dropped)).toHtmlEscaped() + ".</b> " +
         QString::fromStdString(flow_finding_evidence(f, name)).toHtmlEscaped() + ".</li>";
  }
  h += "</ol>";
  if (a.flow_findings.size() > kShown)
    h += QString("(%1 of %2 flows shown; the Flows view has every flow.)").arg(kShown).arg(a.flow_findings.size());
  return h;
}

QString diagnosis_html(const Analysis& a) { return io_diagnosis_html(a) + flow_findings_html(a); }

}  // namespace rdmatel::ui
