// SPDX-License-Identifier: GPL-2.0-or-later
// The congestion records' schema (channel "congestion", SPEC §6): one channel, three kinds of
// record (ECN per flow, CNPs per IP pair, PFC per priority), each at one observation point. A
// column a kind does not have is absent from its records (left out of JSON, empty in CSV).
#include "rdmatel/records.h"
#include "engine/src/output/column_line_writer.h"
#include "rdmatel/schema.h"

namespace rdmatel {

const char* congestion_kind_name(CongestionKind k) {
  switch (k) {
    case CongestionKind::kEcn: return "ecn";
    case CongestionKind::kCnp: return "cnp";
    case CongestionKind::kPfc: return "pfc";
  }
  return "?";
}

namespace {

const CongestionHead& head(const void* p) { return *static_cast<const CongestionHead*>(p); }
const EcnRecord* ecn(const void* p) { return congestion_as<EcnRecord>(head(p)); }
const CnpRecord* cnp(const void* p) { return congestion_as<CnpRecord>(head(p)); }
const PfcRecord* pfc(const void* p) { return congestion_as<PfcRecord>(head(p)); }

template <uint64_t EcnRecord::*F>
bool ecn_u(const void* p, Value& v) {
  const EcnRecord* r = ecn(p);
  if (!r) return false;
  v.u = r->*F;
  return true;
}
template <uint64_t PfcRecord::*F>
bool pfc_u(const void* p, Value& v) {
  const PfcRecord* r = pfc(p);
  if (!r) return false;
  v.u = r->*F;
  return true;
}
bool set_ns(const std::optional<DurationNs>& d, Value& v) {
  if (!d) return false;
  v.i = *d;
  return true;
}

constexpr Column kCongestionColumns[] = {
    {"point", ValueType::kPoint, [](const void* p, Value& v) { v.point = head(p).point; return true; },
     "Observation point"},
    {"kind", ValueType::kString,
     [](const void* p, Value& v) { v.s = congestion_kind_name(head(p).kind); return true; },
     "ecn: one flow's ECN marks and CNPs; cnp: CNPs from one IP to another; pfc: one priority's PFC"},
    {"src", ValueType::kAddress,
     [](const void* p, Value& v) {
       if (const EcnRecord* r = ecn(p)) v.ip = &r->src;
       else if (const CnpRecord* c = cnp(p)) v.ip = &c->src;
       else return false;
       return true;
     },
     "Source IP (cnp: the notification point, the data's receiver)"},
    {"dst", ValueType::kAddress,
     [](const void* p, Value& v) {
       if (const EcnRecord* r = ecn(p)) v.ip = &r->dst;
       else if (const CnpRecord* c = cnp(p)) v.ip = &c->dst;
       else return false;
       return true;
     },
     "Destination IP (cnp: the sender told to slow down)"},
    {"dst_qpn", ValueType::kUnsigned,
     [](const void* p, Value& v) {
       if (!ecn(p)) return false;
       v.u = ecn(p)->dst_qpn;
       return true;
     },
     "ecn: destination QPN of the flow"},
    {"priority", ValueType::kUnsigned,
     [](const void* p, Value& v) {
       if (const PfcRecord* r = pfc(p)) v.u = r->priority;
       else if (const EcnRecord* e = ecn(p); e && e->priority) v.u = *e->priority;
       else return false;
       return true;
     },
     "pfc: 802.1p priority (0-7); ecn: the priority in the VLAN tag of the flow's first data or ACK packet at the "
     "point (absent: untagged, the switch then takes it from the DSCP)"},
    {"dscp", ValueType::kUnsigned,
     [](const void* p, Value& v) {
       const EcnRecord* e = ecn(p);
       if (!e || e->packets == e->cnp_packets) return false;
       v.u = e->dscp;
       return true;
     },
     "ecn: DSCP of the flow's first data or ACK packet at the point"},
    {"packets", ValueType::kUnsigned, ecn_u<&EcnRecord::packets>, "ecn: RoCE packets of the flow at the point"},
    {"ect_packets", ValueType::kUnsigned, ecn_u<&EcnRecord::ect_packets>,
     "ecn: ECN-capable packets (ECT(0), ECT(1) or CE)"},
    {"ce_packets", ValueType::kUnsigned, ecn_u<&EcnRecord::ce_packets>,
     "ecn: packets marked congestion experienced (ECN CE)"},
    {"ce_ratio", ValueType::kRatio,
     [](const void* p, Value& v) {
       auto r = ecn(p) ? ecn(p)->ce_ratio() : std::nullopt;
       if (!r) return false;
       v.d = *r;
       return true;
     },
     "ecn: ce_packets / packets"},
    {"cnp_packets", ValueType::kUnsigned, ecn_u<&EcnRecord::cnp_packets>,
     "ecn: CNPs this flow carries (its source asks the destination to slow down)"},
    {"cnps_received", ValueType::kUnsigned,
     [](const void* p, Value& v) {
       if (!ecn(p) || !ecn(p)->cnps_received) return false;
       v.u = *ecn(p)->cnps_received;
       return true;
     },
     "ecn: CNPs on the reverse direction of the queue pair at the point: how often this flow's sender was "
     "told to slow down (absent until the two directions are paired)"},
    {"cnps", ValueType::kUnsigned,
     [](const void* p, Value& v) {
       if (!cnp(p)) return false;
       v.u = cnp(p)->cnps;
       return true;
     },
     "cnp: CNPs from src to dst at the point"},
    {"frames", ValueType::kUnsigned, pfc_u<&PfcRecord::frames>, "pfc: PFC frames with this priority enabled"},
    {"pause_frames", ValueType::kUnsigned, pfc_u<&PfcRecord::pause_frames>, "pfc: of which pause (quanta > 0)"},
    {"resume_frames", ValueType::kUnsigned, pfc_u<&PfcRecord::resume_frames>, "pfc: of which resume (quanta 0)"},
    {"quanta", ValueType::kUnsigned, pfc_u<&PfcRecord::quanta>, "pfc: sum of the pause quanta (512 bit times each)"},
    {"pause_us", ValueType::kMicros,
     [](const void* p, Value& v) { return pfc(p) && set_ns(pfc(p)->pause_ns, v); },
     "pfc: pause time the quanta ask for at the link speed, µs (absent with --link-speed 0 where the capture "
     "records no speed)"},
    {"longest_pause_us", ValueType::kMicros,
     [](const void* p, Value& v) { return pfc(p) && set_ns(pfc(p)->longest_pause_ns, v); },
     "pfc: longest time the priority stayed paused without a break, µs"},
    {"storm", ValueType::kBool,
     [](const void* p, Value& v) {
       if (!pfc(p)) return false;
       v.b = pfc(p)->storm;
       return true;
     },
     "pfc: paused without a break for at least the storm threshold (--pfc-storm)"},
    {"speed_bps", ValueType::kUnsigned, pfc_u<&PfcRecord::speed_bps>,
     "pfc: link speed used for pause times, bit/s (the capture's if_speed, else --link-speed; 0: unknown)"},
    {"first_ns", ValueType::kSigned, [](const void* p, Value& v) { v.i = head(p).first_ns; return true; },
     "First packet or frame at the point, ns since the epoch (that point's clock)"},
    {"last_ns", ValueType::kSigned, [](const void* p, Value& v) { v.i = head(p).last_ns; return true; },
     "Last packet or frame at the point, ns"},
    {"first_ce_ns", ValueType::kSigned,
     [](const void* p, Value& v) { return ecn(p) && set_ns(ecn(p)->first_ce_ns, v); },
     "ecn: first CE-marked packet, ns"},
    {"first_frame", ValueType::kUnsigned, [](const void* p, Value& v) { v.u = head(p).first_frame; return true; },
     "Frame of its first packet or frame at the point"},
};

// A congestion record is delivered as its head: copied and freed as the kind the head names.
template <typename T>
CongestionHead* copy_of(const CongestionHead& h) {
  return new T(static_cast<const T&>(h));
}
void* clone_congestion(const void* record) {
  const CongestionHead& h = *static_cast<const CongestionHead*>(record);
  switch (h.kind) {
    case CongestionKind::kEcn: return copy_of<EcnRecord>(h);
    case CongestionKind::kCnp: return copy_of<CnpRecord>(h);
    case CongestionKind::kPfc: return copy_of<PfcRecord>(h);
  }
  return nullptr;
}
void destroy_congestion(void* copy) {
  CongestionHead* h = static_cast<CongestionHead*>(copy);
  switch (h->kind) {
    case CongestionKind::kEcn: delete static_cast<EcnRecord*>(h); return;
    case CongestionKind::kCnp: delete static_cast<CnpRecord*>(h); return;
    case CongestionKind::kPfc: delete static_cast<PfcRecord*>(h); return;
  }
}

}  // namespace

const RecordSchema kCongestionSchema = {
    "congestion",
    "one kind of congestion signal at one observation point: a flow's ECN marks (kind ecn), the CNPs between two "
    "IPs (kind cnp) or one priority's PFC (kind pfc)",
    kCongestionColumns,
    {clone_congestion, destroy_congestion},
    line_writers<kCongestionColumns>()};

}  // namespace rdmatel
