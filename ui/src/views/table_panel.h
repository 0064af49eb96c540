// SPDX-License-Identifier: GPL-2.0-or-later
// A titled table with a filter box: sortable on the raw values (kSortRole, absent values last),
// filtered on any column, exportable as CSV (context menu, File ▸ Export table as CSV).
#pragma once

#include <QLabel>
#include <QLineEdit>
#include <QSortFilterProxyModel>
#include <QTableView>
#include <QWidget>

namespace rdmatel::ui {

/// Sorts on kSortRole: numbers as numbers, text as text, absent values below every value.
class SortProxy : public QSortFilterProxyModel {
  Q_OBJECT
 public:
  using QSortFilterProxyModel::QSortFilterProxyModel;

 protected:
  bool lessThan(const QModelIndex& left, const QModelIndex& right) const override;
};

class TablePanel : public QWidget {
  Q_OBJECT
 public:
  TablePanel(const QString& title, QAbstractItemModel* model, bool filter_box,
             QWidget* parent = nullptr);

  QTableView* view() const { return view_; }
  SortProxy* proxy() const { return proxy_; }
  QString title() const { return title_; }
  void set_filter(const QString& text);
  /// The source row of the current index, or -1.
  int current_source_row() const;
  /// Selects the first row shown (so that what depends on a selection is not empty).
  void select_first_row();
  /// Asks for a file and writes the table as shown; errors as a dialog.
  void export_csv();
  /// Fits the columns to their contents (after a model reset).
  void fit_columns();

 signals:
  void current_row_changed(int source_row);

 private:
  QString title_;
  QLabel* heading_;
  QLineEdit* filter_ = nullptr;
  QTableView* view_;
  SortProxy* proxy_;
};

}  // namespace rdmatel::ui
