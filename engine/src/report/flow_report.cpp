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
  if (m.fct_ns() > 0) {
    timed_effective += m.bytes - m.retrans_bytes;
    timed_fct += m.fct_ns();
  }
}

std::optional<double> FlowStats::fet_bps() const {
  if (timed_fct <= 0) return std::nullopt;
  return double(timed_effective) * 8e9 / double(timed_fct);
}

std::optional<double> FlowStats::fnr() const {
  uint64_t originals = packets - retrans_packets;
  if (!originals) return std::nullopt;
  return double(naks) / double(originals);
}

}  // namespace rdmatel
