// SPDX-License-Identifier: GPL-2.0-or-later
// CRC32 (IEEE 802.3, reflected) and the RoCEv2 invariant CRC.
#pragma once

#include <cstddef>
#include <cstdint>

namespace synth {

// Running CRC32 without the final inversion: start with 0xFFFFFFFF, finish with ~crc.
uint32_t crc32_update(uint32_t crc, const uint8_t* p, size_t n);

// RoCEv2 ICRC of one packet. `l3` points at the IPv4/IPv6 header; `l3_len` covers the IP
// header up to (not including) the 4 ICRC bytes. Variant fields are masked to ones as the
// IBA annex A17 (and Linux rxe, and Wireshark-checking tools) do: IPv4 TOS/TTL/checksum,
// IPv6 traffic class/flow label/hop limit, UDP checksum, BTH reserved byte (FECN/BECN),
// preceded by 8 bytes of ones standing in for the absent LRH. Returns the value to store
// little-endian in the trailer.
uint32_t roce_icrc(const uint8_t* l3, size_t l3_len, bool ipv6);

}  // namespace synth
