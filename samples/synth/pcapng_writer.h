// SPDX-License-Identifier: GPL-2.0-or-later
// Minimal pcapng writer: one Section Header Block, one Interface Description Block per
// observation point (Ethernet, if_name, if_tsresol = 9, snaplen) and Enhanced Packet
// Blocks with nanosecond timestamps.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace synth {

class PcapngWriter {
 public:
  PcapngWriter() = default;
  ~PcapngWriter();
  PcapngWriter(const PcapngWriter&) = delete;
  PcapngWriter& operator=(const PcapngWriter&) = delete;

  bool open(const std::string& path);  // writes the SHB
  void add_interface(const std::string& name, const std::string& description, uint32_t snaplen);
  void add_packet(uint32_t iface, uint64_t ts_ns, const uint8_t* data, uint32_t caplen,
                  uint32_t origlen);
  // Bytes add_packet writes for a packet of `caplen` captured bytes (an enhanced packet block:
  // 28 bytes of header, the bytes padded to 4, the 4-byte trailing length).
  static uint32_t packet_block_bytes(uint32_t caplen) { return 32 + ((caplen + 3) & ~3u); }
  // An interface statistics block, as dumpcap writes for each interface when a file ends: the
  // packets the capture dropped there (isb_ifdrop) up to `ts_ns`.
  void add_interface_statistics(uint32_t iface, uint64_t ts_ns, uint64_t dropped);
  bool close();  // flushes; false on any I/O error

 private:
  void put(const void* p, size_t n);
  void flush();
  std::FILE* f_ = nullptr;
  std::vector<uint8_t> buf_;
  bool error_ = false;
};

}  // namespace synth
