// SPDX-License-Identifier: GPL-2.0-or-later
#include "views/trends_view.h"

#include <QChart>
#include <QHBoxLayout>
#include <QLineSeries>
#include <QVBoxLayout>
#include <QValueAxis>

#include "rdmatel/format.h"
#include "views/zoom_chart_view.h"

namespace rdmatel::ui {

namespace {
QString interval_text(DurationNs ns) {
  if (ns >= kNsPerSec) return QString::number(double(ns) / 1e9) + " s";
  if (ns >= kNsPerMs) return QString::number(double(ns) / 1e6) + " ms";
  return QString::number(double(ns) / 1e3) + " µs";
}
}  // namespace

TrendsView::TrendsView(QWidget* parent) : QWidget(parent) {
  auto* layout = new QVBoxLayout(this);
  auto* bar = new QHBoxLayout;
  grouping_ = new QComboBox(this);
  grouping_->addItem("per host", int(Grouping::kHost));
  grouping_->addItem("per storage", int(Grouping::kStorage));
  grouping_->addItem("per pair", int(Grouping::kPair));
  metric_ = new QComboBox(this);
  for (IoMetric m : {IoMetric::kRtt, IoMetric::kDal, IoMetric::kDpl, IoMetric::kIol1,
                     IoMetric::kIol2, IoMetric::kIol})
    metric_->addItem(io_metric_name(m), int(m));
  stat_ = new QComboBox(this);
  for (Stat s : {Stat::kAvg, Stat::kP99, Stat::kMax}) stat_->addItem(stat_name(s), int(s));
  bar->addWidget(new QLabel("Metric", this));
  bar->addWidget(metric_);
  bar->addWidget(stat_);
  bar->addWidget(grouping_);
  info_ = new QLabel(this);
  bar->addWidget(info_, 1);
  layout->addLayout(bar);
  chart_ = new QChart;
  chart_->legend()->setAlignment(Qt::AlignBottom);
  view_ = new ZoomChartView(chart_, this);
  layout->addWidget(view_, 1);
  for (QComboBox* c : {grouping_, metric_, stat_})
    connect(c, &QComboBox::currentIndexChanged, this, &TrendsView::rebuild);
}

void TrendsView::set_analysis(std::shared_ptr<const Analysis> a) {
  analysis_ = std::move(a);
  rebuild();
}

void TrendsView::set_filter(const QString& text) {
  filter_ = text;
  rebuild();
}

void TrendsView::rebuild() {
  chart_->removeAllSeries();
  for (QAbstractAxis* ax : chart_->axes()) {
    chart_->removeAxis(ax);
    delete ax;
  }
  data_ = {};
  if (!analysis_) {
    info_->setText("No capture.");
    return;
  }
  const auto g = Grouping(grouping_->currentData().toInt());
  const auto m = IoMetric(metric_->currentData().toInt());
  const auto s = Stat(stat_->currentData().toInt());
  const DurationNs interval = trend_interval(analysis_->span_seconds());
  data_ = build_trend(*analysis_, g, m, s, interval, filter_.isEmpty() ? 8 : 1000);
  if (!filter_.isEmpty())
    std::erase_if(data_.series, [&](const TrendSeries& x) { return !x.name.contains(filter_); });
  if (data_.series.size() > 8) data_.series.resize(8);
  auto* x = new QValueAxis;
  x->setTitleText("time since the capture's first packet (s)");
  x->setLabelFormat("%.3f");
  auto* y = new QValueAxis;
  y->setTitleText(QString("%1 %2 (µs)").arg(io_metric_name(m), stat_name(s)));
  y->setLabelFormat("%.1f");
  chart_->addAxis(x, Qt::AlignBottom);
  chart_->addAxis(y, Qt::AlignLeft);
  double x0 = 0, x1 = analysis_->span_seconds(), ymax = 0;
  for (const TrendSeries& ts : data_.series) {
    auto* line = new QLineSeries;
    line->setName(ts.name);
    line->setPointsVisible(true);
    for (const QPointF& p : ts.points) {
      line->append(p);
      x0 = std::min(x0, p.x());
      x1 = std::max(x1, p.x() + double(data_.interval_ns) / 1e9);
      ymax = std::max(ymax, p.y());
    }
    chart_->addSeries(line);
    line->attachAxis(x);
    line->attachAxis(y);
  }
  x->setRange(x0, std::max(x1, x0 + 1e-6));
  y->setRange(0, ymax > 0 ? ymax * 1.1 : 1);
  // Round ticks (0, 0.5, 1.0 s rather than 0.657).
  // Time ticks on round steps from 0 without stretching the range (nice numbers would
  // stretch 2.6 s to 3 s); the value axis rounded.
  x->setTickType(QValueAxis::TicksDynamic);
  x->setTickAnchor(0);
  x->setTickInterval(double(trend_interval(x->max() - x->min(), 6)) / 1e9);
  y->applyNiceNumbers();
  chart_->setTitle(QString("%1 %2 per interval, %3")
                       .arg(io_metric_name(m), stat_name(s), grouping_->currentText()));
  QString shown =
      data_.groups > data_.series.size()
          ? QString("the %1 busiest of %2 groups").arg(data_.series.size()).arg(data_.groups)
          : QString("%1 group(s)").arg(data_.series.size());
  info_->setText(QString("interval %1 (about 60 over the capture); %2%3")
                     .arg(interval_text(data_.interval_ns), shown,
                          filter_.isEmpty() ? QString() : "; filtered on " + filter_));
}

}  // namespace rdmatel::ui
