// SPDX-License-Identifier: GPL-2.0-or-later
// Flows: one row per RDMA flow and point (FCT, FET, FNR, NAKs); selecting one lists its
// messages and draws its throughput per period.
#pragma once

#include <QWidget>
#include <memory>

#include "models/flow_table_model.h"
#include "models/message_table_model.h"
#include "views/table_panel.h"

class QChart;

namespace rdmatel::ui {

class ZoomChartView;

class FlowsView : public QWidget {
  Q_OBJECT
 public:
  explicit FlowsView(QWidget* parent = nullptr);
  void set_analysis(std::shared_ptr<const Analysis> a);
  void set_filter(const QString& text);
  TablePanel* flows() const { return flows_; }
  TablePanel* messages() const { return messages_; }

 private:
  void flow_selected(int row);

  std::shared_ptr<const Analysis> analysis_;
  FlowTableModel* model_;
  MessageTableModel* message_model_;
  TablePanel* flows_;
  TablePanel* messages_;
  QChart* chart_;
  ZoomChartView* chart_view_;
};

}  // namespace rdmatel::ui
