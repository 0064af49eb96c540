// SPDX-License-Identifier: GPL-2.0-or-later
// Statistics of the fabric: -z rdmatel,congestion, rdmatel,pfc, rdmatel,hops.
#include "plugin/stat_table.h"

#include <string>

#include "rdmatel/names.h"

namespace rdmatel::plugin {
namespace {

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
  using Stats = LatestRecord<EcnRecord>;
  static constexpr const char* kTitle = "RDMA congestion per flow (ECN, CNP)";
  static constexpr const char* kOnePassNote =
      " - ONE PASS: empty, congestion is counted over the whole capture; run tshark -2 (the GUI: once a live capture stops)";
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
  return KeyedTable<CongestionSpec>::on_packet(
      tapdata, data, [](const TapFrame& tap) { return bool(tap.congestion); },
      [](stat_tap_table* t, const TapFrame& tap) {
        const EcnRecord& r = *tap.congestion;
        const std::string src = r.src.to_string(), dst = r.dst.to_string(), qpn = qpn_text(r.dst_qpn);
        const char* point = tap.point_name ? tap.point_name : "?";
        KeyedTable<CongestionSpec>::add(
            t, src + " " + dst + " " + qpn + " " + point,
            [&](stat_tap_table_item_type* c) {
              c[0].value.string_value = g_strdup(src.c_str());
              c[1].value.string_value = g_strdup(dst.c_str());
              c[2].value.string_value = g_strdup(qpn.c_str());
              c[3].value.string_value = g_strdup(point);
            },
            r);
        return true;
      });
}

stat_tap_table_item kCnpColumns[] = {
    {TABLE_ITEM_STRING, TAP_ALIGN_LEFT, "Notification point", "%-15s"},
    {TABLE_ITEM_STRING, TAP_ALIGN_LEFT, "Told to slow down", "%-15s"},
    {TABLE_ITEM_STRING, TAP_ALIGN_LEFT, "Point", "%s"},
    {TABLE_ITEM_UINT, TAP_ALIGN_RIGHT, "CNPs", "%u"},
};

struct CnpSpec {
  using Stats = LatestRecord<CnpRecord>;
  static constexpr const char* kTitle = "RDMA CNPs per IP pair";
  static constexpr const char* kOnePassNote = CongestionSpec::kOnePassNote;
  static constexpr size_t kColumnCount = G_N_ELEMENTS(kCnpColumns);
  static inline const stat_tap_table_item* const kColumns = kCnpColumns;
  static void show(stat_tap_table_item_type* row, const Stats& s) {
    if (s.r) row[3].value.uint_value = guint(s.r->cnps);
  }
};

tap_packet_status cnp_packet(void* tapdata, packet_info*, epan_dissect_t*, const void* data, tap_flags_t) {
  return KeyedTable<CnpSpec>::on_packet(
      tapdata, data, [](const TapFrame& tap) { return bool(tap.cnp); },
      [](stat_tap_table* t, const TapFrame& tap) {
        const CnpRecord& r = *tap.cnp;
        const std::string src = r.src.to_string(), dst = r.dst.to_string();
        const char* point = tap.point_name ? tap.point_name : "?";
        KeyedTable<CnpSpec>::add(
            t, src + " " + dst + " " + point,
            [&](stat_tap_table_item_type* c) {
              c[0].value.string_value = g_strdup(src.c_str());
              c[1].value.string_value = g_strdup(dst.c_str());
              c[2].value.string_value = g_strdup(point);
            },
            r);
        return true;
      });
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
  using Stats = LatestRecord<PfcRecord>;
  static constexpr const char* kTitle = "PFC per point and priority";
  static constexpr const char* kOnePassNote =
      " - ONE PASS: empty, PFC is counted over the whole capture; run tshark -2 (the GUI: once a live capture stops)";
  static constexpr size_t kColumnCount = G_N_ELEMENTS(kPfcColumns);
  static inline const stat_tap_table_item* const kColumns = kPfcColumns;
  static void show(stat_tap_table_item_type* row, const Stats& s) {
    if (!s.r) return;
    auto us = [](const std::optional<DurationNs>& d) { return d ? double(*d) / 1000.0 : kNone; };
    row[2].value.uint_value = guint(s.r->frames);
    row[3].value.uint_value = guint(s.r->pause_frames);
    row[4].value.uint_value = guint(s.r->resume_frames);
    row[5].value.float_value = double(s.r->quanta);
    row[6].value.float_value = us(s.r->pause_ns);
    row[7].value.float_value = us(s.r->longest_pause_ns);
  }
};

tap_packet_status pfc_packet(void* tapdata, packet_info*, epan_dissect_t*, const void* data, tap_flags_t) {
  return KeyedTable<PfcSpec>::on_packet(
      tapdata, data, [](const TapFrame& tap) { return bool(tap.pfc_count); },
      [](stat_tap_table* t, const TapFrame& tap) {
        const char* point = tap.point_name ? tap.point_name : "?";
        for (unsigned i = 0; i < tap.pfc_count; ++i) {
          const PfcRecord& r = *tap.pfc[i];
          KeyedTable<PfcSpec>::add(
              t, std::string(point) + " " + std::to_string(r.priority),
              [&](stat_tap_table_item_type* c) {
                c[0].value.string_value = g_strdup(point);
                c[1].value.uint_value = r.priority;
                c[8].value.string_value = g_strdup(r.storm ? "storm" : "-");
              },
              r);
        }
        return true;
      });
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
    {TABLE_ITEM_STRING, TAP_ALIGN_LEFT, "Path", "%s"},
};

struct HopSpec {
  using Stats = LatestRecord<PathRecord>;
  static constexpr const char* kTitle = "Hops between observation points";
  static constexpr const char* kOnePassNote =
      " - ONE PASS: empty, hops are settled at the end of the capture; run tshark -2 (the GUI: once a live capture stops)";
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
  return KeyedTable<HopSpec>::on_packet(
      tapdata, data, [](const TapFrame& tap) { return bool(tap.hop); },
      [](stat_tap_table* t, const TapFrame& tap) {
        const PathRecord& r = *tap.hop;
        const std::string src = r.src.to_string(), dst = r.dst.to_string(), qpn = qpn_text(r.dst_qpn);
        const std::string key = src + ">" + dst + " " + qpn + " " + tap.hop_from + ">" + tap.hop_to;
        KeyedTable<HopSpec>::add(
            t, key,
            [&](stat_tap_table_item_type* c) {
              c[0].value.string_value = g_strdup(src.c_str());
              c[1].value.string_value = g_strdup(dst.c_str());
              c[2].value.string_value = g_strdup(qpn.c_str());
              c[3].value.string_value = g_strdup(tap.hop_from);
              c[4].value.string_value = g_strdup(tap.hop_to);
              c[10].value.string_value = g_strdup(r.offset_applied_ns ? "corrected" : "raw");
              // "inferred": no packet of the flow showed the hop (a black-holed direction).
              c[11].value.string_value = g_strdup(r.path_inferred ? "inferred" : "seen");
            },
            r);
        return true;
      });
}

}  // namespace

void register_fabric_tables() {
  static stat_tap_table_ui congestion =
      make_ui<CongestionSpec>("RDMA Telemetry · Congestion per flow (ECN, CNP)", "rdmatel,congestion",
                              &congestion_packet, kCongestionColumns);
  static stat_tap_table_ui cnp = make_ui<CnpSpec>("RDMA Telemetry · CNPs per IP pair", "rdmatel,cnp", &cnp_packet,
                                                  kCnpColumns);
  static stat_tap_table_ui pfc = make_ui<PfcSpec>("RDMA Telemetry · PFC per point and priority", "rdmatel,pfc",
                                                  &pfc_packet, kPfcColumns);
  static stat_tap_table_ui hops = make_ui<HopSpec>("RDMA Telemetry · Hops between observation points", "rdmatel,hops",
                                                   &hop_packet, kHopColumns);
  register_stat_tap_table_ui(&congestion);
  register_stat_tap_table_ui(&cnp);
  register_stat_tap_table_ui(&pfc);
  register_stat_tap_table_ui(&hops);
}

}  // namespace rdmatel::plugin
