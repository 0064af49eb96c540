// SPDX-License-Identifier: GPL-2.0-or-later
#include "views/zoom_chart_view.h"

#include <QKeyEvent>
#include <QMouseEvent>
#include <QWheelEvent>

namespace rdmatel::ui {

ZoomChartView::ZoomChartView(QChart* chart, QWidget* parent) : QChartView(chart, parent) {
  setRubberBand(QChartView::RectangleRubberBand);
  setRenderHint(QPainter::Antialiasing);
  setFocusPolicy(Qt::StrongFocus);
  setToolTip(
      "Drag to zoom, wheel to zoom at the cursor, middle-drag or Shift+drag to pan, double-click "
      "to reset");
}

void ZoomChartView::wheelEvent(QWheelEvent* e) {
  const double factor = e->angleDelta().y() > 0 ? 1.25 : 0.8;
  // Zoom around the cursor: a rectangle scaled about that point.
  QRectF area = chart()->plotArea();
  QPointF c = chart()->mapFromScene(mapToScene(e->position().toPoint()));
  QRectF r(c.x() - (c.x() - area.left()) / factor, c.y() - (c.y() - area.top()) / factor,
           area.width() / factor, area.height() / factor);
  chart()->zoomIn(r);
  e->accept();
}

void ZoomChartView::mousePressEvent(QMouseEvent* e) {
  if (e->button() == Qt::MiddleButton ||
      (e->button() == Qt::LeftButton && (e->modifiers() & Qt::ShiftModifier))) {
    panning_ = true;
    last_ = e->pos();
    setCursor(Qt::ClosedHandCursor);
    e->accept();
    return;
  }
  QChartView::mousePressEvent(e);
}

void ZoomChartView::mouseMoveEvent(QMouseEvent* e) {
  if (panning_) {
    QPoint d = e->pos() - last_;
    last_ = e->pos();
    chart()->scroll(-d.x(), d.y());
    e->accept();
    return;
  }
  QChartView::mouseMoveEvent(e);
}

void ZoomChartView::mouseReleaseEvent(QMouseEvent* e) {
  if (panning_) {
    panning_ = false;
    unsetCursor();
    e->accept();
    return;
  }
  QChartView::mouseReleaseEvent(e);
}

void ZoomChartView::mouseDoubleClickEvent(QMouseEvent* e) {
  chart()->zoomReset();
  e->accept();
}

void ZoomChartView::keyPressEvent(QKeyEvent* e) {
  switch (e->key()) {
    case Qt::Key_Left:
      chart()->scroll(-20, 0);
      break;
    case Qt::Key_Right:
      chart()->scroll(20, 0);
      break;
    case Qt::Key_Up:
      chart()->scroll(0, 20);
      break;
    case Qt::Key_Down:
      chart()->scroll(0, -20);
      break;
    case Qt::Key_Plus:
      chart()->zoom(1.25);
      break;
    case Qt::Key_Minus:
      chart()->zoom(0.8);
      break;
    case Qt::Key_0:
      chart()->zoomReset();
      break;
    default:
      QChartView::keyPressEvent(e);
      return;
  }
  e->accept();
}

}  // namespace rdmatel::ui
