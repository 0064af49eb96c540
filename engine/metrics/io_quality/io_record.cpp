// SPDX-License-Identifier: GPL-2.0-or-later
// The I/O record's metrics (SPEC §4) and its schema (channel "io", SPEC §9).
#include "rdmatel/records.h"
#include "engine/src/output/column_line_writer.h"
#include "rdmatel/schema.h"

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

IoMetrics io_metrics(const IoRecord& r) {
  IoMetrics m;
  const IoTimes& t = r.t;
  // Ta - Tb when the capture has both stamps (read once per record by every stage: one test).
  auto diff = [&](std::optional<DurationNs>& out, int a, int b) {
    const unsigned both = 1u << a | 1u << b;
    if ((t.present & both) == both) out = t[a] - t[b];
  };
  const bool write = r.is_write();
  if (write || r.is_read()) diff(m.dal, 3, 2);
  if (write) diff(m.dpl, 5, 4);
  // The completion at the compute side is T7 for a write, T5 otherwise; at the storage side T6, T4.
  diff(m.iol1, write ? 7 : 5, 1);
  diff(m.iol2, write ? 6 : 4, 2);
  if (m.iol1 && m.iol2) m.rtt = *m.iol1 - *m.iol2;
  m.iol = r.iol_ns;
  return m;
}

namespace {

const IoRecord& io(const void* p) { return *static_cast<const IoRecord*>(p); }

template <int I>
bool stamp(const void* p, Value& v) {
  if (!io(p).t.has(I)) return false;
  v.i = io(p).t[I];
  return true;
}

template <std::optional<DurationNs> IoMetrics::*M>
bool metric(const void* p, Value& v) {
  IoMetrics m = io_metrics(io(p));
  if (!(m.*M)) return false;
  v.i = *(m.*M);
  return true;
}

bool frame_or_absent(uint64_t f, Value& v) {
  if (!f) return false;
  v.u = f;
  return true;
}

bool point_or_absent(PointId id, Value& v) {
  if (id == kNoPoint) return false;
  v.point = id;
  return true;
}

constexpr Column kIoColumns[] = {
    {"op", ValueType::kString, [](const void* p, Value& v) { v.s = io(p).op; return true; },
     "NVMe command: read, write, flush, identify, connect, ... (opcode_0xNN when unnamed)"},
    {"opcode", ValueType::kUnsigned, [](const void* p, Value& v) { v.u = io(p).opcode; return true; },
     "NVMe opcode"},
    {"admin", ValueType::kBool, [](const void* p, Value& v) { v.b = io(p).admin; return true; },
     "The command is on the admin queue"},
    {"host", ValueType::kAddress, [](const void* p, Value& v) { v.ip = &io(p).host; return true; },
     "Host (GPU server) IP address"},
    {"storage", ValueType::kAddress, [](const void* p, Value& v) { v.ip = &io(p).storage; return true; },
     "Storage server IP address"},
    {"qpn", ValueType::kUnsigned, [](const void* p, Value& v) { v.u = io(p).qpn; return true; },
     "Storage-side QPN (destination QPN of host-to-storage packets)"},
    {"host_qpn", ValueType::kUnsigned,
     [](const void* p, Value& v) {
       if (!io(p).host_qpn) return false;
       v.u = *io(p).host_qpn;
       return true;
     },
     "Host-side QPN, once the capture showed the reverse direction of the queue pair"},
    {"cid", ValueType::kUnsigned, [](const void* p, Value& v) { v.u = io(p).cid; return true; },
     "NVMe command identifier"},
    {"status", ValueType::kUnsigned,
     [](const void* p, Value& v) {
       if (!io(p).complete || !io(p).status_known) return false;
       v.u = io(p).status;
       return true;
     },
     "NVMe completion status field (0 = success; SC | SCT << 8 | CRD << 11 | M << 13 | DNR << 14)"},
    {"complete", ValueType::kBool, [](const void* p, Value& v) { v.b = io(p).complete; return true; },
     "The completion was seen at the compute side (or the single point)"},
    {"end", ValueType::kString, [](const void* p, Value& v) { v.s = io_end_name(io(p).end); return true; },
     "completed, capture_end, timeout or evicted"},
    {"in_capsule", ValueType::kBool, [](const void* p, Value& v) { v.b = io(p).in_capsule; return true; },
     "The command carries its data in the capsule"},
    {"length", ValueType::kUnsigned, [](const void* p, Value& v) { v.u = io(p).length; return true; },
     "Data length from the SGL, bytes"},
    {"t1_ns", ValueType::kSigned, stamp<1>, "T1: command at the compute side, ns since the epoch (that point's clock)"},
    {"t2_ns", ValueType::kSigned, stamp<2>, "T2: command at the storage side, ns (that point's clock)"},
    {"t3_ns", ValueType::kSigned, stamp<3>, "T3: first data (read) or READ REQUEST (write) at the storage side, ns"},
    {"t4_ns", ValueType::kSigned, stamp<4>, "T4: completion at the storage side (read) or READ REQUEST at the compute side (write), ns"},
    {"t5_ns", ValueType::kSigned, stamp<5>, "T5: completion (read) or first READ RESPONSE (write) at the compute side, ns"},
    {"t6_ns", ValueType::kSigned, stamp<6>, "T6: completion at the storage side (write), ns"},
    {"t7_ns", ValueType::kSigned, stamp<7>, "T7: completion at the compute side (write), ns"},
    {"dal_us", ValueType::kMicros, metric<&IoMetrics::dal>, "DAL = T3 - T2: storage data-access latency, µs"},
    {"dpl_us", ValueType::kMicros, metric<&IoMetrics::dpl>, "DPL = T5 - T4: compute-side data-preparation latency (writes), µs"},
    {"iol1_us", ValueType::kMicros, metric<&IoMetrics::iol1>, "IOL1: total latency at the compute side, µs"},
    {"iol2_us", ValueType::kMicros, metric<&IoMetrics::iol2>, "IOL2: total latency at the storage side, µs"},
    {"rtt_us", ValueType::kMicros, metric<&IoMetrics::rtt>, "RTT = IOL1 - IOL2: network share of the I/O, µs"},
    {"iol_us", ValueType::kMicros, metric<&IoMetrics::iol>, "IOL: completion - command at the one point that measured it, µs"},
    {"cmd_frame", ValueType::kUnsigned, [](const void* p, Value& v) { return frame_or_absent(io(p).cmd_frame, v); },
     "Frame of the command at the compute side (the single point without roles)"},
    {"rsp_frame", ValueType::kUnsigned, [](const void* p, Value& v) { return frame_or_absent(io(p).rsp_frame, v); },
     "Frame of the completion there"},
    {"compute_point", ValueType::kPoint, [](const void* p, Value& v) { return point_or_absent(io(p).compute_point, v); },
     "Observation point that is the compute side of this I/O"},
    {"storage_point", ValueType::kPoint, [](const void* p, Value& v) { return point_or_absent(io(p).storage_point, v); },
     "Observation point that is the storage side of this I/O"},
    {"cmd_psn", ValueType::kUnsigned, [](const void* p, Value& v) { v.u = io(p).cmd_psn; return true; },
     "PSN of the command capsule: with host, storage, qpn and cid the key of the I/O at every point"},
    {"host_gpu", ValueType::kString, [](const void* p, Value& v) { return name_or_absent(io(p).host_gpu, v); },
     "The host IP's GPU (--gpu-map)"},
    {"host_node", ValueType::kString, [](const void* p, Value& v) { return name_or_absent(io(p).host_node, v); },
     "The host IP's node (--gpu-map)"},
    {"job", ValueType::kString, [](const void* p, Value& v) { return name_or_absent(io(p).job, v); },
     "The host IP's AI job (--gpu-map)"},
    {"key_flow", ValueType::kBool, [](const void* p, Value& v) { v.b = io(p).key_flow; return true; },
     "The I/O matches a --key-flow rule"},
    {"poll_period_ns", ValueType::kSigned,
     [](const void* p, Value& v) {
       if (!io(p).poll_period_ns) return false;
       v.i = *io(p).poll_period_ns;
       return true;
     },
     "With --poll-ports: start of the polling period of its first stamp, ns since the epoch"},
};

}  // namespace

const RecordSchema kIoSchema = {"io", "one NVMe-oF I/O (command, data, completion) across observation points",
                                kIoColumns, copy_as<IoRecord>(), line_writers<kIoColumns>()};

}  // namespace rdmatel
