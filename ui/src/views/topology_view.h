// SPDX-License-Identifier: GPL-2.0-or-later
// Topology: hosts (left) and storage servers (right) as nodes, one edge per pair that carried
// I/Os, coloured by the pair's RTT or DAL (engine aggregates), with a legend. Clicking a node
// filters the other views on its IP; clicking an edge opens that pair.
#pragma once

#include <QComboBox>
#include <QGraphicsView>
#include <QWidget>
#include <memory>

#include "core/analysis.h"
#include "models/cell_format.h"

namespace rdmatel::ui {

class TopologyView : public QWidget {
  Q_OBJECT
 public:
  explicit TopologyView(QWidget* parent = nullptr);
  void set_analysis(std::shared_ptr<const Analysis> a);
  QGraphicsScene* scene() const { return scene_; }

  /// The colour of `v` on the legend's scale from `lo` to `hi` (green, yellow, red).
  static QColor scale_colour(double v, double lo, double hi);

 signals:
  /// A node was clicked: filter the other views on this IP (empty: clear the filters).
  void filter_requested(const QString& ip);
  void pair_requested(const QString& host, const QString& storage);

 private:
  void rebuild();
  void clicked(QGraphicsItem* item);

  std::shared_ptr<const Analysis> analysis_;
  QComboBox* colour_by_;
  QGraphicsScene* scene_;
  QGraphicsView* view_;
};

}  // namespace rdmatel::ui
