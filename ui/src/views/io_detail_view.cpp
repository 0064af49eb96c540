// SPDX-License-Identifier: GPL-2.0-or-later
#include "views/io_detail_view.h"

#include <QDir>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QMessageBox>
#include <QSplitter>
#include <QVBoxLayout>

#include "core/wireshark_link.h"
#include "rdmatel/format.h"
#include "rdmatel/names.h"

namespace rdmatel::ui {
namespace {

// What Ti is for this kind of I/O (SPEC §4's table).
QString stamp_meaning(const IoRecord& r, int i) {
  static const char* const kRead[8] = {"",
                                       "command at compute side",
                                       "command at storage side",
                                       "first data at storage side",
                                       "completion at storage side",
                                       "completion at compute side",
                                       "",
                                       ""};
  static const char* const kWrite[8] = {"",
                                        "command at compute side",
                                        "command at storage side",
                                        "READ REQUEST at storage side",
                                        "READ REQUEST at compute side",
                                        "first READ RESPONSE at compute side",
                                        "completion at storage side",
                                        "completion at compute side"};
  return QString::fromLatin1(r.is_write() ? kWrite[i] : kRead[i]);
}

}  // namespace

IoDetailView::IoDetailView(QWidget* parent) : QWidget(parent) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  auto* heading = new QLabel("<b>I/O detail</b>", this);
  layout->addWidget(heading);
  summary_ = new QLabel("Select an I/O in the list.", this);
  summary_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  summary_->setWordWrap(true);
  layout->addWidget(summary_);
  timeline_ = new IoTimeline(this);
  layout->addWidget(timeline_);
  frames_ = new QTreeWidget(this);
  frames_->setHeaderLabels({"Stamp / frame", "What", "Time (µs after the side's first stamp)"});
  frames_->setRootIsDecorated(false);
  frames_->header()->setSectionResizeMode(QHeaderView::ResizeToContents);
  layout->addWidget(frames_, 1);
  auto* row = new QHBoxLayout;
  filter_ = new QLineEdit(this);
  filter_->setReadOnly(true);
  filter_->setPlaceholderText("Wireshark display filter of the selected I/O");
  open_ = new QPushButton("Open in Wireshark", this);
  open_->setEnabled(false);
  open_->setToolTip(
      "Starts Wireshark on the capture with a filter that shows exactly this I/O's frames");
  row->addWidget(filter_, 1);
  row->addWidget(open_);
  layout->addLayout(row);
  connect(open_, &QPushButton::clicked, this, &IoDetailView::open_in_wireshark);
}

void IoDetailView::set_io(std::shared_ptr<const Analysis> a, const IoRecord* io) {
  analysis_ = std::move(a);
  frames_->clear();
  if (!analysis_ || !io) {
    summary_->setText("Select an I/O in the list.");
    timeline_->set_io(std::nullopt);
    filter_->clear();
    open_->setEnabled(false);
    return;
  }
  const IoRecord& r = *io;
  QString status = !r.status_known ? "not seen"
                   : r.status      ? QString("0x%1").arg(r.status, 4, 16, QChar('0'))
                                   : "success";
  summary_->setText(
      QString(
          "<b>%1</b> %2 → %3 &nbsp; QPN %4 (host QPN %5) &nbsp; CID %6 &nbsp; %7 bytes%8 &nbsp; "
          "status %9 &nbsp; ended: %10<br>compute side: %11 &nbsp; storage side: %12 &nbsp; "
          "seen at %13 point(s)")
          .arg(r.op, QString::fromStdString(r.host.to_string()),
               QString::fromStdString(r.storage.to_string()))
          .arg(QString::fromStdString(qpn_text(r.qpn)))
          .arg(r.host_qpn ? QString::fromStdString(qpn_text(*r.host_qpn)) : QString("unknown"))
          .arg(r.cid)
          .arg(r.length)
          .arg(r.in_capsule ? " (in-capsule data)" : "")
          .arg(status, io_end_name(r.end))
          .arg(QString::fromStdString(analysis_->point_name(r.compute_point)),
               QString::fromStdString(analysis_->point_name(r.storage_point)))
          .arg(r.points));
  timeline_->set_io(r);
  // Stamps, each relative to the first stamp of its side (one clock per side).
  const bool write = r.is_write();
  auto first_of = [&](std::initializer_list<int> ids) -> std::optional<TimeNs> {
    for (int i : ids)
      if (r.t.has(i)) return r.t[i];
    return std::nullopt;
  };
  std::optional<TimeNs> c0 = write ? first_of({1, 4, 5, 7}) : first_of({1, 5});
  std::optional<TimeNs> s0 = write ? first_of({2, 3, 6}) : first_of({2, 3, 4});
  for (int i = 1; i <= 7; ++i) {
    if (!r.t.has(i)) continue;
    bool compute_side = write ? (i == 1 || i == 4 || i == 5 || i == 7) : (i == 1 || i == 5);
    std::optional<TimeNs> base = compute_side ? c0 : s0;
    auto* item = new QTreeWidgetItem(frames_);
    item->setText(0, QString("T%1").arg(i));
    item->setText(1, stamp_meaning(r, i));
    item->setText(2, base ? QString::fromStdString(format_us(r.t[i] - *base)) : QString());
  }
  auto it = analysis_->io_frames.find(r.id);
  if (it != analysis_->io_frames.end())
    for (const IoFrame& f : it->second) {
      auto* item = new QTreeWidgetItem(frames_);
      item->setText(0, QString("frame %1").arg(f.frame));
      item->setText(1, QString::fromStdString(f.stage).replace('_', ' ') +
                           (f.copy ? " (repeated copy)" : ""));
    }
  filter_->setText(io_display_filter(*analysis_, r));
  filter_->setCursorPosition(0);
  open_->setEnabled(!filter_->text().isEmpty());
}

void IoDetailView::open_in_wireshark() {
  if (!analysis_) return;
  WiresharkCommand c = wireshark_command(*analysis_, filter_->text(), QDir::tempPath());
  QString error;
  if (!rdmatel::ui::open_in_wireshark(c, error))
    QMessageBox::critical(this, "rdmatel-analyzer", error);
}

}  // namespace rdmatel::ui
