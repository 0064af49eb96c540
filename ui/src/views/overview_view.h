// SPDX-License-Identifier: GPL-2.0-or-later
// Overview: the engine's diagnosis (when this build's engine makes one), the headline numbers
// and the warnings of the run.
#pragma once

#include <QLabel>
#include <QListWidget>
#include <QWidget>
#include <memory>

#include "core/analysis.h"
#include "models/diagnosis_model.h"
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
  QString verdict_text() const { return verdict_ ? verdict_->text() : QString(); }

 private:
  void open_worst_frame();

  std::shared_ptr<const Analysis> analysis_;
  QLabel* headline_;
  QLabel* verdict_ = nullptr;
  DiagnosisModel* diagnosis_model_;
  TablePanel* diagnosis_ = nullptr;
  QListWidget* warnings_;
};

/// The headline numbers as HTML (the engine's counts and aggregates, laid out).
QString overview_html(const Analysis& a);

}  // namespace rdmatel::ui
