// SPDX-License-Identifier: GPL-2.0-or-later
#include "views/topology_view.h"

#include <QGraphicsEllipseItem>
#include <QGraphicsLineItem>
#include <QGraphicsSimpleTextItem>
#include <QHBoxLayout>
#include <QLabel>
#include <QMouseEvent>
#include <QPushButton>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>

namespace rdmatel::ui {
namespace {

// Item data keys: what a click on the item means.
constexpr int kKindKey = 0, kHostKey = 1, kStorageKey = 2;
enum ItemKind { kNode = 1, kEdge = 2 };

class ClickableView : public QGraphicsView {
 public:
  ClickableView(QGraphicsScene* s, QWidget* parent, std::function<void(QGraphicsItem*)> on_click)
      : QGraphicsView(s, parent), on_click_(std::move(on_click)) {}

 protected:
  void mousePressEvent(QMouseEvent* e) override {
    // The label of a node or edge stands for it.
    QGraphicsItem* item = itemAt(e->pos());
    while (item && !item->data(kKindKey).isValid()) item = item->parentItem();
    on_click_(item);
    QGraphicsView::mousePressEvent(e);
  }
  void resizeEvent(QResizeEvent* e) override {
    QGraphicsView::resizeEvent(e);
    if (scene())
      fitInView(scene()->itemsBoundingRect().adjusted(-20, -20, 20, 20), Qt::KeepAspectRatio);
  }

 private:
  std::function<void(QGraphicsItem*)> on_click_;
};

}  // namespace

TopologyView::TopologyView(QWidget* parent) : QWidget(parent) {
  auto* layout = new QVBoxLayout(this);
  auto* bar = new QHBoxLayout;
  colour_by_ = new QComboBox(this);
  colour_by_->addItem("RTT p99", QVariantList{int(IoMetric::kRtt), int(Stat::kP99)});
  colour_by_->addItem("RTT avg", QVariantList{int(IoMetric::kRtt), int(Stat::kAvg)});
  colour_by_->addItem("DAL p99", QVariantList{int(IoMetric::kDal), int(Stat::kP99)});
  colour_by_->addItem("DAL avg", QVariantList{int(IoMetric::kDal), int(Stat::kAvg)});
  bar->addWidget(new QLabel("Edges coloured by", this));
  bar->addWidget(colour_by_);
  auto* clear = new QPushButton("Clear filters", this);
  bar->addWidget(clear);
  bar->addWidget(
      new QLabel("Click a host or storage server to filter the other views on it; click an edge to "
                 "open its pair.",
                 this),
      1);
  layout->addLayout(bar);
  scene_ = new QGraphicsScene(this);
  view_ = new ClickableView(scene_, this, [this](QGraphicsItem* i) { clicked(i); });
  view_->setRenderHint(QPainter::Antialiasing);
  layout->addWidget(view_, 1);
  connect(colour_by_, &QComboBox::currentIndexChanged, this, &TopologyView::rebuild);
  connect(clear, &QPushButton::clicked, this, [this] { emit filter_requested(QString()); });
}

void TopologyView::set_analysis(std::shared_ptr<const Analysis> a) {
  analysis_ = std::move(a);
  rebuild();
}

QColor TopologyView::scale_colour(double v, double lo, double hi) {
  double f = hi > lo ? std::clamp((v - lo) / (hi - lo), 0.0, 1.0) : 0.0;
  // Green (low) → yellow → red (high), in hue.
  return QColor::fromHsvF(float((1.0 - f) * 120.0 / 360.0), 0.85f, 0.85f);
}

void TopologyView::rebuild() {
  scene_->clear();
  if (!analysis_) return;
  const QVariantList sel = colour_by_->currentData().toList();
  const auto metric = IoMetric(sel.value(0).toInt());
  const auto stat = Stat(sel.value(1).toInt());
  const auto& hosts = analysis_->io_report.by_host();
  const auto& storages = analysis_->io_report.by_storage();
  const auto& pairs = analysis_->io_report.by_pair();
  const double row_h = 70, col_w = 520, r = 18;
  std::map<IpAddress, QPointF> at;
  auto place = [&](const auto& groups, double x) {
    double y = 0;
    double offset = (std::max(hosts.size(), storages.size()) - groups.size()) * row_h / 2;
    for (const auto& [ip, g] : groups) {
      at[ip] = QPointF(x, offset + y);
      y += row_h;
    }
  };
  place(hosts, 0);
  place(storages, col_w);
  // The colour scale spans the pairs' values.
  double lo = INFINITY, hi = -INFINITY;
  uint64_t most = 1;
  for (const auto& [k, g] : pairs) {
    if (std::optional<double> v = stat_us(g[metric], stat)) {
      lo = std::min(lo, *v);
      hi = std::max(hi, *v);
    }
    most = std::max(most, g.ios);
  }
  auto ip_text = [](const IpAddress& a) { return QString::fromStdString(a.to_string()); };
  for (const auto& [k, g] : pairs) {
    std::optional<double> v = stat_us(g[metric], stat);
    QColor c = v ? scale_colour(*v, lo, hi) : QColor(Qt::gray);
    double width = 2 + 6 * double(g.ios) / double(most);
    auto* line = scene_->addLine(QLineF(at[k.first] + QPointF(r, 0), at[k.second] - QPointF(r, 0)),
                                 QPen(c, width, v ? Qt::SolidLine : Qt::DashLine, Qt::RoundCap));
    line->setData(kKindKey, kEdge);
    line->setData(kHostKey, ip_text(k.first));
    line->setData(kStorageKey, ip_text(k.second));
    std::optional<QString> t = stat_text(g[metric], stat);
    QString label =
        QString("%1 %2: %3").arg(io_metric_name(metric), stat_name(stat), t ? *t + " µs" : kAbsent);
    line->setToolTip(QString("%1 → %2\n%3 I/Os\n%4")
                         .arg(ip_text(k.first), ip_text(k.second))
                         .arg(g.ios)
                         .arg(label));
    line->setZValue(0);
  }
  auto node = [&](const IpAddress& ip, const IoGroupStats& g, bool host) {
    QPointF p = at[ip];
    auto* e =
        scene_->addEllipse(QRectF(p.x() - r, p.y() - r, 2 * r, 2 * r), QPen(Qt::black, 1.5),
                           QBrush(host ? QColor(0x4c, 0x78, 0xa8) : QColor(0x54, 0xa2, 0x4b)));
    e->setZValue(2);
    e->setData(kKindKey, kNode);
    e->setData(host ? kHostKey : kStorageKey, ip_text(ip));
    e->setToolTip(QString("%1 %2: %3 I/Os").arg(host ? "host" : "storage", ip_text(ip)).arg(g.ios));
    auto* label = scene_->addSimpleText(QString("%1\n%2 I/Os").arg(ip_text(ip)).arg(g.ios));
    label->setParentItem(e);
    QRectF b = label->boundingRect();
    label->setPos(host ? p.x() - r - 8 - b.width() : p.x() + r + 8, p.y() - b.height() / 2);
  };
  for (const auto& [ip, g] : hosts) node(ip, g, true);
  for (const auto& [ip, g] : storages) node(ip, g, false);
  auto* h = scene_->addSimpleText("Hosts");
  h->setPos(-h->boundingRect().width() / 2, -60);
  auto* s = scene_->addSimpleText("Storage servers");
  s->setPos(col_w - s->boundingRect().width() / 2, -60);
  // Legend: the scale from the lowest to the highest pair value.
  double ly = std::max(hosts.size(), storages.size()) * row_h + 10;
  QLinearGradient grad(QPointF(col_w * 0.2, 0), QPointF(col_w * 0.8, 0));
  for (int i = 0; i <= 10; ++i) grad.setColorAt(i / 10.0, scale_colour(i / 10.0, 0, 1));
  scene_->addRect(QRectF(col_w * 0.2, ly, col_w * 0.6, 14), QPen(Qt::NoPen), QBrush(grad));
  QString unit = QString(" µs");
  auto* lo_t =
      scene_->addSimpleText(std::isfinite(lo) ? QString::number(lo, 'f', 3) + unit : kAbsent);
  lo_t->setPos(col_w * 0.2 - lo_t->boundingRect().width() - 6, ly - 1);
  auto* hi_t =
      scene_->addSimpleText(std::isfinite(hi) ? QString::number(hi, 'f', 3) + unit : kAbsent);
  hi_t->setPos(col_w * 0.8 + 6, ly - 1);
  auto* title = scene_->addSimpleText(
      QString("edge colour: pair %1 %2 (grey dashed: no samples); width: I/Os")
          .arg(io_metric_name(metric), stat_name(stat)));
  title->setPos(col_w / 2 - title->boundingRect().width() / 2, ly + 20);
  view_->fitInView(scene_->itemsBoundingRect().adjusted(-20, -20, 20, 20), Qt::KeepAspectRatio);
}

void TopologyView::clicked(QGraphicsItem* item) {
  if (!item) return;
  if (item->data(kKindKey).toInt() == kEdge)
    emit pair_requested(item->data(kHostKey).toString(), item->data(kStorageKey).toString());
  else if (item->data(kKindKey).toInt() == kNode)
    emit filter_requested(item->data(kHostKey).isValid() ? item->data(kHostKey).toString()
                                                         : item->data(kStorageKey).toString());
}

}  // namespace rdmatel::ui
