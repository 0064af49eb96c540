// SPDX-License-Identifier: GPL-2.0-or-later
#include "core/csv_export.h"

#include <QFile>

#include "models/cell_format.h"

namespace rdmatel::ui {
namespace {

QString field(const QString& s) {
  if (!s.contains(',') && !s.contains('"') && !s.contains('\n')) return s;
  QString q = s;
  q.replace("\"", "\"\"");
  return "\"" + q + "\"";
}

}  // namespace

QString model_to_csv(const QAbstractItemModel& model) {
  QString out;
  const int cols = model.columnCount();
  for (int c = 0; c < cols; ++c)
    out += (c ? "," : "") + field(model.headerData(c, Qt::Horizontal).toString());
  out += "\n";
  for (int r = 0; r < model.rowCount(); ++r) {
    for (int c = 0; c < cols; ++c) {
      // Absent values are empty, as in the CLI's CSV (the tables show a dash).
      QVariant v = model.index(r, c).data(kExportRole);
      if (!v.isValid()) v = model.index(r, c).data();
      out += (c ? "," : "") + field(v.toString());
    }
    out += "\n";
  }
  return out;
}

bool write_csv(const QAbstractItemModel& model, const QString& path, QString& error) {
  QFile f(path);
  if (!f.open(QIODevice::WriteOnly | QIODevice::Truncate)) {
    error = "cannot write " + path + ": " + f.errorString();
    return false;
  }
  QByteArray bytes = model_to_csv(model).toUtf8();
  if (f.write(bytes) != bytes.size() || !f.flush()) {
    error = "cannot write " + path + ": " + f.errorString();
    return false;
  }
  return true;
}

}  // namespace rdmatel::ui
