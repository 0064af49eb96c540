// SPDX-License-Identifier: GPL-2.0-or-later
#include "engine/src/decode/packet.h"

namespace rdmatel {

void summarize_capsule(const RoceFrame& roce, const uint8_t* frame, CapsuleSummary& c) {
  c = CapsuleSummary{};
  if (!roce.op || roce.op->op_class != IbOpClass::kSend) return;
  const MsgPosition pos = roce.op->position;
  if (pos != MsgPosition::kFirst && pos != MsgPosition::kOnly) return;
  const uint8_t* payload = frame + roce.payload_offset;
  const uint32_t len = roce.payload_len, have = roce.payload_captured;
  const bool only = pos == MsgPosition::kOnly;
  if (len >= kNvmeSqeSize) {
    c.kind = CapsuleKind::kOther;
    if (have < kNvmeSqeMinCaptured) {
      c.kind = CapsuleKind::kNone;  // a header-only snap: nothing to tell
      return;
    }
    NvmeSqe sqe;
    // More than the SQE in a single-packet capsule must be in-capsule data or the descriptor
    // list the SQE points to.
    if (parse_nvme_sqe(payload, have, sqe) &&
        (len == kNvmeSqeSize || !only || sqe.in_capsule() || sqe.capsule_list())) {
      c.kind = CapsuleKind::kCommand;
      c.opcode = sqe.opcode;
      c.fctype = sqe.fctype;
      c.in_capsule = sqe.in_capsule();
      c.connect_qid_captured = sqe.connect_qid_captured;
      c.connect_qid = sqe.connect_qid;
      c.no_namespace = sqe.nsid == 0 || sqe.nsid == 0xFFFFFFFF;
      c.cid = sqe.cid;
      c.sgl_len = sqe.sgl_len;
      c.key_count = uint8_t(nvme_sgl_keys(sqe, payload, have, c.keys, CapsuleSummary::kMaxKeys));
    }
    return;
  }
  if (only && len == kNvmeCqeSize) {
    if (have < kNvmeCqeMinCaptured) return;
    NvmeCqe cqe;
    parse_nvme_cqe(payload, have, cqe);
    c.kind = CapsuleKind::kCompletion;
    c.cid = cqe.cid;
    c.status = cqe.status;
    c.status_captured = cqe.status_captured;
    return;
  }
  c.kind = CapsuleKind::kOther;
}

}  // namespace rdmatel
