// SPDX-License-Identifier: GPL-2.0-or-later
// Tables of schema-described records: congestion (ECN, CNPs), PFC, clock offsets, alerts.
#pragma once

#include <QWidget>
#include <memory>
#include <vector>

#include "models/record_table_model.h"
#include "views/table_panel.h"

namespace rdmatel::ui {

class RecordsView : public QWidget {
  Q_OBJECT
 public:
  /// One table per (channel, title); channels this engine build has no schema for are left out.
  RecordsView(const std::vector<std::pair<std::string, QString>>& channels,
              QWidget* parent = nullptr);
  void set_analysis(std::shared_ptr<const Analysis> a);
  void set_filter(const QString& text);
  const std::vector<TablePanel*>& tables() const { return tables_; }
  bool empty() const { return tables_.empty(); }

 private:
  std::vector<RecordTableModel*> models_;
  std::vector<TablePanel*> tables_;
};

}  // namespace rdmatel::ui
