// SPDX-License-Identifier: GPL-2.0-or-later
// The point-local I/O observation's schema (channel "io_points", SPEC §11 scale-out).
#include "rdmatel/records.h"
#include "engine/src/output/column_line_writer.h"
#include "rdmatel/schema.h"

namespace rdmatel {
namespace {

const IoPointRecord& rec(const void* p) { return *static_cast<const IoPointRecord*>(p); }

template <std::optional<TimeNs> IoPointRecord::*M>
bool stamp(const void* p, Value& v) {
  if (!(rec(p).*M)) return false;
  v.i = *(rec(p).*M);
  return true;
}

bool positive(uint64_t x, Value& v) {
  if (!x) return false;
  v.u = x;
  return true;
}

bool ttl(int16_t t, Value& v) {
  if (t < 0) return false;
  v.u = uint64_t(t);
  return true;
}

constexpr Column kIoPointColumns[] = {
    {"op", ValueType::kString, [](const void* p, Value& v) { v.s = rec(p).op; return true; }, "NVMe command (as in io)"},
    {"opcode", ValueType::kUnsigned, [](const void* p, Value& v) { v.u = rec(p).opcode; return true; }, "NVMe opcode"},
    {"admin", ValueType::kBool, [](const void* p, Value& v) { v.b = rec(p).admin; return true; },
     "The command is on the admin queue"},
    {"host", ValueType::kAddress, [](const void* p, Value& v) { v.ip = &rec(p).host; return true; }, "Host IP address"},
    {"storage", ValueType::kAddress, [](const void* p, Value& v) { v.ip = &rec(p).storage; return true; },
     "Storage server IP address"},
    {"qpn", ValueType::kUnsigned, [](const void* p, Value& v) { v.u = rec(p).qpn; return true; }, "Storage-side QPN"},
    {"host_qpn", ValueType::kUnsigned,
     [](const void* p, Value& v) {
       if (!rec(p).host_qpn) return false;
       v.u = *rec(p).host_qpn;
       return true;
     },
     "Host-side QPN, once this point showed the reverse direction"},
    {"cid", ValueType::kUnsigned, [](const void* p, Value& v) { v.u = rec(p).cid; return true; }, "NVMe command identifier"},
    {"cmd_psn", ValueType::kUnsigned, [](const void* p, Value& v) { v.u = rec(p).cmd_psn; return true; },
     "PSN of the command capsule: with host, storage, qpn and cid the I/O's key at every point"},
    {"status", ValueType::kUnsigned,
     [](const void* p, Value& v) {
       if (!rec(p).completion_ns || !rec(p).status_known) return false;
       v.u = rec(p).status;
       return true;
     },
     "NVMe completion status field, when this point saw the completion"},
    {"in_capsule", ValueType::kBool, [](const void* p, Value& v) { v.b = rec(p).in_capsule; return true; },
     "The command carries its data in the capsule"},
    {"key_flow", ValueType::kBool, [](const void* p, Value& v) { v.b = rec(p).key_flow; return true; },
     "The I/O matches a --key-flow rule"},
    {"length", ValueType::kUnsigned, [](const void* p, Value& v) { v.u = rec(p).length; return true; },
     "Data length from the SGL, bytes"},
    {"point", ValueType::kPoint, [](const void* p, Value& v) { v.point = rec(p).point; return true; },
     "The observation point"},
    {"command_ns", ValueType::kSigned, stamp<&IoPointRecord::command_ns>, "Command at this point, ns (its clock)"},
    {"data_ns", ValueType::kSigned, stamp<&IoPointRecord::data_ns>, "First data (read) at this point, ns"},
    {"read_request_ns", ValueType::kSigned, stamp<&IoPointRecord::read_request_ns>, "READ REQUEST (write) at this point, ns"},
    {"read_response_ns", ValueType::kSigned, stamp<&IoPointRecord::read_response_ns>,
     "First READ RESPONSE (write) at this point, ns"},
    {"completion_ns", ValueType::kSigned, stamp<&IoPointRecord::completion_ns>, "Completion at this point, ns"},
    {"cmd_frame", ValueType::kUnsigned, [](const void* p, Value& v) { return positive(rec(p).cmd_frame, v); },
     "Frame of the command here"},
    {"rsp_frame", ValueType::kUnsigned, [](const void* p, Value& v) { return positive(rec(p).rsp_frame, v); },
     "Frame of the completion here"},
    {"end", ValueType::kString, [](const void* p, Value& v) { v.s = io_end_name(rec(p).end); return true; },
     "completed (the completion was seen here), capture_end, timeout or evicted"},
    {"ttl_command", ValueType::kUnsigned, [](const void* p, Value& v) { return ttl(rec(p).ttl_command, v); },
     "IP TTL / hop limit of the command here"},
    {"ttl_completion", ValueType::kUnsigned, [](const void* p, Value& v) { return ttl(rec(p).ttl_completion, v); },
     "IP TTL / hop limit of the completion here"},
};

}  // namespace

const RecordSchema kIoPointSchema = {"io_points", "what one observation point saw of one NVMe-oF I/O (--point-local)",
                                     kIoPointColumns, copy_as<IoPointRecord>(), line_writers<kIoPointColumns>()};

}  // namespace rdmatel
