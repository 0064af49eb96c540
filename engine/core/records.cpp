// SPDX-License-Identifier: GPL-2.0-or-later
#include "engine/core/records.h"

namespace rdmatel {

const char* io_end_name(IoEnd e) {
  switch (e) {
    case IoEnd::kCompleted: return "completed";
    case IoEnd::kCaptureEnd: return "capture_end";
    case IoEnd::kTimeout: return "timeout";
    case IoEnd::kEvicted: return "evicted";
  }
  return "unknown";
}

const char* message_kind_name(MessageKind k) {
  switch (k) {
    case MessageKind::kWrite: return "write";
    case MessageKind::kSend: return "send";
    case MessageKind::kReadResponse: return "read_response";
  }
  return "unknown";
}

std::optional<double> MessageRecord::fet_bps() const {
  DurationNs fct = fct_ns();
  if (fct <= 0) return std::nullopt;
  return double(bytes - retrans_bytes) * 8e9 / double(fct);
}

std::optional<double> MessageRecord::fnr() const {
  uint64_t originals = packets - retrans_packets;
  if (originals == 0) return std::nullopt;
  return double(naks) / double(originals);
}

IoMetrics io_metrics(const IoRecord& r) {
  IoMetrics m;
  const IoTimes& t = r.t;
  auto diff = [&](int a, int b) -> std::optional<DurationNs> {
    if (t.has(a) && t.has(b)) return t[a] - t[b];
    return std::nullopt;
  };
  if (r.is_write()) {
    m.dal = diff(3, 2);
    m.dpl = diff(5, 4);
    m.iol1 = diff(7, 1);
    m.iol2 = diff(6, 2);
  } else {
    if (r.is_read()) m.dal = diff(3, 2);
    m.iol1 = diff(5, 1);
    m.iol2 = diff(4, 2);
  }
  if (m.iol1 && m.iol2) m.rtt = *m.iol1 - *m.iol2;
  m.iol = r.iol_ns;
  return m;
}

}  // namespace rdmatel
