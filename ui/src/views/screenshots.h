// SPDX-License-Identifier: GPL-2.0-or-later
// The screenshot walk (--screenshot-dir): every tab in turn, grabbed as the user sees it, and
// the settings dialog; for the GUI test and the README's images.
#pragma once

#include <QString>

namespace rdmatel::ui {

class MainWindow;

/// Writes DIR/NN-tab.png for every tab and DIR/NN-settings.png; returns how many were written
/// (failures are reported on stderr).
int save_screenshots(MainWindow& w, const QString& dir);

}  // namespace rdmatel::ui
