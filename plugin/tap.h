// SPDX-License-Identifier: GPL-2.0-or-later
// The "rdmatel" tap. Every listener of a tap receives the same data, so this one plain struct
// carries what all of them need: the statistics tables (the records counted on this frame) and
// the conversation/endpoint tables (the RDMA endpoints of this frame's packet).
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <type_traits>

#include "rdmatel/records.h"

namespace rdmatel::plugin {

struct FlowFindingRow;  // plugin/capture_state.h

struct TapFrame {
  static constexpr unsigned kMaxRecords = 2;  ///< one I/O or message per frame in practice

  /// True once the first pass is over (tshark -2, the GUI): the records are final. Otherwise
  /// they are the first pass's provisional snapshots.
  bool final = false;

  /// I/Os counted on this frame: each I/O once, on its compute-side completion (its command
  /// when it never completed; in one pass, only completed I/Os).
  unsigned io_count = 0;
  const IoRecord* ios[kMaxRecords] = {};

  /// RDMA messages counted on this frame (the frame that completes them at their point), with
  /// their observation point's name.
  unsigned message_count = 0;
  MessageRecord messages[kMaxRecords];
  const char* message_points[kMaxRecords] = {};

  /// A diagnosis finding shown on this frame (final records only: the diagnosis is made at the
  /// end of the first pass).
  const DiagnosisRecord* finding = nullptr;
  /// The message-flow diagnosis's findings to look at on this frame, by rank (final records only,
  /// as `finding`: they are made at the end of the first pass).
  const FlowFindingRow* flow_findings = nullptr;
  unsigned flow_finding_count = 0;

  /// Congestion records counted on this frame (final records only: they are made at the end of
  /// the first pass), with their point's name.
  const EcnRecord* congestion = nullptr;
  const CnpRecord* cnp = nullptr;
  unsigned pfc_count = 0;
  const PfcRecord* pfc[8] = {};
  const char* point_name = nullptr;
  /// A hop record (flow, point A -> point B) counted on this frame, its first packet at A (final
  /// records only: hops are reported at the end of the first pass), with the points' names.
  const PathRecord* hop = nullptr;
  const char* hop_from = nullptr;
  const char* hop_to = nullptr;

  /// The RoCEv2 packet's endpoints (IP + QPN); `roce` false for other frames. The sending QP
  /// is known once the capture showed the reverse direction of its queue pair (or from the
  /// DETH of a UD packet); `src_qpn` is 0 until then.
  bool roce = false;
  bool src_qpn_known = false;
  IpAddress src_ip, dst_ip;
  uint32_t src_qpn = 0, dst_qpn = 0;
};
// It lives in packet-scope wmem memory, which is freed without running destructors.
static_assert(std::is_trivially_destructible_v<TapFrame>);

/// Writes "10.1.0.1 QP 0x0004d2" (the QPN as Wireshark's InfiniBand Info column writes it), or "10.1.0.1 QP ?" while the QPN is unknown, into a
/// buffer of kEndpointNameSize bytes (no C++ object outlives the call: callers go on to Wireshark
/// calls that may longjmp).
inline constexpr size_t kEndpointNameSize = 64;
inline void endpoint_name(char* out, const IpAddress& ip, bool qpn_known, uint32_t qpn) {
  std::string addr = ip.to_string();
  if (qpn_known) std::snprintf(out, kEndpointNameSize, "%s QP 0x%06x", addr.c_str(), qpn);
  else std::snprintf(out, kEndpointNameSize, "%s QP ?", addr.c_str());
}

/// The tap's id (registered with the protocol).
int tap_id();

}  // namespace rdmatel::plugin
