// SPDX-License-Identifier: GPL-2.0-or-later
#include "engine/src/decode/ib_opcodes.h"

#include <array>
#include <cstddef>

namespace rdmatel {
namespace {

constexpr uint8_t ext_length(uint16_t ext) {
  uint8_t n = 0;
  if (ext & kExtRdeth) n += 4;
  if (ext & kExtDeth) n += 8;
  if (ext & kExtXrceth) n += 4;
  if (ext & kExtReth) n += 16;
  if (ext & kExtAtomicEth) n += 28;
  if (ext & kExtAeth) n += 4;
  if (ext & kExtAtomicAckEth) n += 8;
  if (ext & kExtImmDt) n += 4;
  if (ext & kExtIeth) n += 4;
  return n;
}

// The operation codes shared by RC, UC, RD and XRC (low 5 bits of the opcode).
struct BaseOp {
  const char* suffix;
  IbOpClass op_class;
  MsgPosition position;
  uint16_t ext;
  bool payload;
};

constexpr std::array<BaseOp, 32> kBaseOps = {{
    {"SEND_FIRST", IbOpClass::kSend, MsgPosition::kFirst, 0, true},
    {"SEND_MIDDLE", IbOpClass::kSend, MsgPosition::kMiddle, 0, true},
    {"SEND_LAST", IbOpClass::kSend, MsgPosition::kLast, 0, true},
    {"SEND_LAST_WITH_IMMEDIATE", IbOpClass::kSend, MsgPosition::kLast, kExtImmDt, true},
    {"SEND_ONLY", IbOpClass::kSend, MsgPosition::kOnly, 0, true},
    {"SEND_ONLY_WITH_IMMEDIATE", IbOpClass::kSend, MsgPosition::kOnly, kExtImmDt, true},
    {"RDMA_WRITE_FIRST", IbOpClass::kWrite, MsgPosition::kFirst, kExtReth, true},
    {"RDMA_WRITE_MIDDLE", IbOpClass::kWrite, MsgPosition::kMiddle, 0, true},
    {"RDMA_WRITE_LAST", IbOpClass::kWrite, MsgPosition::kLast, 0, true},
    {"RDMA_WRITE_LAST_WITH_IMMEDIATE", IbOpClass::kWrite, MsgPosition::kLast, kExtImmDt, true},
    {"RDMA_WRITE_ONLY", IbOpClass::kWrite, MsgPosition::kOnly, kExtReth, true},
    {"RDMA_WRITE_ONLY_WITH_IMMEDIATE", IbOpClass::kWrite, MsgPosition::kOnly, kExtReth | kExtImmDt, true},
    {"RDMA_READ_REQUEST", IbOpClass::kReadRequest, MsgPosition::kOnly, kExtReth, false},
    {"RDMA_READ_RESPONSE_FIRST", IbOpClass::kReadResponse, MsgPosition::kFirst, kExtAeth, true},
    {"RDMA_READ_RESPONSE_MIDDLE", IbOpClass::kReadResponse, MsgPosition::kMiddle, 0, true},
    {"RDMA_READ_RESPONSE_LAST", IbOpClass::kReadResponse, MsgPosition::kLast, kExtAeth, true},
    {"RDMA_READ_RESPONSE_ONLY", IbOpClass::kReadResponse, MsgPosition::kOnly, kExtAeth, true},
    {"ACKNOWLEDGE", IbOpClass::kAcknowledge, MsgPosition::kNone, kExtAeth, false},
    {"ATOMIC_ACKNOWLEDGE", IbOpClass::kAtomicAcknowledge, MsgPosition::kNone, kExtAeth | kExtAtomicAckEth, false},
    {"COMPARE_SWAP", IbOpClass::kAtomic, MsgPosition::kOnly, kExtAtomicEth, false},
    {"FETCH_ADD", IbOpClass::kAtomic, MsgPosition::kOnly, kExtAtomicEth, false},
    {nullptr, IbOpClass::kOther, MsgPosition::kNone, 0, false},
    {"SEND_LAST_WITH_INVALIDATE", IbOpClass::kSend, MsgPosition::kLast, kExtIeth, true},
    {"SEND_ONLY_WITH_INVALIDATE", IbOpClass::kSend, MsgPosition::kOnly, kExtIeth, true},
}};

// Calls add(opcode, prefix, base operation, transport, extra extension headers) for every defined
// opcode; the name table and the information table are both built from it at compile time.
template <typename Add>
constexpr void for_each_opcode(Add add) {
  for (uint8_t low = 0; low < kBaseOps.size(); ++low) {
    const BaseOp& op = kBaseOps[low];
    if (!op.suffix) continue;
    add(uint8_t(0x00 | low), "RC_", op, IbTransport::kRC, 0);
    add(uint8_t(0xA0 | low), "XRC_", op, IbTransport::kXRC, op.op_class == IbOpClass::kSend ||
                                                              op.op_class == IbOpClass::kWrite ||
                                                              op.op_class == IbOpClass::kReadRequest ||
                                                              op.op_class == IbOpClass::kAtomic
                                                          ? kExtXrceth
                                                          : 0);
    // RD: every request carries RDETH+DETH, responses carry RDETH only.
    bool rd_request = op.op_class == IbOpClass::kSend || op.op_class == IbOpClass::kWrite ||
                      op.op_class == IbOpClass::kReadRequest || op.op_class == IbOpClass::kAtomic;
    if (low <= 0x14) add(uint8_t(0x40 | low), "RD_", op, IbTransport::kRD, rd_request ? kExtRdeth | kExtDeth : kExtRdeth);
    // UC: sends and writes only.
    if (op.op_class == IbOpClass::kSend && low <= 0x05) add(uint8_t(0x20 | low), "UC_", op, IbTransport::kUC, 0);
    if (op.op_class == IbOpClass::kWrite) add(uint8_t(0x20 | low), "UC_", op, IbTransport::kUC, 0);
  }
  add(0x64, "UD_", kBaseOps[0x04], IbTransport::kUD, kExtDeth);
  add(0x65, "UD_", kBaseOps[0x05], IbTransport::kUD, kExtDeth);
  // CNP: BTH followed by 16 reserved bytes (RoCEv2 annex A17.9.3).
  constexpr BaseOp kCnp{"CNP", IbOpClass::kCnp, MsgPosition::kNone, 0, false};
  add(kOpcodeCnp, "", kCnp, IbTransport::kCNP, 0);
}

using OpcodeNames = std::array<std::array<char, 48>, 256>;

constexpr OpcodeNames make_names() {
  OpcodeNames names{};
  for_each_opcode([&](uint8_t opcode, const char* prefix, const BaseOp& op, IbTransport, uint16_t) {
    auto& n = names[opcode];
    std::size_t i = 0;
    for (const char* s = prefix; *s && i < n.size() - 2; ++s) n[i++] = *s;
    for (const char* s = op.suffix; *s && i < n.size() - 2; ++s) n[i++] = *s;
    n[i] = 0;
  });
  return names;
}

constexpr OpcodeNames kNames = make_names();

constexpr std::array<IbOpcodeInfo, 256> make_info() {
  std::array<IbOpcodeInfo, 256> info{};
  for (auto& i : info) i = {nullptr, IbTransport::kOther, IbOpClass::kOther, MsgPosition::kNone, 0, 0, false};
  for_each_opcode([&](uint8_t opcode, const char*, const BaseOp& op, IbTransport t, uint16_t extra_ext) {
    uint16_t ext = uint16_t(op.ext | extra_ext);
    info[opcode] = {kNames[opcode].data(), t, op.op_class, op.position, ext, ext_length(ext), op.payload};
  });
  return info;
}

}  // namespace

// Built by the compiler: a lookup is one indexed load, with no initialisation guard or call (it is
// on the path of every packet, in the decoder and in every component asking a packet's class).
constinit const std::array<IbOpcodeInfo, 256> kIbOpcodeInfo = make_info();

const char* nak_code_name(uint8_t syndrome) {
  switch (syndrome & 0x1f) {
    case 0: return "PSN sequence error";
    case 1: return "invalid request";
    case 2: return "remote access error";
    case 3: return "remote operational error";
    case 4: return "invalid RD request";
    default: return "reserved NAK code";
  }
}

}  // namespace rdmatel
