// SPDX-License-Identifier: GPL-2.0-or-later
#include "rdmatel/report.h"

namespace rdmatel {

void FlowStats::add(const MessageRecord& m) {
  ++messages;
  if (!m.complete) ++partial;
  packets += m.packets;
  retrans_packets += m.retrans_packets;
  bytes += m.bytes;
  retrans_bytes += m.retrans_bytes;
  naks += m.naks;
  fct.add(m.fct_ns());
  kinds |= uint8_t(1u << unsigned(m.kind));
  if (messages == 1 || m.first_ns < first_ns) first_ns = m.first_ns;
  if (messages == 1 || m.last_ns > last_ns) last_ns = m.last_ns;
  if (m.fct_ns() > 0) {
    timed_effective += m.bytes - m.retrans_bytes;
    timed_fct += m.fct_ns();
  }
}

std::optional<double> FlowStats::fet_bps() const {
  if (timed_fct <= 0) return std::nullopt;
  return double(timed_effective) * 8e9 / double(timed_fct);
}

double FlowStats::fet_coverage() const {
  const uint64_t effective = bytes - retrans_bytes;
  return effective ? double(timed_effective) / double(effective) : 0.0;
}

std::optional<double> FlowStats::rate_bps() const {
  if (last_ns <= first_ns) return std::nullopt;
  return double(bytes - retrans_bytes) * 8e9 / double(last_ns - first_ns);
}

std::optional<double> FlowStats::fnr() const {
  uint64_t originals = packets - retrans_packets;
  if (!originals) return std::nullopt;
  return double(naks) / double(originals);
}

}  // namespace rdmatel
