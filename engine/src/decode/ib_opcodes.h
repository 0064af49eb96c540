// SPDX-License-Identifier: GPL-2.0-or-later
// InfiniBand BTH opcodes (IBTA vol. 1, table 38 "OpCode field") and what follows the BTH.
#pragma once

#include <array>
#include <cstdint>

namespace rdmatel {

/// Transport service, from the top 3 bits of the opcode.
enum class IbTransport : uint8_t { kRC = 0, kUC = 1, kRD = 2, kUD = 3, kCNP = 4, kXRC = 5, kOther = 7 };

/// What a packet is for, independent of the transport.
enum class IbOpClass : uint8_t {
  kOther,
  kSend,
  kWrite,
  kReadRequest,
  kReadResponse,
  kAcknowledge,
  kAtomic,
  kAtomicAcknowledge,
  kCnp,
};

/// Position of a packet inside its message.
enum class MsgPosition : uint8_t { kNone, kFirst, kMiddle, kLast, kOnly };

/// Extension headers that follow the BTH, in wire order: RDETH, DETH, XRCETH, RETH, AtomicETH,
/// AETH, AtomicAckETH, ImmDt, IETH (only the ones present for the opcode).
enum ExtHeader : uint16_t {
  kExtRdeth = 1 << 0,
  kExtDeth = 1 << 1,
  kExtXrceth = 1 << 2,
  kExtReth = 1 << 3,
  kExtAtomicEth = 1 << 4,
  kExtAeth = 1 << 5,
  kExtAtomicAckEth = 1 << 6,
  kExtImmDt = 1 << 7,
  kExtIeth = 1 << 8,
};

struct IbOpcodeInfo {
  const char* name;  ///< e.g. "RC_RDMA_WRITE_FIRST"; nullptr for reserved opcodes
  IbTransport transport;
  IbOpClass op_class;
  MsgPosition position;
  uint16_t ext;          ///< ExtHeader bits
  uint8_t ext_len;       ///< total bytes of extension headers
  bool carries_payload;  ///< may carry a data payload
};

/// Every opcode's information, indexed by the opcode (defined in ib_opcodes.cpp).
extern const std::array<IbOpcodeInfo, 256> kIbOpcodeInfo;

/// Information about a BTH opcode; reserved opcodes have name == nullptr.
inline const IbOpcodeInfo& ib_opcode_info(uint8_t opcode) { return kIbOpcodeInfo[opcode]; }

inline constexpr uint8_t kOpcodeCnp = 0x81;
inline constexpr uint8_t kOpcodeAcknowledge = 0x11;  ///< RC ACKNOWLEDGE (an ACK or a NAK)

/// AETH syndrome classes (bits 7:5).
enum class AethKind : uint8_t { kAck, kRnrNak, kReserved, kNak };
inline AethKind aeth_kind(uint8_t syndrome) {
  switch (syndrome >> 5) {
    case 0: return AethKind::kAck;
    case 1: return AethKind::kRnrNak;
    case 3: return AethKind::kNak;
    default: return AethKind::kReserved;
  }
}
/// Name of a NAK code (syndrome bits 4:0 when the class is NAK).
const char* nak_code_name(uint8_t syndrome);

}  // namespace rdmatel
