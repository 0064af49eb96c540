// SPDX-License-Identifier: GPL-2.0-or-later
// Settings: the engine's settings table (roles, timeouts, limits, thresholds) rendered as a
// form, as the CLI renders it as options; applied to the next run.
#pragma once

#include <QDialog>
#include <QLabel>
#include <map>

#include "core/analysis.h"

namespace rdmatel::ui {

class SettingsDialog : public QDialog {
  Q_OBJECT
 public:
  SettingsDialog(const SettingOverrides& current, QWidget* parent = nullptr);
  /// What the user set (valid after accept()).
  const SettingOverrides& overrides() const { return result_; }

  void accept() override;

 private:
  std::map<std::string, QWidget*> editors_;
  QLabel* error_;
  SettingOverrides result_;
};

}  // namespace rdmatel::ui
