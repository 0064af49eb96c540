// SPDX-License-Identifier: GPL-2.0-or-later
// The message and flow-period records' metrics (SPEC §5) and schemas (channels "messages",
// "flows", SPEC §9).
#include "rdmatel/records.h"
#include "engine/src/output/column_line_writer.h"
#include "rdmatel/schema.h"

namespace rdmatel {

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

namespace {

const MessageRecord& msg(const void* p) { return *static_cast<const MessageRecord*>(p); }
const FlowPeriodRecord& per(const void* p) { return *static_cast<const FlowPeriodRecord*>(p); }

template <uint64_t MessageRecord::*F>
bool msg_u(const void* p, Value& v) {
  v.u = msg(p).*F;
  return true;
}
template <uint64_t FlowPeriodRecord::*F>
bool per_u(const void* p, Value& v) {
  v.u = per(p).*F;
  return true;
}

// The GPU columns of messages and flows (SPEC §7), for a record type with a `gpu` member.
template <typename R, const char* GpuEnds::*F>
bool gpu_name(const void* p, Value& v) {
  return name_or_absent(static_cast<const R*>(p)->gpu.*F, v);
}
#define RDMATEL_GPU_COLUMNS(R)                                                                        \
  {"src_gpu", ValueType::kString, gpu_name<R, &GpuEnds::src_gpu>, "The source IP's GPU (--gpu-map)"}, \
      {"dst_gpu", ValueType::kString, gpu_name<R, &GpuEnds::dst_gpu>, "The destination IP's GPU"},    \
      {"src_node", ValueType::kString, gpu_name<R, &GpuEnds::src_node>, "The source IP's node"},      \
      {"dst_node", ValueType::kString, gpu_name<R, &GpuEnds::dst_node>, "The destination IP's node"}, \
      {"job", ValueType::kString, gpu_name<R, &GpuEnds::job>, "The AI job, when both ends are in the same one"}

constexpr Column kMessageColumns[] = {
    {"src", ValueType::kAddress, [](const void* p, Value& v) { v.ip = &msg(p).src; return true; }, "Source IP"},
    {"dst", ValueType::kAddress, [](const void* p, Value& v) { v.ip = &msg(p).dst; return true; }, "Destination IP"},
    {"dst_qpn", ValueType::kUnsigned, [](const void* p, Value& v) { v.u = msg(p).dst_qpn; return true; },
     "Destination QPN"},
    {"point", ValueType::kPoint, [](const void* p, Value& v) { v.point = msg(p).point; return true; },
     "Observation point"},
    {"kind", ValueType::kString, [](const void* p, Value& v) { v.s = message_kind_name(msg(p).kind); return true; },
     "write, send or read_response"},
    {"with_immediate", ValueType::kBool, [](const void* p, Value& v) { v.b = msg(p).with_immediate; return true; },
     "The message carries immediate data"},
    {"complete", ValueType::kBool, [](const void* p, Value& v) { v.b = msg(p).complete; return true; },
     "FIRST, LAST and every PSN between them were seen at the point"},
    {"first_psn", ValueType::kUnsigned, [](const void* p, Value& v) { v.u = msg(p).first_psn; return true; },
     "First PSN"},
    {"last_psn", ValueType::kUnsigned, [](const void* p, Value& v) { v.u = msg(p).last_psn; return true; },
     "Last PSN"},
    {"first_ns", ValueType::kSigned, [](const void* p, Value& v) { v.i = msg(p).first_ns; return true; },
     "Earliest stamp of its packets at the point, ns since the epoch (that point's clock)"},
    {"last_ns", ValueType::kSigned, [](const void* p, Value& v) { v.i = msg(p).last_ns; return true; },
     "Latest stamp of its packets at the point, ns"},
    {"fct_us", ValueType::kMicros, [](const void* p, Value& v) { v.i = msg(p).fct_ns(); return true; },
     "FCT: last packet - first packet at the point, retransmissions included, µs"},
    {"bytes", ValueType::kUnsigned, msg_u<&MessageRecord::bytes>, "Payload bytes seen, retransmissions included"},
    {"retrans_bytes", ValueType::kUnsigned, msg_u<&MessageRecord::retrans_bytes>,
     "Payload bytes of retransmitted packets"},
    {"packets", ValueType::kUnsigned, msg_u<&MessageRecord::packets>, "Data packets seen, copies included"},
    {"retrans_packets", ValueType::kUnsigned, msg_u<&MessageRecord::retrans_packets>,
     "Packets whose PSN was not newer than the newest seen at the point"},
    {"naks", ValueType::kUnsigned, msg_u<&MessageRecord::naks>, "NAKs in the reverse direction naming a PSN of it"},
    {"fet_bps", ValueType::kRate,
     [](const void* p, Value& v) {
       auto f = msg(p).fet_bps();
       if (!f) return false;
       v.d = *f;
       return true;
     },
     "FET = (bytes - retrans_bytes) * 8 / FCT, bit/s (absent when FCT = 0)"},
    {"fnr", ValueType::kRatio,
     [](const void* p, Value& v) {
       auto f = msg(p).fnr();
       if (!f) return false;
       v.d = *f;
       return true;
     },
     "FNR = NAKs / original packets"},
    {"first_frame", ValueType::kUnsigned, msg_u<&MessageRecord::first_frame>, "Frame of its first packet"},
    {"last_frame", ValueType::kUnsigned, msg_u<&MessageRecord::last_frame>, "Frame that completes it"},
    RDMATEL_GPU_COLUMNS(MessageRecord),
    {"key_flow", ValueType::kBool, [](const void* p, Value& v) { v.b = msg(p).key_flow; return true; },
     "The message's flow matches a --key-flow rule"},
    {"poll_period_ns", ValueType::kSigned,
     [](const void* p, Value& v) {
       if (!msg(p).poll_period_ns) return false;
       v.i = *msg(p).poll_period_ns;
       return true;
     },
     "With --poll-ports: start of the polling period of its first packet, ns since the epoch"},
};

constexpr Column kFlowColumns[] = {
    {"src", ValueType::kAddress, [](const void* p, Value& v) { v.ip = &per(p).src; return true; }, "Source IP"},
    {"dst", ValueType::kAddress, [](const void* p, Value& v) { v.ip = &per(p).dst; return true; }, "Destination IP"},
    {"dst_qpn", ValueType::kUnsigned, [](const void* p, Value& v) { v.u = per(p).dst_qpn; return true; },
     "Destination QPN"},
    {"point", ValueType::kPoint, [](const void* p, Value& v) { v.point = per(p).point; return true; },
     "Observation point"},
    {"period_start_ns", ValueType::kSigned, [](const void* p, Value& v) { v.i = per(p).period_start_ns; return true; },
     "Start of the period, ns since the epoch (the point's clock)"},
    {"period_s", ValueType::kRatio, [](const void* p, Value& v) { v.d = double(per(p).period_ns) / 1e9; return true; },
     "Length of the period, s"},
    {"packets", ValueType::kUnsigned, per_u<&FlowPeriodRecord::packets>, "Data packets"},
    {"bytes", ValueType::kUnsigned, per_u<&FlowPeriodRecord::bytes>, "Payload bytes, retransmissions included"},
    {"effective_bytes", ValueType::kUnsigned,
     [](const void* p, Value& v) { v.u = per(p).effective_bytes(); return true; }, "bytes - retrans_bytes"},
    {"retrans_packets", ValueType::kUnsigned, per_u<&FlowPeriodRecord::retrans_packets>, "Retransmitted packets"},
    {"retrans_bytes", ValueType::kUnsigned, per_u<&FlowPeriodRecord::retrans_bytes>, "Retransmitted bytes"},
    {"naks", ValueType::kUnsigned, per_u<&FlowPeriodRecord::naks>, "NAKs"},
    {"oos_packets", ValueType::kUnsigned, per_u<&FlowPeriodRecord::oos_packets>, "Out-of-sequence packets"},
    {"ce_packets", ValueType::kUnsigned, per_u<&FlowPeriodRecord::ce_packets>,
     "Data packets marked congestion experienced (ECN CE)"},
    {"cnps", ValueType::kUnsigned, per_u<&FlowPeriodRecord::cnps>,
     "CNPs to the flow's sender at the point (on the reverse direction of the queue pair)"},
    {"pfc_pauses", ValueType::kUnsigned, per_u<&FlowPeriodRecord::pfc_pauses>,
     "PFC pause frames (quanta > 0) at the point in the period pausing the flow's priority (its VLAN tag's; any "
     "priority where its frames are untagged)"},
    {"fet_bps", ValueType::kRate, [](const void* p, Value& v) { v.d = per(p).fet_bps(); return true; },
     "Effective bytes * 8 / period, bit/s"},
    RDMATEL_GPU_COLUMNS(FlowPeriodRecord),
    {"key_flow", ValueType::kBool, [](const void* p, Value& v) { v.b = per(p).key_flow; return true; },
     "The flow matches a --key-flow rule"},
};
#undef RDMATEL_GPU_COLUMNS

}  // namespace

const RecordSchema kMessageSchema = {"messages", "one RDMA message at one observation point", kMessageColumns,
                                     copy_as<MessageRecord>(), line_writers<kMessageColumns>()};
const RecordSchema kFlowSchema = {"flows", "one flow at one observation point over one period", kFlowColumns,
                                  copy_as<FlowPeriodRecord>(), line_writers<kFlowColumns>()};

}  // namespace rdmatel
