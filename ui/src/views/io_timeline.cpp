// SPDX-License-Identifier: GPL-2.0-or-later
#include "views/io_timeline.h"

#include <QPainter>
#include <algorithm>
#include <vector>

#include "rdmatel/format.h"

namespace rdmatel::ui {
namespace {

QString us(DurationNs ns) {
  return QString::fromStdString(format_us(ns)) + " µs";
}

enum Lane { kCompute, kNetwork, kStorage };

struct Segment {
  Lane lane;
  double from, to;  ///< ns on the drawing's axis
  QString label;
  QColor colour;
};

struct Tick {
  Lane lane;
  double at;
  int index;  ///< Ti
};

}  // namespace

IoTimeline::IoTimeline(QWidget* parent) : QWidget(parent) {
  setAutoFillBackground(true);
}

QColor IoTimeline::compute_colour() {
  return QColor(0x4c, 0x78, 0xa8);
}
QColor IoTimeline::network_colour() {
  return QColor(0xf5, 0x85, 0x18);
}
QColor IoTimeline::storage_colour() {
  return QColor(0x54, 0xa2, 0x4b);
}

void IoTimeline::set_io(const std::optional<IoRecord>& io) {
  io_ = io;
  update();
}

void IoTimeline::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.setRenderHint(QPainter::Antialiasing);
  p.fillRect(rect(), palette().base());
  if (!io_) {
    p.drawText(rect(), Qt::AlignCenter, "Select an I/O to see its T1–T7 timeline.");
    return;
  }
  const IoRecord& r = *io_;
  const IoTimes& t = r.t;
  const IoMetrics m = io_metrics(r);
  const bool write = r.is_write();
  // Which stamps each side takes (SPEC §4): the compute side T1, T5 (read) or T1, T4, T5, T7.
  std::vector<int> compute = write ? std::vector<int>{1, 4, 5, 7} : std::vector<int>{1, 5};
  std::vector<int> storage = write ? std::vector<int>{2, 3, 6} : std::vector<int>{2, 3, 4};
  auto origin = [&](const std::vector<int>& ids) -> std::optional<TimeNs> {
    for (int i : ids)
      if (t.has(i)) return t[i];
    return std::nullopt;
  };
  std::optional<TimeNs> c0 = origin(compute), s0 = origin(storage);
  // The storage lane starts half the RTT into the I/O; without an RTT, at the same place.
  const double s_off = m.rtt ? double(*m.rtt) / 2 : 0.0;
  auto pos = [&](int i) -> double {
    bool on_compute = std::find(compute.begin(), compute.end(), i) != compute.end();
    return on_compute ? double(t[i] - *c0) : double(t[i] - *s0) + s_off;
  };
  std::vector<Segment> segs;
  std::vector<Tick> ticks;
  for (int i = 1; i <= 7; ++i) {
    if (!t.has(i)) continue;
    bool on_compute = std::find(compute.begin(), compute.end(), i) != compute.end();
    bool on_storage = std::find(storage.begin(), storage.end(), i) != storage.end();
    if (on_compute)
      ticks.push_back({kCompute, pos(i), i});
    else if (on_storage)
      ticks.push_back({kStorage, pos(i), i});
  }
  auto seg = [&](Lane lane, int a, int b, const QString& name, QColor c) {
    if (t.has(a) && t.has(b))
      segs.push_back({lane, pos(a), pos(b), name + " " + us(t[b] - t[a]), c});
  };
  const QColor cc = compute_colour(), nc = network_colour(), sc = storage_colour();
  const int s_end = write ? 6 : 4, c_end = write ? 7 : 5;
  // Storage side: DAL, then the rest of IOL2 (data transfer and completion).
  seg(kStorage, 2, 3, "DAL", sc);
  seg(kStorage, 3, s_end, write ? "data fetch + completion" : "data + completion", sc.lighter(135));
  if (write) seg(kCompute, 4, 5, "DPL", cc);
  // The network's share of the I/O: IOL1 − IOL2, drawn as two even halves.
  if (m.rtt && t.has(1) && t.has(c_end)) {
    double half = double(*m.rtt) / 2;
    segs.push_back({kNetwork, 0, half, "RTT/2", nc});
    segs.push_back({kNetwork, pos(c_end) - half, pos(c_end), "RTT/2", nc});
  }
  double extent = 1;
  for (const Tick& k : ticks) extent = std::max(extent, k.at);
  for (const Segment& s : segs) extent = std::max(extent, s.to);

  const int left = 150, right = 20, top = 28, lane_h = 34;
  const double w = std::max(1, width() - left - right);
  auto x = [&](double ns) { return left + w * ns / extent; };
  const char* lane_names[3] = {"compute side", "network", "storage side"};
  QFontMetrics fm(font());
  // Title: the metrics the drawing shows.
  QString title = QString("%1 I/O, CID %2").arg(r.op).arg(r.cid);
  if (m.iol1) title += "   IOL1 " + us(*m.iol1);
  if (m.iol2) title += "   IOL2 " + us(*m.iol2);
  if (m.rtt) title += "   RTT " + us(*m.rtt);
  if (!m.iol1 && m.iol) title += "   IOL " + us(*m.iol);
  if (!r.complete) title += "   (incomplete: " + QString(io_end_name(r.end)) + ")";
  p.setPen(palette().text().color());
  p.drawText(QRect(8, 4, width() - 16, 20), Qt::AlignLeft | Qt::AlignVCenter, title);
  for (int lane = 0; lane < 3; ++lane) {
    int y = top + lane * lane_h;
    p.setPen(palette().text().color());
    p.drawText(QRect(8, y, left - 12, lane_h - 8), Qt::AlignLeft | Qt::AlignVCenter,
               lane_names[lane]);
    p.setPen(QPen(palette().mid().color(), 1, Qt::DotLine));
    p.drawLine(QPointF(left, y + (lane_h - 8) / 2.0), QPointF(left + w, y + (lane_h - 8) / 2.0));
  }
  // The lanes' spans (light), then the named segments.
  auto lane_span = [&](Lane lane, const std::vector<int>& ids, QColor c) {
    double lo = extent, hi = 0;
    bool any = false;
    for (int i : ids)
      if (t.has(i)) {
        lo = std::min(lo, pos(i));
        hi = std::max(hi, pos(i));
        any = true;
      }
    if (!any) return;
    int y = top + lane * lane_h;
    p.fillRect(QRectF(x(lo), y + 6, std::max(2.0, x(hi) - x(lo)), lane_h - 20), c.lighter(170));
  };
  lane_span(kCompute, compute, cc);
  lane_span(kStorage, storage, sc);
  QString small;  // labels of segments too short to carry them
  for (const Segment& s : segs) {
    int y = top + s.lane * lane_h;
    QRectF box(x(s.from), y + 2, std::max(2.0, x(s.to) - x(s.from)), lane_h - 12);
    p.fillRect(box, s.colour);
    p.setPen(Qt::white);
    const double lw = fm.horizontalAdvance(s.label);
    if (lw + 6 < box.width()) {
      p.drawText(box, Qt::AlignCenter, s.label);
      continue;
    }
    // Beside the segment: after it, or before it at the right edge, where nothing else is
    // drawn; otherwise in the list of small segments under the axis.
    p.setPen(palette().text().color());
    const double after = box.right() + 3, before = box.left() - 3 - lw;
    auto free = [&](double from, double to) {
      for (const Segment& o : segs)
        if (&o != &s && o.lane == s.lane && x(o.to) > from && x(o.from) < to) return false;
      return from >= left && to <= width() - 2;
    };
    if (free(after, after + lw))
      p.drawText(QPointF(after, box.center().y() + fm.ascent() / 2.0 - 1), s.label);
    else if (free(before, before + lw))
      p.drawText(QPointF(before, box.center().y() + fm.ascent() / 2.0 - 1), s.label);
    else
      small += (small.isEmpty() ? "" : "   ") + s.label;
  }
  // Stamps close together share one label ("T3 T4") rather than overprint each other.
  double last_x[3] = {-1e9, -1e9, -1e9};
  QString pending[3];
  double pending_x[3] = {0, 0, 0};
  auto flush = [&](int lane) {
    if (pending[lane].isEmpty()) return;
    p.drawText(QPointF(pending_x[lane], top + lane * lane_h + lane_h), pending[lane]);
    pending[lane].clear();
  };
  p.setPen(QPen(palette().text().color(), 1.5));
  for (const Tick& k : ticks) {
    int y = top + k.lane * lane_h;
    p.drawLine(QPointF(x(k.at), y), QPointF(x(k.at), y + lane_h - 10));
    QString name = QString("T%1").arg(k.index);
    if (x(k.at) - last_x[k.lane] < fm.horizontalAdvance("T0 ")) {
      pending[k.lane] += " " + name;
    } else {
      flush(k.lane);
      pending[k.lane] = name;
      pending_x[k.lane] = x(k.at) - fm.horizontalAdvance("T1") / 2.0;
    }
    last_x[k.lane] = x(k.at);
  }
  for (int lane = 0; lane < 3; ++lane) flush(lane);
  // Axis: µs from the compute side's command.
  int ay = top + 3 * lane_h + 8;
  p.setPen(palette().text().color());
  p.drawLine(QPointF(left, ay), QPointF(left + w, ay));
  for (int i = 0; i <= 4; ++i) {
    double ns = extent * i / 4;
    QString lab = QString::number(ns / 1000.0, 'f', ns / 1000.0 < 10 ? 2 : 1) + " µs";
    double px = x(ns);
    p.drawLine(QPointF(px, ay), QPointF(px, ay + 4));
    int lw = fm.horizontalAdvance(lab);
    p.drawText(
        QPointF(std::clamp(px - lw / 2.0, double(left), left + w - lw), ay + 4 + fm.ascent()), lab);
  }
  p.setPen(palette().placeholderText().color());
  QString note =
      "Each side on its own clock; the RTT's split between the two directions is drawn even.";
  if (!small.isEmpty()) note = "Short segments: " + small + ".   " + note;
  p.drawText(QRect(8, ay + 6 + fm.height(), width() - 16, fm.height() + 2), Qt::AlignLeft, note);
}

}  // namespace rdmatel::ui
