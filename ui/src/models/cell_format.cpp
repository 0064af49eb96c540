// SPDX-License-Identifier: GPL-2.0-or-later
#include "models/cell_format.h"

#include "rdmatel/format.h"

namespace rdmatel::ui {

const char* stat_name(Stat s) {
  switch (s) {
    case Stat::kAvg:
      return "avg";
    case Stat::kP50:
      return "p50";
    case Stat::kP99:
      return "p99";
    case Stat::kMax:
      return "max";
    case Stat::kMin:
      return "min";
    case Stat::kCount:
      return "n";
  }
  return "";
}

std::optional<double> stat_us(const Distribution& d, Stat s) {
  if (s == Stat::kCount) return double(d.count());
  if (!d.count()) return std::nullopt;
  switch (s) {
    case Stat::kAvg:
      return d.mean() / 1000.0;
    case Stat::kP50:
      return ns_to_us(d.percentile(50));
    case Stat::kP99:
      return ns_to_us(d.percentile(99));
    case Stat::kMax:
      return ns_to_us(d.max());
    case Stat::kMin:
      return ns_to_us(d.min());
    default:
      return std::nullopt;
  }
}

std::optional<QString> stat_text(const Distribution& d, Stat s) {
  if (s == Stat::kCount) return QString::number(d.count());
  if (!d.count()) return std::nullopt;
  switch (s) {
    case Stat::kAvg:
      return QString::fromStdString(format_us(d.mean()));
    case Stat::kP50:
      return QString::fromStdString(format_us(d.percentile(50)));
    case Stat::kP99:
      return QString::fromStdString(format_us(d.percentile(99)));
    case Stat::kMax:
      return QString::fromStdString(format_us(d.max()));
    case Stat::kMin:
      return QString::fromStdString(format_us(d.min()));
    default:
      return std::nullopt;
  }
}

QVariant us_cell(const std::optional<DurationNs>& ns, int role) {
  if (role == kSortRole) return ns ? QVariant(ns_to_us(*ns)) : QVariant();
  if (role == kExportRole) return ns ? QString::fromStdString(format_us(*ns)) : QString();
  if (role == Qt::DisplayRole) return ns ? QString::fromStdString(format_us(*ns)) : kAbsent;
  if (role == Qt::TextAlignmentRole) return int(Qt::AlignRight | Qt::AlignVCenter);
  return {};
}

QVariant stat_cell(const Distribution& d, Stat s, int role) {
  if (role == kSortRole) {
    std::optional<double> v = stat_us(d, s);
    return v ? QVariant(*v) : QVariant();
  }
  if (role == kExportRole || role == Qt::DisplayRole) {
    std::optional<QString> t = stat_text(d, s);
    return t ? *t : (role == kExportRole ? QString() : kAbsent);
  }
  if (role == Qt::TextAlignmentRole) return int(Qt::AlignRight | Qt::AlignVCenter);
  return {};
}

QVariant number_cell(double v, const QString& text, int role) {
  if (role == kSortRole) return v;
  if (role == kExportRole || role == Qt::DisplayRole) return text;
  if (role == Qt::TextAlignmentRole) return int(Qt::AlignRight | Qt::AlignVCenter);
  return {};
}

QVariant optional_cell(const std::optional<double>& v, int decimals, int role) {
  if (!v) {
    if (role == Qt::DisplayRole) return kAbsent;
    if (role == kExportRole) return QString();
    if (role == Qt::TextAlignmentRole) return int(Qt::AlignRight | Qt::AlignVCenter);
    return {};
  }
  return number_cell(*v, QString::number(*v, 'f', decimals), role);
}

QString metric_header(IoMetric m, Stat s) {
  QString h = QString::fromLatin1(io_metric_name(m)) + " " + stat_name(s);
  return s == Stat::kCount ? h : h + " (µs)";
}

}  // namespace rdmatel::ui
