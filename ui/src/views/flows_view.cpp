// SPDX-License-Identifier: GPL-2.0-or-later
#include "views/flows_view.h"

#include <QChart>
#include <QLineSeries>
#include <QSplitter>
#include <QVBoxLayout>
#include <QValueAxis>

#include "models/trend_data.h"
#include "rdmatel/names.h"
#include "views/zoom_chart_view.h"

namespace rdmatel::ui {

FlowsView::FlowsView(QWidget* parent) : QWidget(parent) {
  model_ = new FlowTableModel(this);
  message_model_ = new MessageTableModel(this);
  flows_ = new TablePanel("RDMA messages per flow (source, destination, destination QPN) and point",
                          model_, true, this);
  messages_ = new TablePanel("Messages of the selected flow", message_model_, false, this);
  chart_ = new QChart;
  chart_->legend()->hide();
  chart_view_ = new ZoomChartView(chart_, this);
  auto* bottom = new QSplitter(Qt::Horizontal, this);
  bottom->addWidget(messages_);
  bottom->addWidget(chart_view_);
  bottom->setSizes({700, 700});  // the chart gets half, whatever the table's width
  auto* split = new QSplitter(Qt::Vertical, this);
  split->addWidget(flows_);
  split->addWidget(bottom);
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(split);
  connect(flows_, &TablePanel::current_row_changed, this, &FlowsView::flow_selected);
}

void FlowsView::set_analysis(std::shared_ptr<const Analysis> a) {
  analysis_ = std::move(a);
  model_->set_analysis(analysis_);
  flow_selected(-1);
  flows_->select_first_row();
}

void FlowsView::set_filter(const QString& text) {
  flows_->set_filter(text);
  flows_->select_first_row();
}

void FlowsView::flow_selected(int row) {
  chart_->removeAllSeries();
  for (QAbstractAxis* ax : chart_->axes()) {
    chart_->removeAxis(ax);
    delete ax;
  }
  const bool valid = analysis_ && row >= 0 && row < model_->rowCount();
  message_model_->set_flow(analysis_, valid ? &model_->key(row) : nullptr);
  if (!valid) {
    chart_->setTitle("Select a flow to see its throughput");
    return;
  }
  const FlowKeyAtPoint& k = model_->key(row);
  std::vector<QPointF> pts = flow_throughput(*analysis_, k);
  auto* line = new QLineSeries;
  line->setPointsVisible(true);
  double xmin = 0, xmax = 1e-6, ymax = 0;
  for (size_t i = 0; i < pts.size(); ++i) {
    line->append(pts[i]);
    if (i == 0 || pts[i].x() < xmin) xmin = pts[i].x();
    xmax = std::max(xmax, pts[i].x());
    ymax = std::max(ymax, pts[i].y());
  }
  chart_->addSeries(line);
  auto* x = new QValueAxis;
  x->setTitleText("period start (s)");
  x->setLabelFormat("%.3f");
  auto* y = new QValueAxis;
  y->setTitleText("effective throughput (Gb/s)");
  chart_->addAxis(x, Qt::AlignBottom);
  chart_->addAxis(y, Qt::AlignLeft);
  line->attachAxis(x);
  line->attachAxis(y);
  x->setRange(xmin, std::max(xmax, xmin + 1e-6));
  y->setRange(0, ymax > 0 ? ymax * 1.1 : 1);
  // Time ticks on round steps from 0 without stretching the range (nice numbers would
  // stretch 2.6 s to 3 s); the value axis rounded.
  x->setTickType(QValueAxis::TicksDynamic);
  x->setTickAnchor(0);
  x->setTickInterval(double(trend_interval(x->max() - x->min(), 6)) / 1e9);
  y->applyNiceNumbers();
  QString period = analysis_->flow_periods.empty()
                       ? QString()
                       : QString("effective bytes × 8 per period of %1 ms")
                             .arg(double(analysis_->flow_periods.front().period_ns) / 1e6);
  chart_->setTitle(
      QString("Throughput of %1 → %2 QP %3 at %4<br>%5")
          .arg(QString::fromStdString(k.src.to_string()), QString::fromStdString(k.dst.to_string()))
          .arg(QString::fromStdString(qpn_text(k.dst_qpn)))
          .arg(QString::fromStdString(analysis_->point_name(k.point)), period));
  messages_->select_first_row();
}

}  // namespace rdmatel::ui
