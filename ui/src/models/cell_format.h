// SPDX-License-Identifier: GPL-2.0-or-later
// How the analyzer's models present the engine's numbers: µs with three decimals (the CLI's
// format), a dash where the capture lacks a value (never 0), raw numbers for sorting.
#pragma once

#include <QString>
#include <QVariant>
#include <optional>

#include "rdmatel/report.h"
#include "rdmatel/types.h"

namespace rdmatel::ui {

/// The raw value of a cell (double or text): sorting and tests.
inline constexpr int kSortRole = Qt::UserRole;
/// The cell as CSV writes it: empty when absent.
inline constexpr int kExportRole = Qt::UserRole + 1;

inline const QString kAbsent = QStringLiteral("–");

/// Statistics of a distribution the tables show.
enum class Stat { kAvg, kP50, kP99, kMax, kMin, kCount };
const char* stat_name(Stat s);  ///< "avg", "p99", ...

/// The value in µs of one statistic, absent without samples (the engine's Distribution).
std::optional<double> stat_us(const Distribution& d, Stat s);
/// The CLI's text of one statistic (format_us), or absent.
std::optional<QString> stat_text(const Distribution& d, Stat s);

/// A cell of a µs value for `role` (display, sort, export).
QVariant us_cell(const std::optional<DurationNs>& ns, int role);
/// A cell of a statistic for `role`.
QVariant stat_cell(const Distribution& d, Stat s, int role);
/// A cell of any number with its text.
QVariant number_cell(double v, const QString& text, int role);
QVariant optional_cell(const std::optional<double>& v, int decimals, int role);

/// The unit a header names: "RTT p99 (µs)".
QString metric_header(IoMetric m, Stat s);

}  // namespace rdmatel::ui
