// SPDX-License-Identifier: GPL-2.0-or-later
// Names of protocol values, as the records and front ends print them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

namespace rdmatel {

enum class NvmeCommandSet : uint8_t { kUnknown, kAdmin, kIo };

/// "read", "write", "flush", "identify", "connect", ... or "opcode_0xNN". Opcode 0x7F is a
/// fabrics command named by `fctype`; I/O names are assumed when the set is unknown.
const char* nvme_command_name(uint8_t opcode, uint8_t fctype, NvmeCommandSet set);
/// The NAK code of an AETH syndrome: "PSN sequence error", "invalid request", ...
const char* nak_code_name(uint8_t syndrome);

/// NVMe completion status (the CQE status field without the phase bit: SC bits 7:0, SCT 10:8,
/// More 13, DNR 14). `connect`: the command was a fabrics Connect (its own specific codes).
const char* nvme_status_type_name(uint8_t sct);
/// The status code's name, nullptr when the specification leaves it reserved or vendor's.
const char* nvme_status_code_name(uint16_t status, bool connect);
/// "Invalid Field in Command (Generic Command Status, Do Not Retry)" into a plain buffer (the
/// plugin must not hold C++ objects across Wireshark calls).
inline constexpr size_t kNvmeStatusText = 160;
void nvme_status_text(char (&out)[kNvmeStatusText], uint16_t status, bool connect);
/// A queue pair number as Wireshark's InfiniBand Info column writes it: "0x0004d2".
inline std::string qpn_text(uint32_t qpn) {
  char b[16];
  std::snprintf(b, sizeof b, "0x%06x", qpn & 0xFFFFFFu);
  return b;
}

}  // namespace rdmatel
