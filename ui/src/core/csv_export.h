// SPDX-License-Identifier: GPL-2.0-or-later
// Any table model as CSV, rows in the order shown (the sort and filter of its view).
#pragma once

#include <QAbstractItemModel>
#include <QString>

namespace rdmatel::ui {

/// The header line and every row, cells as displayed, quoted when needed (RFC 4180).
QString model_to_csv(const QAbstractItemModel& model);
/// Writes model_to_csv to `path`; false with a sentence in `error`.
bool write_csv(const QAbstractItemModel& model, const QString& path, QString& error);

}  // namespace rdmatel::ui
