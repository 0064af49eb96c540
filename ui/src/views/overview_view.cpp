// SPDX-License-Identifier: GPL-2.0-or-later
#include "views/overview_view.h"

#include <QDir>
#include <QMessageBox>
#include <QPushButton>
#include <QVBoxLayout>

#include "core/wireshark_link.h"
#include "models/cell_format.h"
#include "rdmatel/point_summary.h"

namespace rdmatel::ui {
namespace {

// Observation points the overview names (analyze's default, cli/tables.h kPointsListed).
constexpr size_t kPointsNamed = 50;

QString role_text(const PointInfo& p) {
  if (p.configured != PointRole::kUnknown)
    return QString(point_role_name(p.configured)) + ", configured";
  QString t = point_role_name(p.role);
  if (p.compute_endpoints) t += QString(", compute side of %1 host(s)").arg(p.compute_endpoints);
  if (p.storage_endpoints)
    t += QString(", storage side of %1 storage server(s)").arg(p.storage_endpoints);
  return t;
}

// The group whose statistic is the largest: which host / storage / pair to look at first.
template <typename Map, typename Label>
QString worst(const Map& groups, IoMetric m, Label label) {
  const typename Map::mapped_type* best = nullptr;
  QString who;
  double top = -1;
  for (const auto& [k, g] : groups) {
    std::optional<double> v = stat_us(g[m], Stat::kP99);
    if (v && *v > top) {
      top = *v;
      best = &g;
      who = label(k);
    }
  }
  if (!best) return kAbsent;
  return QString("%1 µs at %2").arg(*stat_text((*best)[m], Stat::kP99), who.toHtmlEscaped());
}

}  // namespace

QString overview_html(const Analysis& a) {
  QString files;
  for (const std::string& p : a.paths)
    files += (files.isEmpty() ? "" : ", ") + QString::fromStdString(p);
  QString formats;
  for (const std::string& f : a.summary.formats)
    formats += (formats.isEmpty() ? "" : ", ") + QString::fromStdString(f);
  const IoGroupStats& t = a.io_report.total();
  uint64_t messages = 0, naks = 0, retrans = 0, packets = 0;
  for (const auto& [k, f] : a.flow_report.flows()) {
    messages += f.messages;
    naks += f.naks;
    retrans += f.retrans_packets;
    packets += f.packets;
  }
  QString h = "<h3>" + files.toHtmlEscaped() + "</h3><table cellspacing=4>";
  auto row = [&h](const QString& k, const QString& v) {
    h += "<tr><td><b>" + k + "</b></td><td>" + v + "</td></tr>";
  };
  row("Capture", QString("%1; %2 frames, %3 RoCEv2, %4 malformed; %5 s; read in %6 s%7")
                     .arg(formats.toHtmlEscaped())
                     .arg(a.stats.frames)
                     .arg(a.stats.roce)
                     .arg(a.stats.malformed)
                     .arg(a.span_seconds(), 0, 'f', 6)
                     .arg(a.load_seconds, 0, 'f', 2)
                     .arg(a.summary.cancelled ? " — <b>cancelled: partial results</b>" : ""));
  // As many as analyze names (those with a role first beyond that); the rest summed up.
  const PointSummary listing = summarize_points(a.points, kPointsNamed);
  QString points;
  for (size_t i = 0; i < a.points.size(); ++i) {
    if (!listing.named[i]) continue;
    const PointInfo& p = a.points[i];
    points += (points.isEmpty() ? "" : "<br>") + QString::fromStdString(p.name).toHtmlEscaped() +
              " (" + role_text(p).toHtmlEscaped() + ", " + QString::number(p.packets) + " packets" +
              (p.capture_dropped ? QString(", %1 dropped by the capture").arg(p.capture_dropped) : QString()) + ")";
  }
  if (listing.unnamed)
    points += QString("<br>%1 more not listed: %2 of unknown role, %3 packets")
                  .arg(listing.unnamed)
                  .arg(listing.unnamed_unknown)
                  .arg(listing.unnamed_packets);
  row(QString("Observation points (%1)").arg(a.points.size()), points.isEmpty() ? kAbsent : points);
  row("NVMe commands", QString("%1 (read %2, write %3, other %4), incomplete %5, error status %6")
                           .arg(t.ios)
                           .arg(t.reads)
                           .arg(t.writes)
                           .arg(t.others)
                           .arg(t.incomplete)
                           .arg(t.errors));
  row("Hosts / storage / pairs", QString("%1 / %2 / %3")
                                     .arg(a.io_report.by_host().size())
                                     .arg(a.io_report.by_storage().size())
                                     .arg(a.io_report.by_pair().size()));
  auto ip = [](const IpAddress& x) { return QString::fromStdString(x.to_string()); };
  auto pair = [&ip](const std::pair<IpAddress, IpAddress>& k) {
    return ip(k.first) + " → " + ip(k.second);
  };
  row("Worst RTT p99 (network)", worst(a.io_report.by_pair(), IoMetric::kRtt, pair));
  row("Worst DAL p99 (storage)", worst(a.io_report.by_storage(), IoMetric::kDal, ip));
  row("Worst DPL p99 (compute side)", worst(a.io_report.by_host(), IoMetric::kDpl, ip));
  row("Worst IOL1 p99 (as the host sees it)", worst(a.io_report.by_host(), IoMetric::kIol1, ip));
  row("RDMA messages", QString("%1 in %2 flow-points, %3 data packets, %4 retransmitted, %5 NAKs")
                           .arg(messages)
                           .arg(a.flow_report.flows().size())
                           .arg(packets)
                           .arg(retrans)
                           .arg(naks));
  if (a.stats.duplicates)
    row("Duplicates", QString("%1 packets given twice were counted once").arg(a.stats.duplicates));
  for (const std::string& e : a.summary.errors)
    row("Read error", QString::fromStdString(e).toHtmlEscaped());
  return h + "</table>";
}

OverviewView::OverviewView(QWidget* parent) : QWidget(parent) {
  auto* layout = new QVBoxLayout(this);
  headline_ = new QLabel("Open a capture (File ▸ Open, or rdmatel-analyzer CAPTURE…).", this);
  headline_->setTextFormat(Qt::RichText);
  headline_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  headline_->setAlignment(Qt::AlignTop | Qt::AlignLeft);
  headline_->setWordWrap(true);
  layout->addWidget(headline_);
  diagnosis_model_ = new DiagnosisModel(this);
  if (find_schema("diagnosis")) {
    verdict_ = new QLabel(this);
    verdict_->setTextFormat(Qt::RichText);
    verdict_->setWordWrap(true);
    verdict_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    verdict_->setFrameShape(QFrame::StyledPanel);
    verdict_->setMargin(6);
    layout->addWidget(verdict_);
    diagnosis_ = new TablePanel("Where the time goes, per scope (the engine's diagnosis)",
                                diagnosis_model_, true, this);
    layout->addWidget(diagnosis_, 2);
    auto* open = new QPushButton("Open the selected scope's worst frame in Wireshark", this);
    open->setToolTip("The command frame of the scope's I/O with the highest value of its metric");
    layout->addWidget(open, 0, Qt::AlignLeft);
    connect(open, &QPushButton::clicked, this, &OverviewView::open_worst_frame);
  } else {
    auto* none = new QLabel(
        "<b>Diagnosis</b>: not available in this build (the engine emits no diagnosis "
        "records). Use the worst p99s above and the Hosts, Storage and Pairs tabs.",
        this);
    none->setWordWrap(true);
    none->setFrameShape(QFrame::StyledPanel);
    none->setMargin(6);
    layout->addWidget(none);
  }
  layout->addWidget(new QLabel("<b>Warnings</b>", this));
  warnings_ = new QListWidget(this);
  warnings_->setMaximumHeight(120);
  layout->addWidget(warnings_);
}

void OverviewView::set_analysis(std::shared_ptr<const Analysis> a) {
  analysis_ = a;
  diagnosis_model_->set_analysis(a);
  warnings_->clear();
  if (!a) return;
  headline_->setText(overview_html(*a));
  if (verdict_) verdict_->setText(diagnosis_html(*a));
  if (diagnosis_) diagnosis_->select_first_row();
  for (const std::string& w : a->warnings) warnings_->addItem(QString::fromStdString(w));
  if (a->warnings.empty()) warnings_->addItem("none");
}

void OverviewView::open_worst_frame() {
  const DiagnosisRecord* r =
      diagnosis_ ? diagnosis_model_->record(diagnosis_->current_source_row()) : nullptr;
  if (!analysis_ || !r || !r->worst_frame) {
    QMessageBox::information(this, "rdmatel-analyzer", "Select a scope with a worst frame first.");
    return;
  }
  QString error;
  WiresharkCommand c = wireshark_command(
      *analysis_, QString("frame.number == %1").arg(r->worst_frame), QDir::tempPath());
  if (!open_in_wireshark(c, error)) QMessageBox::critical(this, "rdmatel-analyzer", error);
}

}  // namespace rdmatel::ui
