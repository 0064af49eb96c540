// SPDX-License-Identifier: GPL-2.0-or-later
// NVMe over Fabrics capsules carried in RDMA SENDs: the 64-byte submission queue entry (command)
// and the 16-byte completion queue entry (NVMe base spec 2.0 §4; NVMe-oF 1.1 §2, §7.3).
#pragma once

#include <cstddef>
#include <cstdint>

namespace rdmatel {

inline constexpr size_t kNvmeSqeSize = 64;
inline constexpr size_t kNvmeCqeSize = 16;
/// Header-only mirrors (snap length 128, ERSPAN truncation) keep only the start of a capsule:
/// an SQE is recognised from its first 40 bytes (opcode, flags, CID, NSID, the SGL descriptor),
/// a CQE from its first 14 (the CID; the status needs 16).
inline constexpr size_t kNvmeSqeMinCaptured = 40;
inline constexpr size_t kNvmeCqeMinCaptured = 14;
inline constexpr uint8_t kNvmeFabricsOpcode = 0x7F;

/// Which command set an opcode belongs to: admin (queue 0), I/O, or unknown (queue id not seen).
enum class NvmeQueueKind : uint8_t { kUnknown, kAdmin, kIo };

struct NvmeSqe {
  uint8_t opcode = 0;
  uint8_t flags = 0;
  uint16_t cid = 0;
  uint32_t nsid = 0;
  uint8_t sgl_id = 0;  ///< SGL descriptor identifier: type << 4 | subtype
  uint64_t sgl_addr = 0;
  uint32_t sgl_len = 0;
  uint32_t sgl_key = 0;  ///< valid when keyed()
  uint8_t fctype = 0;    ///< fabrics command type (opcode 0x7F)
  uint16_t connect_qid = 0;
  bool connect_qid_captured = false;  ///< Connect's QID (SQE bytes 42-43) was captured
  uint32_t cdw10 = 0, cdw11 = 0, cdw12 = 0;  ///< valid when captured >= 52
  uint8_t captured = 0;  ///< how many SQE bytes were captured (40..64)

  bool keyed() const { return (sgl_id >> 4) == 0x4; }
  bool in_capsule() const { return sgl_id == 0x01; }
  /// The SGL is a descriptor list carried in the capsule after the SQE.
  bool capsule_list() const { return sgl_id == 0x21 || sgl_id == 0x31; }
  bool is_fabrics() const { return opcode == kNvmeFabricsOpcode; }
  bool is_connect() const { return is_fabrics() && fctype == 0x01; }
};

struct NvmeCqe {
  uint32_t result = 0;
  uint16_t sq_head = 0;
  uint16_t sq_id = 0;
  uint16_t cid = 0;
  uint16_t status = 0;  ///< status field without the phase bit (0 = success)
  bool status_captured = false;  ///< the status bytes (14-15) were captured
};

/// Parses a command capsule's SQE from `p` (`n` bytes captured, at least kNvmeSqeMinCaptured).
/// Returns false unless the bytes look like an NVMe-oF command: PSDT selects SGLs and the SGL
/// descriptor type is valid. Fields beyond the captured bytes stay 0.
bool parse_nvme_sqe(const uint8_t* p, size_t n, NvmeSqe& out);

/// The keyed SGL data block descriptors of a command: the SQE's own, or, when the SQE points to
/// a descriptor list inside the capsule (SGL segment, offset subtype), the keyed descriptors of
/// that list (several buffers per command, as SPDK hosts send). `capsule` is the whole captured
/// SEND payload. Returns how many keys were written to `keys` (at most `max`).
size_t nvme_sgl_keys(const NvmeSqe& sqe, const uint8_t* capsule, size_t captured, uint32_t* keys, size_t max);

/// Parses a CQE (at least kNvmeCqeMinCaptured bytes captured).
bool parse_nvme_cqe(const uint8_t* p, size_t n, NvmeCqe& out);

/// Name of a command ("read", "write", "flush", "identify", "connect", ..., or "opcode_0xNN").
/// I/O opcodes are assumed when the queue kind is unknown.
const char* nvme_op_name(uint8_t opcode, uint8_t fctype, NvmeQueueKind queue);

/// True for opcodes only the admin command set defines, which tell that a queue is the admin queue.
bool nvme_admin_only_opcode(uint8_t opcode);

}  // namespace rdmatel
