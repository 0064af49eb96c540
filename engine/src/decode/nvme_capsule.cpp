// SPDX-License-Identifier: GPL-2.0-or-later
#include "engine/src/decode/nvme_capsule.h"

#include <array>
#include <cstdio>

#include "engine/src/util/byte_order.h"

namespace rdmatel {

bool parse_nvme_sqe(const uint8_t* p, size_t n, NvmeSqe& out) {
  if (n < kNvmeSqeMinCaptured) return false;
  out = NvmeSqe{};
  out.captured = uint8_t(n < kNvmeSqeSize ? n : kNvmeSqeSize);
  out.opcode = p[0];
  out.flags = p[1];
  // NVMe-oF requires SGLs: PSDT (bits 7:6) is 01b or 10b, and bits 5:2 are reserved.
  uint8_t psdt = out.flags >> 6;
  if ((psdt != 1 && psdt != 2) || (out.flags & 0x3c)) return false;
  out.cid = load_le16(p + 2);
  out.nsid = load_le32(p + 4);
  const uint8_t* sgl = p + 24;  // DPTR
  out.sgl_id = sgl[15];
  uint8_t type = out.sgl_id >> 4, subtype = out.sgl_id & 0xf;
  out.sgl_addr = load_le64(sgl);
  switch (type) {
    case 0x0:  // data block
    case 0x2:  // segment
    case 0x3:  // last segment
    case 0x5:  // transport SGL data block
      if (subtype != 0x0 && subtype != 0x1 && subtype != 0xA) return false;
      out.sgl_len = load_le32(sgl + 8);
      break;
    case 0x4:  // keyed data block
      if (subtype != 0x0 && subtype != 0xF && subtype != 0xA) return false;
      out.sgl_len = uint32_t(sgl[8]) | uint32_t(sgl[9]) << 8 | uint32_t(sgl[10]) << 16;
      out.sgl_key = load_le32(sgl + 11);
      break;
    default:
      return false;
  }
  if (n >= 52) {
    out.cdw10 = load_le32(p + 40);
    out.cdw11 = load_le32(p + 44);
    out.cdw12 = load_le32(p + 48);
  }
  if (out.is_fabrics()) {
    out.fctype = p[4];
    if (out.fctype == 0x01 && n >= 44) {
      out.connect_qid = load_le16(p + 42);
      out.connect_qid_captured = true;
    }
  }
  return true;
}

size_t nvme_sgl_keys(const NvmeSqe& sqe, const uint8_t* capsule, size_t captured, uint32_t* keys, size_t max) {
  if (max == 0) return 0;
  uint8_t type = sqe.sgl_id >> 4, subtype = sqe.sgl_id & 0xf;
  if (type == 0x4) {
    if (sqe.sgl_len == 0) return 0;
    keys[0] = sqe.sgl_key;
    return 1;
  }
  // A segment / last segment descriptor with the offset subtype: its list sits in the capsule,
  // `sgl_addr` bytes after the SQE, `sgl_len` bytes long (16 per descriptor).
  if ((type != 0x2 && type != 0x3) || subtype != 0x1) return 0;
  uint64_t start = kNvmeSqeSize + sqe.sgl_addr;
  uint64_t len = sqe.sgl_len - sqe.sgl_len % 16;
  if (start > captured || len > captured - start) return 0;
  size_t n = 0;
  for (uint64_t off = start; off < start + len && n < max; off += 16) {
    const uint8_t* d = capsule + off;
    uint32_t length = uint32_t(d[8]) | uint32_t(d[9]) << 8 | uint32_t(d[10]) << 16;
    if ((d[15] >> 4) == 0x4 && length > 0) keys[n++] = load_le32(d + 11);
  }
  return n;
}

bool parse_nvme_cqe(const uint8_t* p, size_t n, NvmeCqe& out) {
  if (n < kNvmeCqeMinCaptured) return false;
  out = NvmeCqe{};
  out.result = load_le32(p);
  out.sq_head = load_le16(p + 8);
  out.sq_id = load_le16(p + 10);
  out.cid = load_le16(p + 12);
  out.status_captured = n >= kNvmeCqeSize;
  if (out.status_captured) out.status = load_le16(p + 14) >> 1;
  return true;
}

namespace {

const char* fabrics_name(uint8_t fctype) {
  switch (fctype) {
    case 0x00: return "property_set";
    case 0x01: return "connect";
    case 0x04: return "property_get";
    case 0x05: return "authentication_send";
    case 0x06: return "authentication_receive";
    case 0x08: return "disconnect";
    default: return "fabrics";
  }
}

const char* io_name(uint8_t op) {
  switch (op) {
    case 0x00: return "flush";
    case 0x01: return "write";
    case 0x02: return "read";
    case 0x04: return "write_uncorrectable";
    case 0x05: return "compare";
    case 0x08: return "write_zeroes";
    case 0x09: return "dataset_management";
    case 0x0C: return "verify";
    case 0x0D: return "reservation_register";
    case 0x0E: return "reservation_report";
    case 0x11: return "reservation_acquire";
    case 0x15: return "reservation_release";
    case 0x19: return "copy";
    default: return nullptr;
  }
}

const char* admin_name(uint8_t op) {
  switch (op) {
    case 0x00: return "delete_io_sq";
    case 0x01: return "create_io_sq";
    case 0x02: return "get_log_page";
    case 0x04: return "delete_io_cq";
    case 0x05: return "create_io_cq";
    case 0x06: return "identify";
    case 0x08: return "abort";
    case 0x09: return "set_features";
    case 0x0A: return "get_features";
    case 0x0C: return "async_event_request";
    case 0x0D: return "namespace_management";
    case 0x10: return "firmware_commit";
    case 0x11: return "firmware_image_download";
    case 0x14: return "device_self_test";
    case 0x15: return "namespace_attachment";
    case 0x18: return "keep_alive";
    case 0x19: return "directive_send";
    case 0x1A: return "directive_receive";
    case 0x1C: return "virtualization_management";
    case 0x7C: return "doorbell_buffer_config";
    case 0x80: return "format_nvm";
    case 0x81: return "security_send";
    case 0x82: return "security_receive";
    case 0x84: return "sanitize";
    default: return nullptr;
  }
}

// "opcode_0xNN" strings for every opcode, built once so names are static.
const char* numeric_name(uint8_t op) {
  static const auto names = [] {
    std::array<std::array<char, 16>, 256> n{};
    for (int i = 0; i < 256; ++i) std::snprintf(n[i].data(), n[i].size(), "opcode_0x%02x", i);
    return n;
  }();
  return names[op].data();
}

}  // namespace

const char* nvme_op_name(uint8_t opcode, uint8_t fctype, NvmeQueueKind queue) {
  if (opcode == kNvmeFabricsOpcode) return fabrics_name(fctype);
  const char* name = queue == NvmeQueueKind::kAdmin ? admin_name(opcode) : io_name(opcode);
  return name ? name : numeric_name(opcode);
}

bool nvme_admin_only_opcode(uint8_t opcode) {
  switch (opcode) {
    case 0x06:  // identify
    case 0x0A:  // get features
    case 0x18:  // keep alive
    case 0x7C:  // doorbell buffer config
      return true;
    default:
      return false;
  }
}

}  // namespace rdmatel

#include "rdmatel/names.h"

namespace rdmatel {

const char* nvme_command_name(uint8_t opcode, uint8_t fctype, NvmeCommandSet set) {
  NvmeQueueKind k = set == NvmeCommandSet::kAdmin ? NvmeQueueKind::kAdmin
                    : set == NvmeCommandSet::kIo  ? NvmeQueueKind::kIo
                                                  : NvmeQueueKind::kUnknown;
  return nvme_op_name(opcode, fctype, k);
}

}  // namespace rdmatel
