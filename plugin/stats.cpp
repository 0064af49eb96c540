// SPDX-License-Identifier: GPL-2.0-or-later
#include "plugin/stats.h"

#include <epan/packet.h>  // first: conversation_table.h needs glib's types

#include <epan/conversation_table.h>
#include <epan/srt_table.h>
#include <epan/stat_tap_ui.h>
#include <epan/tap.h>

#include <deque>
#include <limits>
#include <string>
#include <string_view>
#include <unordered_map>

#include "plugin/tap.h"
#include "rdmatel/names.h"
#include "rdmatel/report.h"

namespace rdmatel::plugin {
namespace {

int tap_ = -1;

// A statistic with no sample is shown as "nan", never as 0 (SPEC §4: a missing metric is not 0).
constexpr double kNone = std::numeric_limits<double>::quiet_NaN();

double us_or_none(const Distribution& d, double ns) { return d.count() ? ns / 1000.0 : kNone; }

// ---------------------------------------------------------------------------------------------
// Keyed rows. Wireshark keeps one table per statistic (stat_tap_table_ui) and hands its callbacks
// only the table, so each statistic keeps its aggregation beside it in one of these: row i of
// the table shows stats(i). Invariant: size() equals the table's number of rows.
template <typename Stats>
class Rows {
 public:
  /// The row of `key`; `added` tells whether it is new (the caller then adds it to the table).
  size_t find_or_add(const std::string& key, bool& added) {
    auto [it, inserted] = index_.emplace(key, stats_.size());
    added = inserted;
    if (inserted) stats_.emplace_back();
    return it->second;
  }
  Stats& stats(size_t row) { return stats_[row]; }
  size_t size() const { return stats_.size(); }
  void reset_stats() {
    for (Stats& s : stats_) s = Stats{};
  }
  void clear() {
    index_.clear();
    stats_.clear();
  }

 private:
  std::unordered_map<std::string, size_t> index_;
  std::deque<Stats> stats_;  // a deque: rows never move
};

stat_tap_table* first_table(stat_tap_table_ui* ui) {
  return ui && ui->tables && ui->tables->len ? g_array_index(ui->tables, stat_tap_table*, 0) : nullptr;
}

// In one pass a frame's records are what was known when it was read: completed I/Os and
// messages only, some of their stamps still missing.
constexpr const char* kSharedByInstances =
    " - FOR THE FIRST -z OF THIS TABLE ONLY: Wireshark 4.0 gives each -z instance the same table; run tshark once "
    "per filter";
constexpr const char* kPartialInOnePass =
    " - ONE PASS: partial, only what had completed as each frame was read; run tshark -2 for final numbers";

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
  }
};

// ---------------------------------------------------------------------------------------------
// rdmatel,io,host / storage / pair: the engine's IoGroupStats of read and write I/Os.

#define RDMATEL_US_COLUMNS(metric)                                                       \
  {TABLE_ITEM_FLOAT, TAP_ALIGN_RIGHT, metric " min", "%.3f"},                            \
      {TABLE_ITEM_FLOAT, TAP_ALIGN_RIGHT, metric " avg", "%.3f"}, {                      \
    TABLE_ITEM_FLOAT, TAP_ALIGN_RIGHT, metric " max", "%.3f"                             \
  }

// The latency columns after the count, in IoMetric order (DAL, DPL, RTT, IOL1, IOL2, IOL).
constexpr size_t kIoMetricColumns = 3 * size_t(IoMetric::kCount);

void show_io_group(stat_tap_table_item_type* row, size_t count_column, const IoGroupStats& g) {
  row[count_column].value.uint_value = guint(g.reads + g.writes);
  for (size_t m = 0; m < size_t(IoMetric::kCount); ++m) {
    const Distribution& d = g.metric[m];
    stat_tap_table_item_type* cell = &row[count_column + 1 + 3 * m];
    cell[0].value.float_value = us_or_none(d, double(d.min()));
    cell[1].value.float_value = us_or_none(d, d.mean());
    cell[2].value.float_value = us_or_none(d, double(d.max()));
  }
}

stat_tap_table_item kHostColumns[] = {
    {TABLE_ITEM_STRING, TAP_ALIGN_LEFT, "Host", "%-15s"},
    {TABLE_ITEM_UINT, TAP_ALIGN_RIGHT, "I/Os", "%u"},
    RDMATEL_US_COLUMNS("DAL"), RDMATEL_US_COLUMNS("DPL"), RDMATEL_US_COLUMNS("RTT"),
    RDMATEL_US_COLUMNS("IOL1"), RDMATEL_US_COLUMNS("IOL2"), RDMATEL_US_COLUMNS("IOL"),
};
stat_tap_table_item kStorageColumns[] = {
    {TABLE_ITEM_STRING, TAP_ALIGN_LEFT, "Storage", "%-15s"},
    {TABLE_ITEM_UINT, TAP_ALIGN_RIGHT, "I/Os", "%u"},
    RDMATEL_US_COLUMNS("DAL"), RDMATEL_US_COLUMNS("DPL"), RDMATEL_US_COLUMNS("RTT"),
    RDMATEL_US_COLUMNS("IOL1"), RDMATEL_US_COLUMNS("IOL2"), RDMATEL_US_COLUMNS("IOL"),
};
stat_tap_table_item kPairColumns[] = {
    {TABLE_ITEM_STRING, TAP_ALIGN_LEFT, "Host", "%-15s"},
    {TABLE_ITEM_STRING, TAP_ALIGN_LEFT, "Storage", "%-15s"},
    {TABLE_ITEM_UINT, TAP_ALIGN_RIGHT, "I/Os", "%u"},
    RDMATEL_US_COLUMNS("DAL"), RDMATEL_US_COLUMNS("DPL"), RDMATEL_US_COLUMNS("RTT"),
    RDMATEL_US_COLUMNS("IOL1"), RDMATEL_US_COLUMNS("IOL2"), RDMATEL_US_COLUMNS("IOL"),
};
static_assert(G_N_ELEMENTS(kHostColumns) == 2 + kIoMetricColumns);
static_assert(G_N_ELEMENTS(kPairColumns) == 3 + kIoMetricColumns);

enum class IoGroupBy { kHost, kStorage, kPair };

template <IoGroupBy G>
struct IoSpec {
  using Stats = IoGroupStats;
  static constexpr const char* kTitle = G == IoGroupBy::kHost      ? "NVMe latency per host (µs)"
                                        : G == IoGroupBy::kStorage ? "NVMe latency per storage (µs)"
                                                                   : "NVMe latency per host-storage pair (µs)";
  static constexpr const char* kOnePassNote = kPartialInOnePass;
  static constexpr size_t kKeyColumns = G == IoGroupBy::kPair ? 2 : 1;
  static constexpr size_t kColumnCount = kKeyColumns + 1 + kIoMetricColumns;
  static inline const stat_tap_table_item* const kColumns =
      G == IoGroupBy::kHost ? kHostColumns : G == IoGroupBy::kStorage ? kStorageColumns : kPairColumns;
  static void show(stat_tap_table_item_type* row, const Stats& s) { show_io_group(row, kKeyColumns, s); }
};

template <IoGroupBy G>
tap_packet_status io_packet(void* tapdata, packet_info*, epan_dissect_t*, const void* data, tap_flags_t) {
  const auto* tap = static_cast<const TapFrame*>(data);
  stat_tap_table* t = first_table(static_cast<stat_data_t*>(tapdata)->stat_tap_data);
  if (!KeyedTable<IoSpec<G>>::counts(t, tapdata, tap) || !tap->io_count) return TAP_PACKET_DONT_REDRAW;
  bool changed = false;
  try {
    for (unsigned i = 0; i < tap->io_count && i < TapFrame::kMaxRecords; ++i) {
      const IoRecord& r = *tap->ios[i];
      // Latency statistics cover reads and writes, as the engine's report does; other commands
      // are in the service response time table.
      if (!r.is_read() && !r.is_write()) continue;
      std::string host = r.host.to_string(), storage = r.storage.to_string();
      if constexpr (G == IoGroupBy::kPair) {
        KeyedTable<IoSpec<G>>::add(
            t, host + " " + storage,
            [&](stat_tap_table_item_type* c) {
              c[0].value.string_value = g_strdup(host.c_str());
              c[1].value.string_value = g_strdup(storage.c_str());
            },
            r);
      } else {
        const std::string& ip = G == IoGroupBy::kHost ? host : storage;
        KeyedTable<IoSpec<G>>::add(
            t, ip, [&](stat_tap_table_item_type* c) { c[0].value.string_value = g_strdup(ip.c_str()); }, r);
      }
      changed = true;
    }
  } catch (...) {
    return TAP_PACKET_FAILED;  // out of memory: stop this table, never throw into Wireshark
  }
  return changed ? TAP_PACKET_REDRAW : TAP_PACKET_DONT_REDRAW;
}

// ---------------------------------------------------------------------------------------------
// rdmatel,msg,flow: the engine's FlowStats per flow and observation point.

stat_tap_table_item kFlowColumns[] = {
    {TABLE_ITEM_STRING, TAP_ALIGN_LEFT, "Source", "%-15s"},
    {TABLE_ITEM_STRING, TAP_ALIGN_LEFT, "Destination", "%-15s"},
    {TABLE_ITEM_STRING, TAP_ALIGN_LEFT, "Dest QPN", "%s"},
    {TABLE_ITEM_STRING, TAP_ALIGN_LEFT, "Point", "%s"},
    {TABLE_ITEM_UINT, TAP_ALIGN_RIGHT, "Messages", "%u"},
    {TABLE_ITEM_FLOAT, TAP_ALIGN_RIGHT, "Bytes", "%.0f"},
    {TABLE_ITEM_FLOAT, TAP_ALIGN_RIGHT, "FCT min (µs)", "%.3f"},
    {TABLE_ITEM_FLOAT, TAP_ALIGN_RIGHT, "FCT avg (µs)", "%.3f"},
    {TABLE_ITEM_FLOAT, TAP_ALIGN_RIGHT, "FCT max (µs)", "%.3f"},
    {TABLE_ITEM_FLOAT, TAP_ALIGN_RIGHT, "FET (Mb/s)", "%.3f"},
    {TABLE_ITEM_UINT, TAP_ALIGN_RIGHT, "NAKs", "%u"},
    {TABLE_ITEM_FLOAT, TAP_ALIGN_RIGHT, "FNR", "%.6f"},
};

struct FlowSpec {
  using Stats = FlowStats;
  static constexpr const char* kTitle = "RDMA messages per flow";
  static constexpr const char* kOnePassNote = kPartialInOnePass;
  static constexpr size_t kKeyColumns = 4;
  static constexpr size_t kColumnCount = G_N_ELEMENTS(kFlowColumns);
  static inline const stat_tap_table_item* const kColumns = kFlowColumns;
  static void show(stat_tap_table_item_type* row, const Stats& s) {
    row[4].value.uint_value = guint(s.messages);
    row[5].value.float_value = double(s.bytes);
    row[6].value.float_value = us_or_none(s.fct, double(s.fct.min()));
    row[7].value.float_value = us_or_none(s.fct, s.fct.mean());
    row[8].value.float_value = us_or_none(s.fct, double(s.fct.max()));
    std::optional<double> fet = s.fet_bps(), fnr = s.fnr();
    row[9].value.float_value = fet ? *fet / 1e6 : kNone;
    row[10].value.uint_value = guint(s.naks);
    row[11].value.float_value = fnr ? *fnr : kNone;
  }
};

tap_packet_status flow_packet(void* tapdata, packet_info*, epan_dissect_t*, const void* data, tap_flags_t) {
  const auto* tap = static_cast<const TapFrame*>(data);
  stat_tap_table* t = first_table(static_cast<stat_data_t*>(tapdata)->stat_tap_data);
  if (!KeyedTable<FlowSpec>::counts(t, tapdata, tap) || !tap->message_count) return TAP_PACKET_DONT_REDRAW;
  try {
    for (unsigned i = 0; i < tap->message_count && i < TapFrame::kMaxRecords; ++i) {
      const MessageRecord& m = *tap->messages[i];
      std::string src = m.src.to_string(), dst = m.dst.to_string();
      const char* point = tap->message_points[i] ? tap->message_points[i] : "?";
      KeyedTable<FlowSpec>::add(
          t, src + " " + dst + " " + qpn_text(m.dst_qpn) + " " + point,
          [&](stat_tap_table_item_type* c) {
            c[0].value.string_value = g_strdup(src.c_str());
            c[1].value.string_value = g_strdup(dst.c_str());
            c[2].value.string_value = g_strdup(qpn_text(m.dst_qpn).c_str());
            c[3].value.string_value = g_strdup(point);
          },
          m);
    }
  } catch (...) {
    return TAP_PACKET_FAILED;
  }
  return TAP_PACKET_REDRAW;
}

// ---------------------------------------------------------------------------------------------
// rdmatel,diagnosis: the diagnosis's findings, one row each, counted on the frame to look at.

stat_tap_table_item kDiagnosisColumns[] = {
    {TABLE_ITEM_UINT, TAP_ALIGN_RIGHT, "Rank", "%u"},
    {TABLE_ITEM_STRING, TAP_ALIGN_LEFT, "Scope", "%s"},
    {TABLE_ITEM_STRING, TAP_ALIGN_LEFT, "Verdict", "%s"},
    {TABLE_ITEM_STRING, TAP_ALIGN_LEFT, "Metric", "%s"},
    {TABLE_ITEM_FLOAT, TAP_ALIGN_RIGHT, "Mean (µs)", "%.3f"},
    {TABLE_ITEM_FLOAT, TAP_ALIGN_RIGHT, "Peer median (µs)", "%.3f"},
    {TABLE_ITEM_UINT, TAP_ALIGN_RIGHT, "I/Os", "%u"},
    {TABLE_ITEM_FLOAT, TAP_ALIGN_RIGHT, "Storage share (%)", "%.1f"},
    {TABLE_ITEM_FLOAT, TAP_ALIGN_RIGHT, "Network share (%)", "%.1f"},
    {TABLE_ITEM_FLOAT, TAP_ALIGN_RIGHT, "Host share (%)", "%.1f"},
    {TABLE_ITEM_UINT, TAP_ALIGN_RIGHT, "Frame", "%u"},
    {TABLE_ITEM_STRING, TAP_ALIGN_LEFT, "Evidence", "%s"},
};

struct DiagnosisSpec {
  struct Stats {
    const DiagnosisRecord* r = nullptr;
    void add(const DiagnosisRecord& d) { r = &d; }
  };
  static constexpr const char* kTitle = "Diagnosis: who is to blame";
  static constexpr const char* kOnePassNote =
      " - ONE PASS: empty, the diagnosis is made at the end of the capture; run tshark -2 (the GUI always does)";
  static constexpr size_t kColumnCount = G_N_ELEMENTS(kDiagnosisColumns);
  static inline const stat_tap_table_item* const kColumns = kDiagnosisColumns;
  static void show(stat_tap_table_item_type* row, const Stats& s) {
    auto ns = [](const std::optional<DurationNs>& d) { return d ? double(*d) / 1000.0 : kNone; };
    auto pct = [](const std::optional<double>& d) { return d ? *d * 100.0 : kNone; };
    row[4].value.float_value = s.r ? ns(s.r->value_ns) : kNone;
    row[5].value.float_value = s.r ? ns(s.r->peer_median_ns) : kNone;
    row[6].value.uint_value = s.r ? guint(s.r->ios) : 0;
    row[7].value.float_value = s.r ? pct(s.r->storage_share) : kNone;
    row[8].value.float_value = s.r ? pct(s.r->network_share) : kNone;
    row[9].value.float_value = s.r ? pct(s.r->host_share) : kNone;
    row[10].value.uint_value = s.r ? guint(s.r->worst_frame) : 0;
  }
};

tap_packet_status diagnosis_packet(void* tapdata, packet_info*, epan_dissect_t*, const void* data, tap_flags_t) {
  const auto* tap = static_cast<const TapFrame*>(data);
  stat_tap_table* t = first_table(static_cast<stat_data_t*>(tapdata)->stat_tap_data);
  if (!KeyedTable<DiagnosisSpec>::counts(t, tapdata, tap) || !tap->finding) return TAP_PACKET_DONT_REDRAW;
  try {
    const DiagnosisRecord& r = *tap->finding;
    const std::string scope = diagnosis_scope_text(r);
    KeyedTable<DiagnosisSpec>::add(
        t, std::to_string(r.rank),
        [&](stat_tap_table_item_type* c) {
          c[0].value.uint_value = r.rank;
          c[1].value.string_value = g_strdup(scope.c_str());
          c[2].value.string_value = g_strdup(diagnosis_verdict_text(r));
          c[3].value.string_value = g_strdup(r.metric[0] ? r.metric : "retransmissions");
          c[11].value.string_value = g_strdup(r.evidence.c_str());
        },
        r);
  } catch (...) {
    return TAP_PACKET_FAILED;
  }
  return TAP_PACKET_REDRAW;
}

// ---------------------------------------------------------------------------------------------
// rdmatel,hops: the engine's hop records (export paths), one row per flow and hop, each counted
// on its first packet's frame at the hop's first point. Final records only (tshark -2, the GUI):
// hops are settled when every point has had the path timeout to show a packet's copy.

stat_tap_table_item kHopColumns[] = {
    {TABLE_ITEM_STRING, TAP_ALIGN_LEFT, "Source", "%s"},
    {TABLE_ITEM_STRING, TAP_ALIGN_LEFT, "Destination", "%s"},
    {TABLE_ITEM_STRING, TAP_ALIGN_LEFT, "Dest QPN", "%s"},
    {TABLE_ITEM_STRING, TAP_ALIGN_LEFT, "From point", "%s"},
    {TABLE_ITEM_STRING, TAP_ALIGN_LEFT, "To point", "%s"},
    {TABLE_ITEM_UINT, TAP_ALIGN_RIGHT, "Packets", "%u"},
    {TABLE_ITEM_UINT, TAP_ALIGN_RIGHT, "Lost", "%u"},
    {TABLE_ITEM_FLOAT, TAP_ALIGN_RIGHT, "Delay min (µs)", "%.3f"},
    {TABLE_ITEM_FLOAT, TAP_ALIGN_RIGHT, "Delay avg (µs)", "%.3f"},
    {TABLE_ITEM_FLOAT, TAP_ALIGN_RIGHT, "Delay max (µs)", "%.3f"},
    {TABLE_ITEM_STRING, TAP_ALIGN_LEFT, "Clocks", "%s"},
};

struct HopSpec {
  struct Stats {
    const PathRecord* r = nullptr;
    void add(const PathRecord& p) { r = &p; }
  };
  static constexpr const char* kTitle = "Hops between observation points";
  static constexpr const char* kOnePassNote =
      " - ONE PASS: empty, hops are settled at the end of the capture; run tshark -2 (the GUI always does)";
  static constexpr size_t kColumnCount = G_N_ELEMENTS(kHopColumns);
  static inline const stat_tap_table_item* const kColumns = kHopColumns;
  static void show(stat_tap_table_item_type* row, const Stats& s) {
    const PathRecord* r = s.r;
    const bool d = r && r->delivered;
    row[5].value.uint_value = r ? guint(r->packets) : 0;
    row[6].value.uint_value = r ? guint(r->lost) : 0;
    // The engine's numbers, rounded to the ns like export paths.
    row[7].value.float_value = d ? double(r->min_ns) / 1000.0 : kNone;
    row[8].value.float_value = d ? double(*r->avg_ns()) / 1000.0 : kNone;
    row[9].value.float_value = d ? double(r->max_ns) / 1000.0 : kNone;
  }
};

tap_packet_status hop_packet(void* tapdata, packet_info*, epan_dissect_t*, const void* data, tap_flags_t) {
  const auto* tap = static_cast<const TapFrame*>(data);
  stat_tap_table* t = first_table(static_cast<stat_data_t*>(tapdata)->stat_tap_data);
  if (!KeyedTable<HopSpec>::counts(t, tapdata, tap) || !tap->hop) return TAP_PACKET_DONT_REDRAW;
  try {
    const PathRecord& r = *tap->hop;
    const std::string src = r.src.to_string(), dst = r.dst.to_string(), qpn = qpn_text(r.dst_qpn);
    const std::string key = src + ">" + dst + " " + qpn + " " + tap->hop_from + ">" + tap->hop_to;
    KeyedTable<HopSpec>::add(
        t, key,
        [&](stat_tap_table_item_type* c) {
          c[0].value.string_value = g_strdup(src.c_str());
          c[1].value.string_value = g_strdup(dst.c_str());
          c[2].value.string_value = g_strdup(qpn.c_str());
          c[3].value.string_value = g_strdup(tap->hop_from);
          c[4].value.string_value = g_strdup(tap->hop_to);
          c[10].value.string_value = g_strdup(r.offset_applied_ns ? "corrected" : "raw");
        },
        r);
  } catch (...) {
    return TAP_PACKET_FAILED;
  }
  return TAP_PACKET_REDRAW;
}

// ---------------------------------------------------------------------------------------------
// rdmatel,srt: NVMe service response time per command. The response time is the I/O's latency
// at the compute side (IOL1), or `iol` where only one point saw it; Wireshark's SRT tables take
// a request time, so the packet is the completion and the request time is IOL1 before it.

enum SrtTable : guint { kSrtIo, kSrtAdmin, kSrtFabrics, kSrtTables };

void srt_init(register_srt_t*, GArray* srt_array) {
  srt_stat_table* io = init_srt_table("NVMe I/O commands", "I/O", srt_array, 256, "Command",
                                      "rdmatel.io.admin==0 && rdmatel.io.opcode", nullptr);
  srt_stat_table* admin = init_srt_table("NVMe admin commands", "Admin", srt_array, 256, "Command",
                                         "rdmatel.io.admin==1 && rdmatel.io.opcode", nullptr);
  srt_stat_table* fabrics =
      init_srt_table("NVMe-oF fabrics commands", "Fabrics", srt_array, 256, "Command", "rdmatel.io.fctype", nullptr);
  for (int i = 0; i < 256; ++i) {
    init_srt_table_row(io, i, nvme_command_name(uint8_t(i), 0, NvmeCommandSet::kIo));
    init_srt_table_row(admin, i, nvme_command_name(uint8_t(i), 0, NvmeCommandSet::kAdmin));
    const char* f = nvme_command_name(0x7F, uint8_t(i), NvmeCommandSet::kUnknown);
    char name[32];
    if (std::string_view(f) == "fabrics") {
      g_snprintf(name, sizeof name, "fctype_0x%02x", i);
      f = name;
    }
    init_srt_table_row(fabrics, i, f);  // copies the name
  }
}

tap_packet_status srt_packet(void* tapdata, packet_info* pinfo, epan_dissect_t*, const void* data, tap_flags_t) {
  const auto* tap = static_cast<const TapFrame*>(data);
  auto* sd = static_cast<srt_data_t*>(tapdata);
  if (!tap || !tap->io_count || !sd->srt_array || sd->srt_array->len < kSrtTables) return TAP_PACKET_DONT_REDRAW;
  bool changed = false;
  for (unsigned i = 0; i < tap->io_count && i < TapFrame::kMaxRecords; ++i) {
    const IoRecord& r = *tap->ios[i];
    if (!r.complete) continue;  // no response: no response time
    IoMetrics m = io_metrics(r);
    std::optional<DurationNs> rt = m.iol1 ? m.iol1 : m.iol;
    if (!rt) continue;
    guint table = r.fabrics() ? kSrtFabrics : r.admin ? kSrtAdmin : kSrtIo;
    int proc = r.fabrics() ? r.fctype : r.opcode;
    // request time = this packet's time - response time, in integer ns (no rounding).
    int64_t req_ns = int64_t(pinfo->abs_ts.secs) * kNsPerSec + pinfo->abs_ts.nsecs - *rt;
    int64_t secs = req_ns / kNsPerSec, nsecs = req_ns % kNsPerSec;
    if (nsecs < 0) {
      nsecs += kNsPerSec;
      --secs;
    }
    nstime_t req;
    req.secs = time_t(secs);
    req.nsecs = int(nsecs);
    add_srt_table_data(g_array_index(sd->srt_array, srt_stat_table*, table), proc, &req, pinfo);
    changed = true;
  }
  return changed ? TAP_PACKET_REDRAW : TAP_PACKET_DONT_REDRAW;
}

// ---------------------------------------------------------------------------------------------
// conv,rdmatel / endpoints,rdmatel: an endpoint is an IP and a QPN ("10.1.0.1 QP 1234", one
// string address, so that tshark shows the QPN too: it prints ports for TCP, UDP and SCTP only);
// a conversation is a queue pair, both directions. Filters use the frames' rdmatel.ep fields.

const char* address_filter(conv_filter_type_e type) {
  switch (type) {
    case CONV_FT_SRC_ADDRESS: return "rdmatel.ep.src";
    case CONV_FT_DST_ADDRESS: return "rdmatel.ep.dst";
    case CONV_FT_ANY_ADDRESS: return "rdmatel.ep";
    default: return CONV_FILTER_INVALID;
  }
}

const char* conv_filter(conv_item_t*, conv_filter_type_e type) { return address_filter(type); }
const char* endpoint_filter(endpoint_item_t*, conv_filter_type_e type) { return address_filter(type); }

ct_dissector_info_t conv_info = {&conv_filter};
et_dissector_info_t endpoint_info = {&endpoint_filter};

// The frame's endpoints as the tables key them: AT_STRINGZ "IP QP N" (endpoint_name, the values
// of rdmatel.ep.src / .dst) in packet-scope memory. Formatted here, not for every tapped frame:
// only these two tables need them.
void endpoint_addresses(packet_info* pinfo, const TapFrame& tap, address& src, address& dst) {
  char* s = static_cast<char*>(wmem_alloc(pinfo->pool, kEndpointNameSize));
  char* d = static_cast<char*>(wmem_alloc(pinfo->pool, kEndpointNameSize));
  endpoint_name(s, tap.src_ip, tap.src_qpn_known, tap.src_qpn);
  endpoint_name(d, tap.dst_ip, true, tap.dst_qpn);
  set_address(&src, AT_STRINGZ, int(strlen(s) + 1), s);
  set_address(&dst, AT_STRINGZ, int(strlen(d) + 1), d);
}

tap_packet_status conv_packet(void* pct, packet_info* pinfo, epan_dissect_t*, const void* data, tap_flags_t flags) {
  const auto* tap = static_cast<const TapFrame*>(data);
  if (!tap || !tap->roce) return TAP_PACKET_DONT_REDRAW;
  auto* hash = static_cast<conv_hash_t*>(pct);
  hash->flags = flags;
  address src, dst;
  endpoint_addresses(pinfo, *tap, src, dst);
  add_conversation_table_data(hash, &src, &dst, 0, 0, 1, int(pinfo->fd->pkt_len), &pinfo->rel_ts, &pinfo->abs_ts,
                              &conv_info, CONVERSATION_IBQP);
  return TAP_PACKET_REDRAW;
}

tap_packet_status endpoint_packet(void* pit, packet_info* pinfo, epan_dissect_t*, const void* data, tap_flags_t flags) {
  const auto* tap = static_cast<const TapFrame*>(data);
  if (!tap || !tap->roce) return TAP_PACKET_DONT_REDRAW;
  auto* hash = static_cast<conv_hash_t*>(pit);
  hash->flags = flags;
  int len = int(pinfo->fd->pkt_len);
  address src, dst;
  endpoint_addresses(pinfo, *tap, src, dst);
  add_endpoint_table_data(hash, &src, 0, TRUE, 1, len, &endpoint_info, ENDPOINT_IBQP);
  add_endpoint_table_data(hash, &dst, 0, FALSE, 1, len, &endpoint_info, ENDPOINT_IBQP);
  return TAP_PACKET_REDRAW;
}

// ---------------------------------------------------------------------------------------------
// rdmatel,congestion / rdmatel,pfc: the congestion component's records (final records only: they
// are made at the end of the first pass), each counted on the frame of its first packet.

stat_tap_table_item kCongestionColumns[] = {
    {TABLE_ITEM_STRING, TAP_ALIGN_LEFT, "Source", "%-15s"},
    {TABLE_ITEM_STRING, TAP_ALIGN_LEFT, "Destination", "%-15s"},
    {TABLE_ITEM_STRING, TAP_ALIGN_LEFT, "Dest QPN", "%s"},
    {TABLE_ITEM_STRING, TAP_ALIGN_LEFT, "Point", "%s"},
    {TABLE_ITEM_UINT, TAP_ALIGN_RIGHT, "Packets", "%u"},
    {TABLE_ITEM_UINT, TAP_ALIGN_RIGHT, "ECN-capable", "%u"},
    {TABLE_ITEM_UINT, TAP_ALIGN_RIGHT, "CE-marked", "%u"},
    {TABLE_ITEM_FLOAT, TAP_ALIGN_RIGHT, "CE ratio", "%.6f"},
    {TABLE_ITEM_UINT, TAP_ALIGN_RIGHT, "CNPs sent", "%u"},
    {TABLE_ITEM_FLOAT, TAP_ALIGN_RIGHT, "CNPs received", "%.0f"},
};

struct CongestionSpec {
  struct Stats {
    const CongestionRecord* r = nullptr;
    void add(const CongestionRecord& c) { r = &c; }
  };
  static constexpr const char* kTitle = "RDMA congestion per flow (ECN, CNP)";
  static constexpr const char* kOnePassNote =
      " - ONE PASS: empty, congestion is counted over the whole capture; run tshark -2 (the GUI always does)";
  static constexpr size_t kColumnCount = G_N_ELEMENTS(kCongestionColumns);
  static inline const stat_tap_table_item* const kColumns = kCongestionColumns;
  static void show(stat_tap_table_item_type* row, const Stats& s) {
    if (!s.r) return;
    row[4].value.uint_value = guint(s.r->packets);
    row[5].value.uint_value = guint(s.r->ect_packets);
    row[6].value.uint_value = guint(s.r->ce_packets);
    row[7].value.float_value = s.r->ce_ratio().value_or(kNone);
    row[8].value.uint_value = guint(s.r->cnp_packets);
    row[9].value.float_value = s.r->cnps_received ? double(*s.r->cnps_received) : kNone;
  }
};

tap_packet_status congestion_packet(void* tapdata, packet_info*, epan_dissect_t*, const void* data, tap_flags_t) {
  const auto* tap = static_cast<const TapFrame*>(data);
  stat_tap_table* t = first_table(static_cast<stat_data_t*>(tapdata)->stat_tap_data);
  if (!KeyedTable<CongestionSpec>::counts(t, tapdata, tap) || !tap->congestion) return TAP_PACKET_DONT_REDRAW;
  try {
    const CongestionRecord& r = *tap->congestion;
    const std::string src = r.src.to_string(), dst = r.dst.to_string(), qpn = qpn_text(r.dst_qpn);
    const char* point = tap->point_name ? tap->point_name : "?";
    KeyedTable<CongestionSpec>::add(
        t, src + " " + dst + " " + qpn + " " + point,
        [&](stat_tap_table_item_type* c) {
          c[0].value.string_value = g_strdup(src.c_str());
          c[1].value.string_value = g_strdup(dst.c_str());
          c[2].value.string_value = g_strdup(qpn.c_str());
          c[3].value.string_value = g_strdup(point);
        },
        r);
  } catch (...) {
    return TAP_PACKET_FAILED;
  }
  return TAP_PACKET_REDRAW;
}

stat_tap_table_item kPfcColumns[] = {
    {TABLE_ITEM_STRING, TAP_ALIGN_LEFT, "Point", "%s"},
    {TABLE_ITEM_UINT, TAP_ALIGN_RIGHT, "Priority", "%u"},
    {TABLE_ITEM_UINT, TAP_ALIGN_RIGHT, "PFC frames", "%u"},
    {TABLE_ITEM_UINT, TAP_ALIGN_RIGHT, "Pauses", "%u"},
    {TABLE_ITEM_UINT, TAP_ALIGN_RIGHT, "Resumes", "%u"},
    {TABLE_ITEM_FLOAT, TAP_ALIGN_RIGHT, "Quanta", "%.0f"},
    {TABLE_ITEM_FLOAT, TAP_ALIGN_RIGHT, "Pause time (µs)", "%.3f"},
    {TABLE_ITEM_FLOAT, TAP_ALIGN_RIGHT, "Longest pause (µs)", "%.3f"},
    {TABLE_ITEM_STRING, TAP_ALIGN_LEFT, "Storm", "%s"},
};

struct PfcSpec {
  struct Stats {
    const PfcRecord* r = nullptr;
    void add(const PfcRecord& p) { r = &p; }
  };
  static constexpr const char* kTitle = "PFC per point and priority";
  static constexpr const char* kOnePassNote =
      " - ONE PASS: empty, PFC is counted over the whole capture; run tshark -2 (the GUI always does)";
  static constexpr size_t kColumnCount = G_N_ELEMENTS(kPfcColumns);
  static inline const stat_tap_table_item* const kColumns = kPfcColumns;
  static void show(stat_tap_table_item_type* row, const Stats& s) {
    if (!s.r) return;
    auto us = [](const std::optional<DurationNs>& d) { return d ? double(*d) / 1000.0 : kNone; };
    row[2].value.uint_value = guint(s.r->frames);
    row[3].value.uint_value = guint(s.r->pauses);
    row[4].value.uint_value = guint(s.r->resumes);
    row[5].value.float_value = double(s.r->quanta);
    row[6].value.float_value = us(s.r->pause_ns);
    row[7].value.float_value = us(s.r->longest_pause_ns);
  }
};

tap_packet_status pfc_packet(void* tapdata, packet_info*, epan_dissect_t*, const void* data, tap_flags_t) {
  const auto* tap = static_cast<const TapFrame*>(data);
  stat_tap_table* t = first_table(static_cast<stat_data_t*>(tapdata)->stat_tap_data);
  if (!KeyedTable<PfcSpec>::counts(t, tapdata, tap) || !tap->pfc_count) return TAP_PACKET_DONT_REDRAW;
  try {
    const char* point = tap->point_name ? tap->point_name : "?";
    for (unsigned i = 0; i < tap->pfc_count; ++i) {
      const PfcRecord& r = *tap->pfc[i];
      KeyedTable<PfcSpec>::add(
          t, std::string(point) + " " + std::to_string(r.priority),
          [&](stat_tap_table_item_type* c) {
            c[0].value.string_value = g_strdup(point);
            c[1].value.uint_value = r.priority;
            c[8].value.string_value = g_strdup(r.storm ? "storm" : "-");
          },
          r);
    }
  } catch (...) {
    return TAP_PACKET_FAILED;
  }
  return TAP_PACKET_REDRAW;
}

// ---------------------------------------------------------------------------------------------

tap_param kFilterParam[] = {{PARAM_FILTER, "filter", "Filter", nullptr, TRUE}};

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

}  // namespace

int tap_id() { return tap_; }

void register_statistics(int proto) {
  tap_ = register_tap("rdmatel");

  // The titles are the GUI's Statistics menu entries (sorted, in one group) and tshark's headings.
  static stat_tap_table_ui io_host = make_ui<IoSpec<IoGroupBy::kHost>>(
      "RDMA Telemetry · NVMe latency per host", "rdmatel,io,host", &io_packet<IoGroupBy::kHost>, kHostColumns);
  static stat_tap_table_ui io_storage =
      make_ui<IoSpec<IoGroupBy::kStorage>>("RDMA Telemetry · NVMe latency per storage", "rdmatel,io,storage",
                                           &io_packet<IoGroupBy::kStorage>, kStorageColumns);
  static stat_tap_table_ui io_pair =
      make_ui<IoSpec<IoGroupBy::kPair>>("RDMA Telemetry · NVMe latency per host-storage pair", "rdmatel,io,pair",
                                        &io_packet<IoGroupBy::kPair>, kPairColumns);
  static stat_tap_table_ui msg_flow = make_ui<FlowSpec>("RDMA Telemetry · RDMA messages per flow", "rdmatel,msg,flow",
                                                        &flow_packet, kFlowColumns);
  register_stat_tap_table_ui(&io_host);
  register_stat_tap_table_ui(&io_storage);
  register_stat_tap_table_ui(&io_pair);
  register_stat_tap_table_ui(&msg_flow);
  static stat_tap_table_ui diagnosis = make_ui<DiagnosisSpec>(
      "RDMA Telemetry · Diagnosis: who is to blame", "rdmatel,diagnosis", &diagnosis_packet, kDiagnosisColumns);
  register_stat_tap_table_ui(&diagnosis);
  static stat_tap_table_ui congestion =
      make_ui<CongestionSpec>("RDMA Telemetry · Congestion per flow (ECN, CNP)", "rdmatel,congestion",
                              &congestion_packet, kCongestionColumns);
  static stat_tap_table_ui pfc = make_ui<PfcSpec>("RDMA Telemetry · PFC per point and priority", "rdmatel,pfc",
                                                  &pfc_packet, kPfcColumns);
  register_stat_tap_table_ui(&congestion);
  register_stat_tap_table_ui(&pfc);
  static stat_tap_table_ui hops = make_ui<HopSpec>("RDMA Telemetry · Hops between observation points", "rdmatel,hops",
                                                   &hop_packet, kHopColumns);
  register_stat_tap_table_ui(&hops);

  register_srt_table(proto, "rdmatel", int(kSrtTables), &srt_packet, &srt_init, nullptr);
  register_conversation_table(proto, TRUE, &conv_packet, &endpoint_packet);
}

}  // namespace rdmatel::plugin
