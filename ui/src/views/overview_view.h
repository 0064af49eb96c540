// SPDX-License-Identifier: GPL-2.0-or-later
// Overview: the engine's diagnosis (when this build's engine makes one), the headline numbers
// and the warnings of the run.
#pragma once

#include <QLabel>
#include <QListWidget>
#include <QWidget>
#include <memory>

#include "core/analysis.h"
#include "models/record_table_model.h"
#include "views/table_panel.h"

namespace rdmatel::ui {

class OverviewView : public QWidget {
  Q_OBJECT
 public:
  explicit OverviewView(QWidget* parent = nullptr);
  void set_analysis(std::shared_ptr<const Analysis> a);
  /// The diagnosis table, or nullptr when the engine has no diagnosis records.
  TablePanel* diagnosis() const { return diagnosis_; }
  QString headline_text() const { return headline_->text(); }

 private:
  QLabel* headline_;
  RecordTableModel* diagnosis_model_;
  TablePanel* diagnosis_ = nullptr;
  QListWidget* warnings_;
};

/// The headline numbers as HTML (the engine's counts and aggregates, laid out).
QString overview_html(const Analysis& a);

}  // namespace rdmatel::ui
