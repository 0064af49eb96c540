// SPDX-License-Identifier: GPL-2.0-or-later
// One I/O's T1–T7 drawn as compute, network and storage segments (SPEC §4). Each lane is on its
// own point's clock; the storage lane is placed half the RTT after the compute side's command
// (clocks are never compared, so the split of the RTT between the two directions is drawn
// even and labelled as such).
#pragma once

#include <QWidget>
#include <optional>

#include "rdmatel/records.h"

namespace rdmatel::ui {

class IoTimeline : public QWidget {
  Q_OBJECT
 public:
  explicit IoTimeline(QWidget* parent = nullptr);
  void set_io(const std::optional<IoRecord>& io);
  QSize sizeHint() const override { return {720, 190}; }
  QSize minimumSizeHint() const override { return {400, 170}; }

  /// Segment colours (also the legend).
  static QColor compute_colour();
  static QColor network_colour();
  static QColor storage_colour();

 protected:
  void paintEvent(QPaintEvent*) override;

 private:
  std::optional<IoRecord> io_;
};

}  // namespace rdmatel::ui
