// SPDX-License-Identifier: GPL-2.0-or-later
// The plugin's statistics tables (register_stat_tap_table_ui) share this: keyed rows beside each
// Wireshark table, the titles that say what the rows are not (one pass, a second -z instance),
// and the table's registration. The tables themselves: stats_io.cpp (I/Os, messages, the
// diagnosis, NVMe service response time), stats_fabric.cpp (congestion, PFC, hops).
#pragma once

#include <epan/packet.h>
#include <epan/stat_tap_ui.h>
#include <epan/tap.h>

#include <algorithm>
#include <deque>
#include <limits>
#include <string>
#include <unordered_map>

#include "plugin/tap.h"
#include "rdmatel/report.h"

namespace rdmatel::plugin {

// A statistic with no sample is shown as "nan", never as 0 (SPEC §4: a missing metric is not 0).
inline constexpr double kNone = std::numeric_limits<double>::quiet_NaN();

inline double us_or_none(const Distribution& d, double ns) { return d.count() ? ns / 1000.0 : kNone; }

// ---------------------------------------------------------------------------------------------
// Keyed rows. Wireshark keeps one table per statistic (stat_tap_table_ui) and hands its callbacks
// only the table, so each statistic keeps its aggregation beside it in one of these: row i of
// the table shows stats(i). Invariant: size() equals the table's number of rows.
template <typename Stats>
class Rows {
 public:
  /// The row of `key`; `added` tells whether it is new (the caller then adds it to the table).
  size_t find_or_add(const std::string& key, bool& added) {
    // Looked up first: emplace builds a node (a copy of the key) before it knows whether the
    // key is there, and a row is found far more often than made.
    if (auto it = index_.find(key); it != index_.end()) {
      added = false;
      return it->second;
    }
    added = true;
    keys_.push_back(&index_.emplace(key, stats_.size()).first->first);
    stats_.emplace_back();
    return stats_.size() - 1;
  }
  /// Rows `a` and `b` trade places (their keys follow them).
  void swap_rows(size_t a, size_t b) {
    std::swap(stats_[a], stats_[b]);
    std::swap(keys_[a], keys_[b]);
    index_[*keys_[a]] = a;
    index_[*keys_[b]] = b;
  }
  Stats& stats(size_t row) { return stats_[row]; }
  size_t size() const { return stats_.size(); }
  void reset_stats() {
    for (Stats& s : stats_) s = Stats{};
  }
  void clear() {
    index_.clear();
    keys_.clear();
    stats_.clear();
  }

 private:
  std::unordered_map<std::string, size_t> index_;
  std::deque<const std::string*> keys_;  // each row's key (in index_: its nodes never move)
  std::deque<Stats> stats_;  // a deque: rows never move
};

inline stat_tap_table* first_table(stat_tap_table_ui* ui) {
  return ui && ui->tables && ui->tables->len ? g_array_index(ui->tables, stat_tap_table*, 0) : nullptr;
}

// In one pass a frame's records are what was known when it was read: completed I/Os and
// messages only, some of their stamps still missing.
inline constexpr const char* kSharedByInstances =
    " - FOR THE FIRST -z OF THIS TABLE ONLY: Wireshark 4.0 gives each -z instance the same table; run tshark once "
    "per filter";
inline constexpr const char* kPartialInOnePass =
    " - ONE PASS: partial, only what had completed as each frame was read; run tshark -2 for final numbers (the GUI: "
    "once a live capture stops)";

/// The Stats of a table with one row per final record (diagnosis findings, congestion, PFC,
/// hops): the row shows that record.
template <typename Record>
struct LatestRecord {
  const Record* r = nullptr;
  void add(const Record& record) { r = &record; }
};

/// Common callbacks of a keyed table: `Spec` names the table and its columns and fills a row.
template <typename Spec>
struct KeyedTable {
  static Rows<typename Spec::Stats>& rows() {
    static Rows<typename Spec::Stats> r;
    return r;
  }

  // Titles that say what the rows are not: counted on a first pass (tshark without -2: partial,
  // and how to get final numbers), or shared by a second instance of the table (Wireshark 4.0
  // hands every `-z` instance of a table the same table: its rows are the first instance's).
  static const char* one_pass_title() {
    static const std::string title = std::string(Spec::kTitle) + Spec::kOnePassNote;
    return title.c_str();
  }
  static const char* shared_title() {
    static const std::string title = std::string(Spec::kTitle) + kSharedByInstances;
    return title.c_str();
  }
  static const void*& owner() {
    static const void* o = nullptr;
    return o;
  }

  // Whether this instance's packet may count (the first instance that sees one owns the rows);
  // sets the title that says what the rows are.
  static bool counts(stat_tap_table* t, const void* instance, const TapFrame* tap) {
    if (!t || !tap) return false;
    if (!owner()) owner() = instance;
    if (owner() != instance) {
      t->title = shared_title();
      return false;
    }
    if (!tap->final && t->title != shared_title()) t->title = one_pass_title();
    return true;
  }

  // The frame of every table's tap callback: counts only this instance's frames that carry
  // records (`has`), lets `add_rows(table, tap)` fill the rows (true: the table changed), and
  // never lets a C++ exception reach Wireshark (out of memory stops this table).
  template <typename Has, typename AddRows>
  static tap_packet_status on_packet(void* tapdata, const void* data, Has&& has, AddRows&& add_rows) {
    const auto* tap = static_cast<const TapFrame*>(data);
    stat_tap_table* t = first_table(static_cast<stat_data_t*>(tapdata)->stat_tap_data);
    if (!counts(t, tapdata, tap) || !has(*tap)) return TAP_PACKET_DONT_REDRAW;
    try {
      return add_rows(t, *tap) ? TAP_PACKET_REDRAW : TAP_PACKET_DONT_REDRAW;
    } catch (...) {
      return TAP_PACKET_FAILED;
    }
  }

  // Called when tshark starts the statistic or the GUI dialog (re)runs it.
  static void init(stat_tap_table_ui* ui) {
    owner() = nullptr;
    stat_tap_table* t = stat_tap_find_table(ui, Spec::kTitle);
    if (!t) t = stat_tap_find_table(ui, one_pass_title());
    if (!t) t = stat_tap_find_table(ui, shared_title());
    if (t) {
      t->title = Spec::kTitle;
      reset(t);
      return;
    }
    rows().clear();
    stat_tap_add_table(ui, stat_tap_init_table(Spec::kTitle, int(Spec::kColumnCount), 0, nullptr));
  }

  // A new file or a new filter: rows stay (zeroed), so no pointer the GUI holds is freed.
  static void reset(stat_tap_table* t) {
    rows().reset_stats();
    for (guint r = 0; r < t->num_elements && r < rows().size(); ++r) Spec::show(t->elements[r], rows().stats(r));
  }

  static void free_item(stat_tap_table*, guint row, guint column, stat_tap_table_item_type* item) {
    if (row == 0 && column == 0) rows().clear();  // the table is being freed
    if (item->type == TABLE_ITEM_STRING) {
      g_free(const_cast<char*>(item->value.string_value));
      item->value.string_value = nullptr;
    }
  }

  // Adds `record` to the row of `key`; a new row's key cells are set by `fill_keys(cells)`
  // (strings allocated with g_strdup: free_item frees them).
  template <typename Record, typename FillKeys>
  static void add(stat_tap_table* t, const std::string& key, FillKeys&& fill_keys, const Record& record) {
    bool added = false;
    size_t row = rows().find_or_add(key, added);
    if (added || row >= t->num_elements) {  // (the second only if the table lost its rows)
      stat_tap_table_item_type items[Spec::kColumnCount] = {};
      for (size_t c = 0; c < Spec::kColumnCount; ++c) items[c].type = Spec::kColumns[c].type;
      fill_keys(items);
      stat_tap_init_table_row(t, guint(row), guint(Spec::kColumnCount), items);
    }
    typename Spec::Stats& s = rows().stats(row);
    s.add(record);
    Spec::show(t->elements[row], s);
    if (added) keep_in_order(t, row);
  }

  // A table whose Spec orders its rows (row_before(cells a, cells b): a's row comes first, e.g.
  // the diagnosis by rank, as rdmatel analyze lists it) moves a new row up to its place: tshark
  // prints the rows in table order, and records come in frame order. The rows' cells trade
  // places, not the arrays holding them (the GUI's items point to those: each row of the dialog
  // then shows the row now at its place).
  static void keep_in_order(stat_tap_table* t, size_t row) {
    if constexpr (requires(const stat_tap_table_item_type* a) { Spec::row_before(a, a); }) {
      while (row > 0 && row < t->num_elements && Spec::row_before(t->elements[row], t->elements[row - 1])) {
        std::swap_ranges(t->elements[row], t->elements[row] + Spec::kColumnCount, t->elements[row - 1]);
        rows().swap_rows(row, row - 1);
        --row;
      }
    }
  }
};


inline tap_param kFilterParam[] = {{PARAM_FILTER, "filter", "Filter", nullptr, TRUE}};

template <typename Spec>
stat_tap_table_ui make_ui(const char* title, const char* cli, tap_packet_cb packet, stat_tap_table_item* columns) {
  stat_tap_table_ui ui{};
  ui.group = REGISTER_PACKET_STAT_GROUP_UNSORTED;
  ui.title = title;
  ui.tap_name = "rdmatel";
  ui.cli_string = cli;
  ui.stat_tap_init_cb = &KeyedTable<Spec>::init;
  ui.packet_func = packet;
  ui.stat_tap_reset_table_cb = &KeyedTable<Spec>::reset;
  ui.stat_tap_free_table_item_cb = &KeyedTable<Spec>::free_item;
  ui.nfields = Spec::kColumnCount;
  ui.fields = columns;
  ui.nparams = G_N_ELEMENTS(kFilterParam);
  ui.params = kFilterParam;
  return ui;
}

/// Registers the tables of stats_io.cpp (and the service response time table of `proto`).
void register_io_tables(int proto);
/// Registers the tables of stats_fabric.cpp.
void register_fabric_tables();

}  // namespace rdmatel::plugin
