// SPDX-License-Identifier: GPL-2.0-or-later
// The records the built-in metric components produce (SPEC §4, §5, §9): the single source of
// every number the front ends show. Each kind has a schema (rdmatel/schema.h) that writers,
// tables and Wireshark fields are driven by.
#pragma once

#include <array>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>

#include "rdmatel/types.h"

namespace rdmatel {

// ---- NVMe-oF I/Os (channel "io") ----

/// How an I/O record ended.
enum class IoEnd : uint8_t {
  kCompleted,   ///< completion seen at the compute side (or the single point)
  kCaptureEnd,  ///< the capture ended first
  kTimeout,     ///< no completion within the I/O timeout
  kEvicted,     ///< the outstanding-I/O limit forced it out early
};
const char* io_end_name(IoEnd e);

/// Timestamps T1..T7 of SPEC §4; each may be absent.
struct IoTimes {
  std::array<TimeNs, 8> t{};  ///< index 1..7
  uint8_t present = 0;        ///< bit i set when Ti is present

  bool has(int i) const { return present & (1u << i); }
  TimeNs operator[](int i) const { return t[i]; }
  void set(int i, TimeNs v) {
    t[i] = v;
    present |= uint8_t(1u << i);
  }
};

/// The GPUs, nodes and job of a message's or flow's two ends (SPEC §7, `--gpu-map`); null where
/// the map does not bind the IP. `job` is set when both ends are in the same job.
struct GpuEnds {
  const char* src_gpu = nullptr;
  const char* dst_gpu = nullptr;
  const char* src_node = nullptr;
  const char* dst_node = nullptr;
  const char* job = nullptr;
};

struct IoRecord {
  uint64_t id = 0;
  const char* op = "";  ///< "read", "write", "flush", "identify", ... (static string)
  uint8_t opcode = 0;
  uint8_t fctype = 0;
  bool admin = false;
  IpAddress host, storage;
  uint32_t qpn = 0;                  ///< storage-side QPN (destination QPN of host→storage packets)
  std::optional<uint32_t> host_qpn;  ///< when the reverse direction is known
  uint16_t cid = 0;
  uint32_t cmd_psn = 0;  ///< PSN of the command capsule: with (host, storage, qpn, cid) the I/O's key
  uint16_t status = 0;   ///< NVMe status field (0 = success), valid when a completion was seen
  bool status_known = false;  ///< the completion's status bytes were captured
  bool complete = false;
  IoEnd end = IoEnd::kCaptureEnd;
  bool in_capsule = false;
  bool provisional = false;  ///< a first-pass snapshot; a final record with the same id follows
  uint32_t length = 0;       ///< data length from the SGL
  IoTimes t;
  PointId compute_point = kNoPoint;
  PointId storage_point = kNoPoint;
  PointId iol_point = kNoPoint;  ///< where `iol` was measured
  uint16_t points = 0;           ///< observation points that saw the command
  std::optional<DurationNs> iol_ns;
  uint64_t cmd_frame = 0;  ///< 0 = not seen
  uint64_t rsp_frame = 0;
  /// The host's GPU, node and job (`--gpu-map`; null when unbound). Interned: valid for the
  /// life of the process.
  const char* host_gpu = nullptr;
  const char* host_node = nullptr;
  const char* job = nullptr;
  bool key_flow = false;                 ///< matches a --key-flow rule
  std::optional<TimeNs> poll_period_ns;  ///< with --poll-ports: start of the period of its first stamp

  bool fabrics() const { return opcode == 0x7F; }
  bool is_read() const { return !admin && opcode == 0x02 && !fabrics(); }
  bool is_write() const { return !admin && opcode == 0x01 && !fabrics(); }
};

/// SPEC §4 metrics of one I/O, in ns; absent when the capture lacks a timestamp.
struct IoMetrics {
  std::optional<DurationNs> dal, dpl, iol1, iol2, rtt, iol;
};
IoMetrics io_metrics(const IoRecord& r);

/// What one observation point saw of one NVMe I/O, from that point's packets and clock alone
/// (channel "io_points", with --point-local): the unit of scale-out, joined into I/O records
/// by the key (host, storage, qpn, cid, cmd_psn) wherever the points' observations meet.
struct IoPointRecord {
  const char* op = "";
  uint8_t opcode = 0;
  bool admin = false;
  IpAddress host, storage;
  uint32_t qpn = 0;
  std::optional<uint32_t> host_qpn;
  uint16_t cid = 0;
  uint32_t cmd_psn = 0;
  uint16_t status = 0;
  bool status_known = false;
  bool in_capsule = false;
  uint32_t length = 0;
  PointId point = kNoPoint;
  /// Stamps at this point (its clock): command, first data (read), READ REQUEST (write),
  /// first READ RESPONSE (write), completion.
  std::optional<TimeNs> command_ns, data_ns, read_request_ns, read_response_ns, completion_ns;
  uint64_t cmd_frame = 0, rsp_frame = 0;
  IoEnd end = IoEnd::kCaptureEnd;  ///< kCompleted when this point saw the completion
  int16_t ttl_command = -1, ttl_completion = -1;  ///< IP TTL / hop limit, -1 when not seen
  bool key_flow = false;  ///< matches a --key-flow rule (each agent is given the same rules)
};

// ---- RDMA messages (channel "messages") ----

/// What kind of RDMA message (SPEC §5).
enum class MessageKind : uint8_t { kWrite, kSend, kReadResponse };
const char* message_kind_name(MessageKind k);

/// One RDMA message as seen at one observation point (SPEC §5, §9).
struct MessageRecord {
  uint64_t id = 0;
  IpAddress src, dst;
  uint32_t dst_qpn = 0;
  PointId point = kNoPoint;
  MessageKind kind = MessageKind::kWrite;
  bool with_immediate = false;
  bool complete = false;  ///< FIRST and LAST seen and every PSN between them
  bool provisional = false;
  /// Set (front ends with frame notes only) when this message turned out to be part of message
  /// `merged_into` (its FIRST came later or was resent): its frames belong to that one now.
  uint64_t merged_into = 0;
  uint32_t first_psn = 0, last_psn = 0;
  TimeNs first_ns = 0, last_ns = 0;  ///< min and max stamp of its packets at the point
  uint64_t first_frame = 0, last_frame = 0;
  uint64_t packets = 0, retrans_packets = 0;
  uint64_t bytes = 0, retrans_bytes = 0;
  uint64_t naks = 0;
  GpuEnds gpu;
  bool key_flow = false;                 ///< matches a --key-flow rule
  std::optional<TimeNs> poll_period_ns;  ///< with --poll-ports: start of the period of its first packet

  DurationNs fct_ns() const { return last_ns - first_ns; }
  /// (bytes - retrans_bytes) * 8 / FCT in bit/s; absent when FCT is 0.
  std::optional<double> fet_bps() const;
  /// NAKs / original packets; absent when every packet was a retransmission.
  std::optional<double> fnr() const;
};

// ---- Flow periods (channel "flows") ----

/// Per flow, point and period counters (SPEC §5 "per period").
struct FlowPeriodRecord {
  IpAddress src, dst;
  uint32_t dst_qpn = 0;
  PointId point = kNoPoint;
  TimeNs period_start_ns = 0;
  DurationNs period_ns = 0;
  uint64_t packets = 0, bytes = 0;
  uint64_t retrans_packets = 0, retrans_bytes = 0;
  uint64_t naks = 0;
  uint64_t oos_packets = 0;
  // The congestion timeline: what slowed the flow down in this period, beside its loss above.
  uint64_t ce_packets = 0;  ///< its data packets marked congestion experienced (ECN CE)
  uint64_t cnps = 0;        ///< CNPs to its sender (the reverse direction of the queue pair)
  /// PFC pause frames (quanta > 0) at its point of its priority (that of its VLAN tag there; of
  /// any priority where its frames are untagged)
  uint64_t pfc_pauses = 0;
  GpuEnds gpu;
  bool key_flow = false;  ///< matches a --key-flow rule (with --poll-ports, period_start_ns is the polling period)

  uint64_t effective_bytes() const { return bytes - retrans_bytes; }
  /// Effective bytes * 8 / period, bit/s.
  double fet_bps() const { return period_ns ? double(effective_bytes()) * 8e9 / double(period_ns) : 0.0; }
};

// ---- Congestion (channel "congestion", SPEC §6) ----

/// What a congestion record counts: ECN marks of one flow, CNPs between two IPs, or PFC of one
/// priority, each at one observation point.
enum class CongestionKind : uint8_t { kEcn, kCnp, kPfc };
const char* congestion_kind_name(CongestionKind k);  ///< "ecn", "cnp", "pfc"

/// What every congestion record has; the record is an EcnRecord, CnpRecord or PfcRecord, told
/// by `kind` (the channel's records are delivered as pointers to this head).
struct CongestionHead {
  CongestionKind kind;
  PointId point = kNoPoint;
  TimeNs first_ns = 0, last_ns = 0;  ///< its first and last packet at the point (that point's clock)
  uint64_t first_frame = 0;          ///< the frame of its first packet at the point
};

/// ECN marks and CNPs of one flow at one observation point over the capture.
struct EcnRecord : CongestionHead {
  static constexpr CongestionKind kKind = CongestionKind::kEcn;
  EcnRecord() : CongestionHead{kKind} {}
  IpAddress src, dst;
  uint32_t dst_qpn = 0;
  uint64_t packets = 0;      ///< RoCE packets of the flow at the point
  uint64_t ect_packets = 0;  ///< ECN-capable transport (ECT(0), ECT(1)) or CE-marked
  uint64_t ce_packets = 0;   ///< congestion experienced (ECN 11)
  uint64_t cnp_packets = 0;  ///< CNPs carried by this flow (its source is the notification point)
  /// CNPs on the reverse direction of the queue pair at the point: how often this flow's sender
  /// was told to slow down. Absent until the two directions are paired.
  std::optional<uint64_t> cnps_received;
  std::optional<TimeNs> first_ce_ns;
  /// The 802.1p priority of its first packet's VLAN tag at the point (absent: untagged, where the
  /// switch picks the priority from the DSCP with a table the capture does not show).
  std::optional<uint8_t> priority;
  uint8_t dscp = 0;  ///< its first packet's DSCP

  /// CE-marked / RoCE packets (SPEC §6).
  std::optional<double> ce_ratio() const {
    if (!packets) return std::nullopt;
    return double(ce_packets) / double(packets);
  }
};

/// CNPs from one IP to another at one observation point, whatever their queue pairs.
struct CnpRecord : CongestionHead {
  static constexpr CongestionKind kKind = CongestionKind::kCnp;
  CnpRecord() : CongestionHead{kKind} {}
  IpAddress src, dst;  ///< src: the notification point (the data's receiver); dst: the sender told to slow down
  uint64_t cnps = 0;
};

/// 802.1Qbb priority flow control at one observation point, for one priority.
struct PfcRecord : CongestionHead {
  static constexpr CongestionKind kKind = CongestionKind::kPfc;
  PfcRecord() : CongestionHead{kKind} {}
  uint8_t priority = 0;
  uint64_t frames = 0;         ///< PFC frames with this priority enabled
  uint64_t pause_frames = 0;   ///< of which quanta > 0
  uint64_t resume_frames = 0;  ///< of which quanta 0 (XON)
  uint64_t quanta = 0;         ///< sum of the pause quanta (512 bit times each)
  /// The pause time the quanta ask for at the point's link speed; absent when it is unknown.
  std::optional<DurationNs> pause_ns;
  /// Longest time the priority stayed paused without a break (later pauses refresh the timer,
  /// a resume ends it); absent when the link speed is unknown.
  std::optional<DurationNs> longest_pause_ns;
  bool storm = false;      ///< paused without a break for at least the storm threshold
  uint64_t speed_bps = 0;  ///< link speed used, 0 when unknown
};

/// The congestion record as T (EcnRecord, CnpRecord or PfcRecord) when it is one, else nullptr.
template <typename T>
const T* congestion_as(const CongestionHead& h) {
  return h.kind == T::kKind ? static_cast<const T*>(&h) : nullptr;
}

/// How the clock of one observation point relates to another's, estimated from packets seen at
/// both (channel "offsets"). No metric needs it (each is a difference of stamps of one point);
/// it says how far apart the capture clocks were.
struct OffsetRecord {
  PointId point = kNoPoint;
  PointId reference = kNoPoint;
  /// Add it to the point's stamps to get the reference's clock: the reference's clock minus
  /// this point's (SPEC §6; what --clock-offset takes).
  DurationNs offset_ns = 0;
  /// The offset lies within ± this. Absent when the packets crossed one way only: the offset then
  /// holds the one-way delay, and nothing in the capture bounds it.
  std::optional<DurationNs> uncertainty_ns;
  uint64_t samples = 0;           ///< packets seen at both points
  /// Packets travelled both ways between the two points: the one-way delays cancel. Otherwise
  /// the offset still holds the delay between them.
  bool both_directions = false;
};

/// The packets of one flow over one hop, from observation point A to the next point B of their
/// path (channel "paths"). A packet is one copy of (flow, PSN, opcode, payload length, AETH,
/// IPv4 ID): a retransmission is a copy of its own. Delays compare two points' clocks: they are
/// corrected by the points' clock offsets where those are given (--clock-offset) or estimated
/// (--estimate-offsets), raw stamp differences otherwise.
struct PathRecord {
  IpAddress src, dst;
  uint32_t dst_qpn = 0;
  PointId from_point = kNoPoint, to_point = kNoPoint;
  uint64_t packets = 0;    ///< copies seen at A whose path goes on to B
  uint64_t lost = 0;       ///< of which never seen at B
  uint64_t delivered = 0;  ///< packets - lost: the delays' sample count
  DurationNs min_ns = 0, max_ns = 0;
  double sum_ns = 0;  ///< sum of the delays (avg = sum_ns / delivered)
  /// Added to every raw stamp difference t_B - t_A (the --clock-offset of B minus that of A, or
  /// the estimate); absent when no offset is known for either point: the delays are raw.
  std::optional<DurationNs> offset_applied_ns;
  bool offset_estimated = false;  ///< offset_applied_ns is --estimate-offsets' estimate
  /// No packet of the flow reached a second point: the hop is on the path the other flows show
  /// (between the same endpoints, or from and to the points next to them); every packet is lost.
  bool path_inferred = false;
  uint64_t first_frame = 0;          ///< the first packet's frame at A
  TimeNs first_ns = 0, last_ns = 0;  ///< first and last packet at A (A's clock)

  std::optional<DurationNs> avg_ns() const {
    if (!delivered) return std::nullopt;
    return DurationNs(std::llround(sum_ns / double(delivered)));
  }
};

// ---- Diagnosis (channel "diagnosis") ----

/// What a diagnosis record is about (SPEC §7).
enum class DiagnosisScope : uint8_t { kHost, kStorage, kPair, kJob };
const char* diagnosis_scope_name(DiagnosisScope s);
struct DiagnosisRecord;
/// "storage 10.2.0.2", "host 10.1.0.1", "pair 10.1.0.1 - 10.2.0.2", "job NAME".
std::string diagnosis_scope_text(const DiagnosisRecord& r);
/// The verdict in words: "the storage is slow", "the network loses packets", ..., "" for none.
const char* diagnosis_verdict_text(const DiagnosisRecord& r);

/// Where the time of a scope's I/Os goes and, when one segment stands out against the scope's
/// peers in the same capture, which one is to blame (method: docs/metrics.md, "Diagnosis").
struct DiagnosisRecord {
  DiagnosisScope scope = DiagnosisScope::kHost;
  std::optional<IpAddress> host, storage;  ///< the scope's IPs (both for a pair)
  std::string job;                         ///< scope job: the AI job's name
  uint64_t ios = 0;                        ///< read and write I/Os of the scope
  uint64_t split_ios = 0;                  ///< of which seen at both sides (IOL1, IOL2 and RTT known)
  /// Shares of IOL1 (over the split I/Os): at the storage (IOL2 minus the host's DPL), in the
  /// network (RTT), at the host (DPL, writes). Absent without split I/Os (one point).
  std::optional<double> storage_share, network_share, host_share;
  const char* segment = "none";  ///< "storage", "network", "host" or "none"
  const char* metric = "";       ///< the metric that decided: "dal", "rtt", "dpl" (empty: none)
  std::optional<DurationNs> value_ns;        ///< the scope's mean of `metric`
  std::optional<DurationNs> peer_median_ns;  ///< the median of its peers' means
  std::string evidence;                      ///< one sentence: the numbers and what was seen on the path
  /// A finding that a narrower or wider scope explains (e.g. a host slow only towards one
  /// storage): that scope, as text. Empty when the finding stands on its own.
  std::string explained_by;
  uint32_t rank = 0;  ///< 1 = the biggest standing finding of the capture, 2 the next...; 0 = none
  /// Where to look: the command frame of the scope's I/O with the highest `metric`, or for a
  /// path that loses packets the first frame of its message with the most retransmissions.
  uint64_t worst_frame = 0;
};

// ---- Alerts (channel "alerts") ----

/// One alert (SPEC §7): a record whose metric crossed a threshold rule (`--alert`), or a period
/// whose mean spiked against its scope's rolling baseline.
struct AlertRecord {
  const char* kind = "threshold";  ///< "threshold" or "spike"
  TimeNs time_ns = 0;              ///< the I/O's command, the message's first packet, the period's start
  const char* metric = "";         ///< "dal", ..., "fnr" (as in the records, without unit)
  double value = 0;                ///< µs for latencies and FCT, bit/s for FET, a ratio for FNR
  std::optional<double> threshold;  ///< kind threshold
  std::optional<double> baseline;   ///< kind spike: the median of the scope's previous periods
  std::string rule;                 ///< the rule as given, or how the spike was found
  // What fired: an I/O's keys, a message's keys, or a spike's scope.
  std::optional<IpAddress> host, storage;
  std::optional<uint32_t> qpn;
  std::optional<uint16_t> cid;
  uint64_t cmd_frame = 0;
  std::optional<IpAddress> src, dst;
  std::optional<uint32_t> dst_qpn;
  PointId point = kNoPoint;
  std::optional<uint32_t> first_psn;
  std::string scope;     ///< kind spike: "host 10.1.0.1", "flow 10.3.0.1 > 10.4.0.1 QP 17 at leafA-gpu", ...
  uint64_t frame = 0;    ///< where Wireshark shows it: the frame that counts the I/O or completes the message
};

}  // namespace rdmatel
