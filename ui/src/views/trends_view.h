// SPDX-License-Identifier: GPL-2.0-or-later
// Trends: a latency metric's statistic over time, one line per host, storage server or pair.
#pragma once

#include <QComboBox>
#include <QLabel>
#include <QWidget>
#include <memory>

#include "core/analysis.h"
#include "models/trend_data.h"

class QChart;

namespace rdmatel::ui {

class ZoomChartView;

class TrendsView : public QWidget {
  Q_OBJECT
 public:
  explicit TrendsView(QWidget* parent = nullptr);
  void set_analysis(std::shared_ptr<const Analysis> a);
  /// Shows only the series whose name contains `text` (the topology's clicks); empty: all.
  void set_filter(const QString& text);
  /// What is drawn now (for tests and the screenshot walk).
  const TrendData& data() const { return data_; }

 private:
  void rebuild();

  std::shared_ptr<const Analysis> analysis_;
  QComboBox* grouping_;
  QComboBox* metric_;
  QComboBox* stat_;
  QLabel* info_;
  QChart* chart_;
  ZoomChartView* view_;
  QString filter_;
  TrendData data_;
};

}  // namespace rdmatel::ui
