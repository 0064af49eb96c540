// SPDX-License-Identifier: GPL-2.0-or-later
// The alert record's schema (channel "alerts").
#include "rdmatel/records.h"
#include "engine/src/output/column_line_writer.h"
#include "rdmatel/schema.h"

namespace rdmatel {
namespace {

const AlertRecord& al(const void* p) { return *static_cast<const AlertRecord*>(p); }

bool ip(const std::optional<IpAddress>& a, Value& v) {
  if (!a) return false;
  v.ip = &*a;
  return true;
}
template <typename T>
bool num(const std::optional<T>& n, Value& v) {
  if (!n) return false;
  v.u = *n;
  return true;
}
bool real(const std::optional<double>& d, Value& v) {
  if (!d) return false;
  v.d = *d;
  return true;
}
bool text(const std::string& s, Value& v) {
  if (s.empty()) return false;
  v.s = s;
  return true;
}
bool frame(uint64_t f, Value& v) {
  v.u = f;
  return f != 0;
}

constexpr Column kAlertColumns[] = {
    {"kind", ValueType::kString, [](const void* p, Value& v) { v.s = al(p).kind; return true; },
     "threshold (a record crossed an --alert rule) or spike (a period against its scope's baseline)"},
    {"time_ns", ValueType::kSigned, [](const void* p, Value& v) { v.i = al(p).time_ns; return true; },
     "When: the I/O's command, the message's first packet or the period's start, ns since the epoch"},
    {"metric", ValueType::kString, [](const void* p, Value& v) { v.s = al(p).metric; return true; },
     "dal, dpl, iol1, iol2, rtt, iol, fct, fet or fnr"},
    {"value", ValueType::kRatio, [](const void* p, Value& v) { v.d = al(p).value; return true; },
     "The metric's value: µs for latencies and FCT, bit/s for FET, a ratio for FNR"},
    {"threshold", ValueType::kRatio, [](const void* p, Value& v) { return real(al(p).threshold, v); },
     "The rule's threshold, in the metric's unit"},
    {"baseline", ValueType::kRatio, [](const void* p, Value& v) { return real(al(p).baseline, v); },
     "Spike: the median of the scope's previous periods, in the metric's unit"},
    {"rule", ValueType::kString, [](const void* p, Value& v) { return text(al(p).rule, v); },
     "The rule as given, or how the spike was found"},
    {"host", ValueType::kAddress, [](const void* p, Value& v) { return ip(al(p).host, v); }, "The I/O's host IP"},
    {"storage", ValueType::kAddress, [](const void* p, Value& v) { return ip(al(p).storage, v); },
     "The I/O's storage IP"},
    {"qpn", ValueType::kUnsigned, [](const void* p, Value& v) { return num(al(p).qpn, v); },
     "The I/O's storage-side QPN"},
    {"cid", ValueType::kUnsigned, [](const void* p, Value& v) { return num(al(p).cid, v); }, "The I/O's command id"},
    {"cmd_frame", ValueType::kUnsigned, [](const void* p, Value& v) { return frame(al(p).cmd_frame, v); },
     "The I/O's command frame"},
    {"src", ValueType::kAddress, [](const void* p, Value& v) { return ip(al(p).src, v); }, "The message's source IP"},
    {"dst", ValueType::kAddress, [](const void* p, Value& v) { return ip(al(p).dst, v); },
     "The message's destination IP"},
    {"dst_qpn", ValueType::kUnsigned, [](const void* p, Value& v) { return num(al(p).dst_qpn, v); },
     "The message's destination QPN"},
    {"point", ValueType::kPoint,
     [](const void* p, Value& v) {
       v.point = al(p).point;
       return v.point != kNoPoint;
     },
     "The message's observation point"},
    {"first_psn", ValueType::kUnsigned, [](const void* p, Value& v) { return num(al(p).first_psn, v); },
     "The message's first PSN"},
    {"scope", ValueType::kString, [](const void* p, Value& v) { return text(al(p).scope, v); },
     "Spike: the host, storage server, job or flow whose period spiked"},
    {"frame", ValueType::kUnsigned, [](const void* p, Value& v) { return frame(al(p).frame, v); },
     "Where Wireshark shows it: the frame that counts the I/O or completes the message"},
};

}  // namespace

const RecordSchema kAlertSchema = {"alerts", "a threshold crossed by an I/O or message, or a spike of a period",
                                   kAlertColumns, copy_as<AlertRecord>(), line_writers<kAlertColumns>()};

}  // namespace rdmatel
