// SPDX-License-Identifier: GPL-2.0-or-later
// Names of protocol values, as the records and front ends print them.
#pragma once

#include <cstdint>

namespace rdmatel {

enum class NvmeCommandSet : uint8_t { kUnknown, kAdmin, kIo };

/// "read", "write", "flush", "identify", "connect", ... or "opcode_0xNN". Opcode 0x7F is a
/// fabrics command named by `fctype`; I/O names are assumed when the set is unknown.
const char* nvme_command_name(uint8_t opcode, uint8_t fctype, NvmeCommandSet set);
/// The NAK code of an AETH syndrome: "PSN sequence error", "invalid request", ...
const char* nak_code_name(uint8_t syndrome);

}  // namespace rdmatel
