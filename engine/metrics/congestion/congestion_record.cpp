// SPDX-License-Identifier: GPL-2.0-or-later
// The congestion and PFC records' schemas (channels "congestion" and "pfc").
#include "rdmatel/records.h"
#include "rdmatel/schema.h"

namespace rdmatel {
namespace {

const CongestionRecord& cg(const void* p) { return *static_cast<const CongestionRecord*>(p); }
const PfcRecord& pfc(const void* p) { return *static_cast<const PfcRecord*>(p); }

template <uint64_t CongestionRecord::*F>
bool cg_u(const void* p, Value& v) {
  v.u = cg(p).*F;
  return true;
}
template <uint64_t PfcRecord::*F>
bool pfc_u(const void* p, Value& v) {
  v.u = pfc(p).*F;
  return true;
}
bool set_ns(const std::optional<DurationNs>& d, Value& v) {
  if (!d) return false;
  v.i = *d;
  return true;
}

const Column kCongestionColumns[] = {
    {"src", ValueType::kAddress, [](const void* p, Value& v) { v.ip = &cg(p).src; return true; }, "Source IP"},
    {"dst", ValueType::kAddress, [](const void* p, Value& v) { v.ip = &cg(p).dst; return true; }, "Destination IP"},
    {"dst_qpn", ValueType::kUnsigned, [](const void* p, Value& v) { v.u = cg(p).dst_qpn; return true; },
     "Destination QPN"},
    {"point", ValueType::kPoint, [](const void* p, Value& v) { v.point = cg(p).point; return true; },
     "Observation point"},
    {"packets", ValueType::kUnsigned, cg_u<&CongestionRecord::packets>, "RoCE packets of the flow at the point"},
    {"ect_packets", ValueType::kUnsigned, cg_u<&CongestionRecord::ect_packets>,
     "ECN-capable packets (ECT(0), ECT(1) or CE)"},
    {"ce_packets", ValueType::kUnsigned, cg_u<&CongestionRecord::ce_packets>,
     "Packets marked congestion experienced (ECN CE)"},
    {"ce_ratio", ValueType::kRatio,
     [](const void* p, Value& v) {
       auto r = cg(p).ce_ratio();
       if (!r) return false;
       v.d = *r;
       return true;
     },
     "ce_packets / ect_packets (absent without ECN-capable packets)"},
    {"cnp_packets", ValueType::kUnsigned, cg_u<&CongestionRecord::cnp_packets>,
     "CNPs this flow carries (its source asks the destination to slow down)"},
    {"cnps_received", ValueType::kUnsigned,
     [](const void* p, Value& v) {
       if (!cg(p).cnps_received) return false;
       v.u = *cg(p).cnps_received;
       return true;
     },
     "CNPs on the reverse direction of the queue pair at the point: how often this flow's sender was told "
     "to slow down (absent until the two directions are paired)"},
    {"first_ns", ValueType::kSigned, [](const void* p, Value& v) { v.i = cg(p).first_ns; return true; },
     "First packet at the point, ns since the epoch (that point's clock)"},
    {"last_ns", ValueType::kSigned, [](const void* p, Value& v) { v.i = cg(p).last_ns; return true; },
     "Last packet at the point, ns"},
    {"first_ce_ns", ValueType::kSigned,
     [](const void* p, Value& v) { return set_ns(cg(p).first_ce_ns, v); }, "First CE-marked packet, ns"},
};

const Column kPfcColumns[] = {
    {"point", ValueType::kPoint, [](const void* p, Value& v) { v.point = pfc(p).point; return true; },
     "Observation point"},
    {"priority", ValueType::kUnsigned, [](const void* p, Value& v) { v.u = pfc(p).priority; return true; },
     "802.1p priority (0-7)"},
    {"frames", ValueType::kUnsigned, pfc_u<&PfcRecord::frames>, "PFC frames with this priority enabled"},
    {"pauses", ValueType::kUnsigned, pfc_u<&PfcRecord::pauses>, "Of which pause (quanta > 0)"},
    {"resumes", ValueType::kUnsigned, pfc_u<&PfcRecord::resumes>, "Of which resume (quanta 0)"},
    {"quanta", ValueType::kUnsigned, pfc_u<&PfcRecord::quanta>, "Sum of the pause quanta (512 bit times each)"},
    {"pause_us", ValueType::kMicros, [](const void* p, Value& v) { return set_ns(pfc(p).pause_ns, v); },
     "Pause time the quanta ask for at the link speed, µs (absent when the speed is unknown)"},
    {"longest_pause_us", ValueType::kMicros,
     [](const void* p, Value& v) { return set_ns(pfc(p).longest_pause_ns, v); },
     "Longest time the priority stayed paused without a break, µs (absent when the speed is unknown)"},
    {"storm", ValueType::kBool, [](const void* p, Value& v) { v.b = pfc(p).storm; return true; },
     "Paused without a break for at least the storm threshold (--pfc-storm)"},
    {"first_ns", ValueType::kSigned, [](const void* p, Value& v) { v.i = pfc(p).first_ns; return true; },
     "First PFC frame, ns since the epoch (the point's clock)"},
    {"last_ns", ValueType::kSigned, [](const void* p, Value& v) { v.i = pfc(p).last_ns; return true; },
     "Last PFC frame, ns"},
    {"first_frame", ValueType::kUnsigned, pfc_u<&PfcRecord::first_frame>, "Frame of the first PFC frame"},
    {"speed_bps", ValueType::kUnsigned, pfc_u<&PfcRecord::speed_bps>,
     "Link speed used for pause times, bit/s (0: unknown)"},
};

}  // namespace

const RecordSchema kCongestionSchema = {"congestion", "the ECN marks and CNPs of one flow at one observation point",
                                        kCongestionColumns};
const RecordSchema kPfcSchema = {"pfc", "the priority flow control of one priority at one observation point",
                                 kPfcColumns};

}  // namespace rdmatel
