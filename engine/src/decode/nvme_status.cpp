// SPDX-License-Identifier: GPL-2.0-or-later
// NVMe completion status names (NVM Express Base Specification 2.0, "Status Field"; NVMe over
// Fabrics 1.1, Connect response). The status is the CQE's status field without the phase bit:
// bits 7:0 status code, 10:8 status code type, 13 More, 14 Do Not Retry.
#include <cstdio>

#include "rdmatel/names.h"

namespace rdmatel {
namespace {

struct Code {
  uint8_t sc;
  const char* name;
};

constexpr Code kGeneric[] = {
    {0x00, "Successful Completion"},
    {0x01, "Invalid Command Opcode"},
    {0x02, "Invalid Field in Command"},
    {0x03, "Command ID Conflict"},
    {0x04, "Data Transfer Error"},
    {0x05, "Commands Aborted due to Power Loss Notification"},
    {0x06, "Internal Error"},
    {0x07, "Command Abort Requested"},
    {0x08, "Command Aborted due to SQ Deletion"},
    {0x09, "Command Aborted due to Failed Fused Command"},
    {0x0A, "Command Aborted due to Missing Fused Command"},
    {0x0B, "Invalid Namespace or Format"},
    {0x0C, "Command Sequence Error"},
    {0x0D, "Invalid SGL Segment Descriptor"},
    {0x0E, "Invalid Number of SGL Descriptors"},
    {0x0F, "Data SGL Length Invalid"},
    {0x10, "Metadata SGL Length Invalid"},
    {0x11, "SGL Descriptor Type Invalid"},
    {0x12, "Invalid Use of Controller Memory Buffer"},
    {0x13, "PRP Offset Invalid"},
    {0x14, "Atomic Write Unit Exceeded"},
    {0x15, "Operation Denied"},
    {0x16, "SGL Offset Invalid"},
    {0x18, "Host Identifier Inconsistent Format"},
    {0x19, "Keep Alive Timer Expired"},
    {0x1A, "Keep Alive Timeout Invalid"},
    {0x1B, "Command Aborted due to Preempt and Abort"},
    {0x1C, "Sanitize Failed"},
    {0x1D, "Sanitize In Progress"},
    {0x1E, "SGL Data Block Granularity Invalid"},
    {0x1F, "Command Not Supported for Queue in CMB"},
    {0x20, "Namespace is Write Protected"},
    {0x21, "Command Interrupted"},
    {0x22, "Transient Transport Error"},
    {0x80, "LBA Out of Range"},
    {0x81, "Capacity Exceeded"},
    {0x82, "Namespace Not Ready"},
    {0x83, "Reservation Conflict"},
    {0x84, "Format In Progress"},
};

// Command specific codes of the I/O command set (read, write, ...).
constexpr Code kIoSpecific[] = {
    {0x80, "Conflicting Attributes"},
    {0x81, "Invalid Protection Information"},
    {0x82, "Attempted Write to Read Only Range"},
};

// Command specific codes of the fabrics Connect command.
constexpr Code kConnectSpecific[] = {
    {0x80, "Incompatible Format"},
    {0x81, "Controller Busy"},
    {0x82, "Connect Invalid Parameters"},
    {0x83, "Connect Restart Discovery"},
    {0x84, "Connect Invalid Host"},
};

constexpr Code kMedia[] = {
    {0x80, "Write Fault"},
    {0x81, "Unrecovered Read Error"},
    {0x82, "End-to-end Guard Check Error"},
    {0x83, "End-to-end Application Tag Check Error"},
    {0x84, "End-to-end Reference Tag Check Error"},
    {0x85, "Compare Failure"},
    {0x86, "Access Denied"},
    {0x87, "Deallocated or Unwritten Logical Block"},
};

constexpr Code kPath[] = {
    {0x00, "Internal Path Error"},
    {0x01, "Asymmetric Access Persistent Loss"},
    {0x02, "Asymmetric Access Inaccessible"},
    {0x03, "Asymmetric Access Transition"},
    {0x60, "Controller Pathing Error"},
    {0x70, "Host Pathing Error"},
    {0x71, "Command Aborted By Host"},
};

template <size_t N>
const char* find(const Code (&codes)[N], uint8_t sc) {
  for (const Code& c : codes)
    if (c.sc == sc) return c.name;
  return nullptr;
}

}  // namespace

const char* nvme_status_type_name(uint8_t sct) {
  switch (sct) {
    case 0: return "Generic Command Status";
    case 1: return "Command Specific Status";
    case 2: return "Media and Data Integrity Error";
    case 3: return "Path Related Status";
    case 7: return "Vendor Specific";
    default: return "Reserved status code type";
  }
}

const char* nvme_status_code_name(uint16_t status, bool connect) {
  const uint8_t sc = uint8_t(status & 0xFF), sct = uint8_t((status >> 8) & 0x7);
  switch (sct) {
    case 0: return find(kGeneric, sc);
    case 1: return connect ? find(kConnectSpecific, sc) : find(kIoSpecific, sc);
    case 2: return find(kMedia, sc);
    case 3: return find(kPath, sc);
    default: return nullptr;
  }
}

void nvme_status_text(char (&out)[kNvmeStatusText], uint16_t status, bool connect) {
  const uint8_t sc = uint8_t(status & 0xFF), sct = uint8_t((status >> 8) & 0x7);
  const char* name = nvme_status_code_name(status, connect);
  char code[64];
  if (name) std::snprintf(code, sizeof code, "%s", name);
  else std::snprintf(code, sizeof code, "status code 0x%02x", sc);
  std::snprintf(out, sizeof out, "%s (%s%s%s)", code, nvme_status_type_name(sct), status & 0x2000 ? ", More" : "",
                status & 0x4000 ? ", Do Not Retry" : "");
}

}  // namespace rdmatel
