// SPDX-License-Identifier: GPL-2.0-or-later
// Statistics of NVMe I/Os, RDMA messages and the diagnosis: -z rdmatel,io,host / storage / pair,
// rdmatel,msg,flow, rdmatel,diagnosis, rdmatel,diagnosis,flows, rdmatel,srt.
#include "plugin/capture_state.h"  // FlowFindingRow
#include "plugin/stat_table.h"
#include "plugin/running_percentile.h"

#include <epan/srt_table.h>

#include <span>
#include <string>

#include "rdmatel/names.h"

namespace rdmatel::plugin {
namespace {

// ---------------------------------------------------------------------------------------------
// rdmatel,io,host / storage / pair: the engine's IoGroupStats of read and write I/Os.

#define RDMATEL_US_COLUMNS(metric)                                                       \
  {TABLE_ITEM_FLOAT, TAP_ALIGN_RIGHT, metric " min", "%.3f"},                            \
      {TABLE_ITEM_FLOAT, TAP_ALIGN_RIGHT, metric " avg", "%.3f"}, {                      \
    TABLE_ITEM_FLOAT, TAP_ALIGN_RIGHT, metric " max", "%.3f"                             \
  }

#define RDMATEL_PERCENTILE_COLUMNS(metric)                                                \
  {TABLE_ITEM_FLOAT, TAP_ALIGN_RIGHT, metric " p50", "%.3f"}, {                           \
    TABLE_ITEM_FLOAT, TAP_ALIGN_RIGHT, metric " p99", "%.3f"                              \
  }

// The latency columns after the count, in IoMetric order (DAL, DPL, RTT, IOL1, IOL2, IOL):
// min, avg and max of each (SPEC §8's order), then p50 and p99 of each (as rdmatel analyze).
constexpr size_t kMetrics = size_t(IoMetric::kCount);
constexpr size_t kIoMetricColumns = 5 * kMetrics;

/// A row: the engine's IoGroupStats of its read and write I/Os, and their percentiles kept
/// exact after every I/O (the table has no draw hook to compute them once at the end).
struct IoRow {
  IoGroupStats g;
  RunningPercentile p50[kMetrics], p99[kMetrics];
  IoRow() {
    for (RunningPercentile& p : p99) p = RunningPercentile(99);
  }
  void add(const IoRecord& r) {
    const IoMetrics m = io_metrics(r);
    g.add(r, m);
    if (!r.is_read() && !r.is_write()) return;
    const std::optional<DurationNs>* values[] = {&m.dal, &m.dpl, &m.rtt, &m.iol1, &m.iol2, &m.iol};
    static_assert(std::size(values) == kMetrics);
    for (size_t i = 0; i < kMetrics; ++i)
      if (*values[i]) {
        p50[i].add(**values[i], g.metric[i]);
        p99[i].add(**values[i], g.metric[i]);
      }
  }
};

void show_io_group(stat_tap_table_item_type* row, size_t count_column, const IoRow& s) {
  const IoGroupStats& g = s.g;
  row[count_column].value.uint_value = guint(g.reads + g.writes);
  for (size_t m = 0; m < kMetrics; ++m) {
    const Distribution& d = g.metric[m];
    stat_tap_table_item_type* cell = &row[count_column + 1 + 3 * m];
    cell[0].value.float_value = us_or_none(d, double(d.min()));
    cell[1].value.float_value = us_or_none(d, d.mean());
    cell[2].value.float_value = us_or_none(d, double(d.max()));
    stat_tap_table_item_type* pct = &row[count_column + 1 + 3 * kMetrics + 2 * m];
    pct[0].value.float_value = us_or_none(d, double(s.p50[m].value()));
    pct[1].value.float_value = us_or_none(d, double(s.p99[m].value()));
  }
}

stat_tap_table_item kHostColumns[] = {
    {TABLE_ITEM_STRING, TAP_ALIGN_LEFT, "Host", "%-15s"},
    {TABLE_ITEM_UINT, TAP_ALIGN_RIGHT, "I/Os", "%u"},
    RDMATEL_US_COLUMNS("DAL"), RDMATEL_US_COLUMNS("DPL"), RDMATEL_US_COLUMNS("RTT"),
    RDMATEL_US_COLUMNS("IOL1"), RDMATEL_US_COLUMNS("IOL2"), RDMATEL_US_COLUMNS("IOL"),
    RDMATEL_PERCENTILE_COLUMNS("DAL"), RDMATEL_PERCENTILE_COLUMNS("DPL"), RDMATEL_PERCENTILE_COLUMNS("RTT"),
    RDMATEL_PERCENTILE_COLUMNS("IOL1"), RDMATEL_PERCENTILE_COLUMNS("IOL2"), RDMATEL_PERCENTILE_COLUMNS("IOL"),
};
stat_tap_table_item kStorageColumns[] = {
    {TABLE_ITEM_STRING, TAP_ALIGN_LEFT, "Storage", "%-15s"},
    {TABLE_ITEM_UINT, TAP_ALIGN_RIGHT, "I/Os", "%u"},
    RDMATEL_US_COLUMNS("DAL"), RDMATEL_US_COLUMNS("DPL"), RDMATEL_US_COLUMNS("RTT"),
    RDMATEL_US_COLUMNS("IOL1"), RDMATEL_US_COLUMNS("IOL2"), RDMATEL_US_COLUMNS("IOL"),
    RDMATEL_PERCENTILE_COLUMNS("DAL"), RDMATEL_PERCENTILE_COLUMNS("DPL"), RDMATEL_PERCENTILE_COLUMNS("RTT"),
    RDMATEL_PERCENTILE_COLUMNS("IOL1"), RDMATEL_PERCENTILE_COLUMNS("IOL2"), RDMATEL_PERCENTILE_COLUMNS("IOL"),
};
stat_tap_table_item kPairColumns[] = {
    {TABLE_ITEM_STRING, TAP_ALIGN_LEFT, "Host", "%-15s"},
    {TABLE_ITEM_STRING, TAP_ALIGN_LEFT, "Storage", "%-15s"},
    {TABLE_ITEM_UINT, TAP_ALIGN_RIGHT, "I/Os", "%u"},
    RDMATEL_US_COLUMNS("DAL"), RDMATEL_US_COLUMNS("DPL"), RDMATEL_US_COLUMNS("RTT"),
    RDMATEL_US_COLUMNS("IOL1"), RDMATEL_US_COLUMNS("IOL2"), RDMATEL_US_COLUMNS("IOL"),
    RDMATEL_PERCENTILE_COLUMNS("DAL"), RDMATEL_PERCENTILE_COLUMNS("DPL"), RDMATEL_PERCENTILE_COLUMNS("RTT"),
    RDMATEL_PERCENTILE_COLUMNS("IOL1"), RDMATEL_PERCENTILE_COLUMNS("IOL2"), RDMATEL_PERCENTILE_COLUMNS("IOL"),
};
static_assert(G_N_ELEMENTS(kHostColumns) == 2 + kIoMetricColumns);
static_assert(G_N_ELEMENTS(kPairColumns) == 3 + kIoMetricColumns);

enum class IoGroupBy { kHost, kStorage, kPair };

template <IoGroupBy G>
struct IoSpec {
  using Stats = IoRow;
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

// A row key made of an address's bytes (the tables count every I/O and message: making text of
// their addresses for each cost more than counting them).
std::string address_key(const IpAddress& a) {
  std::string key(reinterpret_cast<const char*>(a.bytes.data()), a.bytes.size());
  key.push_back(a.v6 ? '6' : '4');
  return key;
}

template <IoGroupBy G>
tap_packet_status io_packet(void* tapdata, packet_info*, epan_dissect_t*, const void* data, tap_flags_t) {
  return KeyedTable<IoSpec<G>>::on_packet(
      tapdata, data, [](const TapFrame& tap) { return bool(tap.io_count); },
      [](stat_tap_table* t, const TapFrame& tap) {
        bool changed = false;
        for (unsigned i = 0; i < tap.io_count && i < TapFrame::kMaxRecords; ++i) {
          const IoRecord& r = *tap.ios[i];
          // Latency statistics cover reads and writes, as the engine's report does; other commands
          // are in the service response time table.
          if (!r.is_read() && !r.is_write()) continue;
          // Rows are found by the addresses' bytes; they become text for a new row only.
          if constexpr (G == IoGroupBy::kPair) {
            KeyedTable<IoSpec<G>>::add(
                t, address_key(r.host) + address_key(r.storage),
                [&](stat_tap_table_item_type* c) {
                  c[0].value.string_value = g_strdup(r.host.to_string().c_str());
                  c[1].value.string_value = g_strdup(r.storage.to_string().c_str());
                },
                r);
          } else {
            const IpAddress& ip = G == IoGroupBy::kHost ? r.host : r.storage;
            KeyedTable<IoSpec<G>>::add(
                t, address_key(ip),
                [&](stat_tap_table_item_type* c) { c[0].value.string_value = g_strdup(ip.to_string().c_str()); }, r);
          }
          changed = true;
        }
        return changed;
      });
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
  return KeyedTable<FlowSpec>::on_packet(
      tapdata, data, [](const TapFrame& tap) { return bool(tap.message_count); },
      [](stat_tap_table* t, const TapFrame& tap) {
        for (unsigned i = 0; i < tap.message_count && i < TapFrame::kMaxRecords; ++i) {
          const MessageRecord& m = tap.messages[i];
          const char* point = tap.message_points[i] ? tap.message_points[i] : "?";
          // Every message is counted (hundreds of thousands): its row is found by the flow's
          // bytes and the point's name; the addresses become text only for a new row.
          std::string key = address_key(m.src) + address_key(m.dst);
          key.append(reinterpret_cast<const char*>(&m.dst_qpn), sizeof m.dst_qpn);
          key.append(point);
          KeyedTable<FlowSpec>::add(
              t, key,
              [&](stat_tap_table_item_type* c) {
                c[0].value.string_value = g_strdup(m.src.to_string().c_str());
                c[1].value.string_value = g_strdup(m.dst.to_string().c_str());
                c[2].value.string_value = g_strdup(qpn_text(m.dst_qpn).c_str());
                c[3].value.string_value = g_strdup(point);
              },
              m);
        }
        return true;
      });
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
  using Stats = LatestRecord<DiagnosisRecord>;
  static constexpr const char* kTitle = "Diagnosis: who is to blame";
  static constexpr const char* kOnePassNote =
      " - ONE PASS: empty, the diagnosis is made at the end of the capture; run tshark -2 (the GUI: once a live capture stops)";
  static constexpr size_t kColumnCount = G_N_ELEMENTS(kDiagnosisColumns);
  static inline const stat_tap_table_item* const kColumns = kDiagnosisColumns;
  // In rank order, as rdmatel analyze lists the findings (each is counted on its frame to look at,
  // in frame order).
  static bool row_before(const stat_tap_table_item_type* a, const stat_tap_table_item_type* b) {
    return a[0].value.uint_value < b[0].value.uint_value;
  }
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
  return KeyedTable<DiagnosisSpec>::on_packet(
      tapdata, data, [](const TapFrame& tap) { return bool(tap.finding); },
      [](stat_tap_table* t, const TapFrame& tap) {
        const DiagnosisRecord& r = *tap.finding;
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
        return true;
      });
}

// ---------------------------------------------------------------------------------------------
// rdmatel,diagnosis,flows: the message-flow diagnosis's findings (rdmatel/flow_diagnosis.h), one
// row each, in the order rdmatel analyze lists them, counted on the frame to look at. The verdict
// and evidence are analyze's sentences; the columns between them its numbers.

stat_tap_table_item kFlowDiagnosisColumns[] = {
    {TABLE_ITEM_UINT, TAP_ALIGN_RIGHT, "Rank", "%u"},
    {TABLE_ITEM_STRING, TAP_ALIGN_LEFT, "Source", "%-15s"},
    {TABLE_ITEM_STRING, TAP_ALIGN_LEFT, "Destination", "%-15s"},
    {TABLE_ITEM_STRING, TAP_ALIGN_LEFT, "Dest QPN", "%s"},
    {TABLE_ITEM_STRING, TAP_ALIGN_LEFT, "Stands out by", "%s"},
    {TABLE_ITEM_STRING, TAP_ALIGN_LEFT, "Verdict", "%s"},
    {TABLE_ITEM_STRING, TAP_ALIGN_LEFT, "Point", "%s"},
    {TABLE_ITEM_FLOAT, TAP_ALIGN_RIGHT, "Retransmitted (%)", "%.1f"},
    {TABLE_ITEM_UINT, TAP_ALIGN_RIGHT, "NAKs", "%u"},
    {TABLE_ITEM_FLOAT, TAP_ALIGN_RIGHT, "FNR", "%.4f"},
    {TABLE_ITEM_STRING, TAP_ALIGN_LEFT, "Lossiest hop", "%s"},
    {TABLE_ITEM_UINT, TAP_ALIGN_RIGHT, "Hop lost", "%u"},
    {TABLE_ITEM_UINT, TAP_ALIGN_RIGHT, "Hop packets", "%u"},
    {TABLE_ITEM_FLOAT, TAP_ALIGN_RIGHT, "Hop loss (%)", "%.1f"},
    {TABLE_ITEM_FLOAT, TAP_ALIGN_RIGHT, "CE-marked (%)", "%.1f"},
    {TABLE_ITEM_UINT, TAP_ALIGN_RIGHT, "CNPs", "%u"},
    {TABLE_ITEM_UINT, TAP_ALIGN_RIGHT, "Pause frames", "%u"},
    {TABLE_ITEM_UINT, TAP_ALIGN_RIGHT, "Frame", "%u"},
    {TABLE_ITEM_STRING, TAP_ALIGN_LEFT, "Evidence", "%s"},
};

struct FlowDiagnosisSpec {
  using Stats = LatestRecord<FlowFindingRow>;
  static constexpr const char* kTitle = "Diagnosis: RDMA message flows";
  static constexpr const char* kOnePassNote = DiagnosisSpec::kOnePassNote;
  static constexpr size_t kColumnCount = G_N_ELEMENTS(kFlowDiagnosisColumns);
  static inline const stat_tap_table_item* const kColumns = kFlowDiagnosisColumns;
  // In rank order, as rdmatel analyze lists them (each is counted on its frame to look at, in
  // frame order).
  static bool row_before(const stat_tap_table_item_type* a, const stat_tap_table_item_type* b) {
    return a[0].value.uint_value < b[0].value.uint_value;
  }
  // The numbers the evidence gives, at the point it gives them; none (nan) where it has none.
  static void show(stat_tap_table_item_type* row, const Stats& s) {
    const FlowFinding* f = s.r ? &s.r->finding : nullptr;
    const PathRecord* hop = f && f->lossiest_hop ? &*f->lossiest_hop : nullptr;
    row[7].value.float_value = f && f->packets ? f->retrans_share() * 100.0 : kNone;
    row[8].value.uint_value = f ? guint(f->naks) : 0;
    row[9].value.float_value = f && f->fnr ? *f->fnr : kNone;
    row[11].value.uint_value = hop ? guint(hop->lost) : 0;
    row[12].value.uint_value = hop ? guint(hop->packets) : 0;
    row[13].value.float_value = hop ? double(hop->lost) / double(hop->packets) * 100.0 : kNone;
    row[14].value.float_value = f && f->ce_of ? f->ce_share() * 100.0 : kNone;
    row[15].value.uint_value = f ? guint(f->cnps_received) : 0;
    uint64_t pause_frames = 0;
    if (f)
      for (const FlowFinding::Pause& p : f->pauses) pause_frames += p.pfc.pause_frames;
    row[16].value.uint_value = guint(pause_frames);
    row[17].value.uint_value = s.r ? guint(s.r->frame) : 0;
  }
};

tap_packet_status flow_diagnosis_packet(void* tapdata, packet_info*, epan_dissect_t*, const void* data, tap_flags_t) {
  return KeyedTable<FlowDiagnosisSpec>::on_packet(
      tapdata, data, [](const TapFrame& tap) { return tap.flow_finding_count > 0; },
      [](stat_tap_table* t, const TapFrame& tap) {
        for (const FlowFindingRow& r : std::span(tap.flow_findings, tap.flow_finding_count)) {
          const FlowFinding& f = r.finding;
          KeyedTable<FlowDiagnosisSpec>::add(
              t, std::to_string(r.rank),
              [&](stat_tap_table_item_type* c) {
                c[0].value.uint_value = r.rank;
                c[1].value.string_value = g_strdup(f.src.to_string().c_str());
                c[2].value.string_value = g_strdup(f.dst.to_string().c_str());
                c[3].value.string_value = g_strdup(qpn_text(f.dst_qpn).c_str());
                c[4].value.string_value = g_strdup(flow_finding_kind_text(f.kind));
                c[5].value.string_value = g_strdup(r.verdict.c_str());
                c[6].value.string_value = g_strdup(r.point.c_str());
                c[10].value.string_value = g_strdup(r.hop.c_str());
                c[18].value.string_value = g_strdup(r.evidence.c_str());
              },
              r);
        }
        return true;
      });
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

}  // namespace

void register_io_tables(int proto) {
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
  static stat_tap_table_ui diagnosis = make_ui<DiagnosisSpec>(
      "RDMA Telemetry · Diagnosis: who is to blame", "rdmatel,diagnosis", &diagnosis_packet, kDiagnosisColumns);
  // (tshark takes the longest command that matches: rdmatel,diagnosis,flows is not the diagnosis
  // table with the filter "flows".)
  static stat_tap_table_ui flow_diagnosis =
      make_ui<FlowDiagnosisSpec>("RDMA Telemetry · Diagnosis: RDMA message flows", "rdmatel,diagnosis,flows",
                                 &flow_diagnosis_packet, kFlowDiagnosisColumns);
  register_stat_tap_table_ui(&io_host);
  register_stat_tap_table_ui(&io_storage);
  register_stat_tap_table_ui(&io_pair);
  register_stat_tap_table_ui(&msg_flow);
  register_stat_tap_table_ui(&diagnosis);
  register_stat_tap_table_ui(&flow_diagnosis);
  register_srt_table(proto, "rdmatel", int(kSrtTables), &srt_packet, &srt_init, nullptr);
}

}  // namespace rdmatel::plugin
