// SPDX-License-Identifier: GPL-2.0-or-later
// A chart view with zoom and pan: drag a rectangle to zoom in, wheel to zoom at the cursor,
// middle-drag or Shift+drag to pan, arrow keys to pan, double-click or 0 to reset.
#pragma once

#include <QChartView>
#include <QPoint>

namespace rdmatel::ui {

class ZoomChartView : public QChartView {
  Q_OBJECT
 public:
  explicit ZoomChartView(QChart* chart, QWidget* parent = nullptr);

 protected:
  void wheelEvent(QWheelEvent* e) override;
  void mousePressEvent(QMouseEvent* e) override;
  void mouseMoveEvent(QMouseEvent* e) override;
  void mouseReleaseEvent(QMouseEvent* e) override;
  void mouseDoubleClickEvent(QMouseEvent* e) override;
  void keyPressEvent(QKeyEvent* e) override;

 private:
  bool panning_ = false;
  QPoint last_;
};

}  // namespace rdmatel::ui
