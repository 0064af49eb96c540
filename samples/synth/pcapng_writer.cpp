// SPDX-License-Identifier: GPL-2.0-or-later
#include "pcapng_writer.h"

#include <cstring>

namespace synth {
namespace {

void u16(std::vector<uint8_t>& b, uint16_t v) {
  b.push_back(static_cast<uint8_t>(v));
  b.push_back(static_cast<uint8_t>(v >> 8));
}
void u32(std::vector<uint8_t>& b, uint32_t v) {
  u16(b, static_cast<uint16_t>(v));
  u16(b, static_cast<uint16_t>(v >> 16));
}
void option(std::vector<uint8_t>& b, uint16_t code, const void* data, uint16_t len) {
  u16(b, code);
  u16(b, len);
  const auto* p = static_cast<const uint8_t*>(data);
  for (uint16_t i = 0; i < len; ++i) b.push_back(p[i]);
  while (b.size() % 4) b.push_back(0);
}
// Wraps a block body with type and both total-length fields.
std::vector<uint8_t> block(uint32_t type, const std::vector<uint8_t>& body) {
  std::vector<uint8_t> b;
  const uint32_t total = static_cast<uint32_t>(12 + body.size());
  u32(b, type);
  u32(b, total);
  b.insert(b.end(), body.begin(), body.end());
  u32(b, total);
  return b;
}

}  // namespace

PcapngWriter::~PcapngWriter() {
  if (f_) close();
}

bool PcapngWriter::open(const std::string& path) {
  f_ = std::fopen(path.c_str(), "wb");
  if (!f_) return false;
  buf_.reserve(1 << 22);
  std::vector<uint8_t> body;
  u32(body, 0x1A2B3C4D);  // byte-order magic
  u16(body, 1);
  u16(body, 0);
  u32(body, 0xFFFFFFFF);  // section length unknown
  u32(body, 0xFFFFFFFF);
  const char app[] = "rdmatel-synth";
  option(body, 4, app, sizeof app - 1);  // shb_userappl
  option(body, 0, nullptr, 0);
  const auto b = block(0x0A0D0D0A, body);
  put(b.data(), b.size());
  return true;
}

void PcapngWriter::add_interface(const std::string& name, const std::string& description,
                                 uint32_t snaplen) {
  std::vector<uint8_t> body;
  u16(body, 1);  // LINKTYPE_ETHERNET
  u16(body, 0);
  u32(body, snaplen);
  option(body, 2, name.data(), static_cast<uint16_t>(name.size()));  // if_name
  if (!description.empty())
    option(body, 3, description.data(), static_cast<uint16_t>(description.size()));
  const uint8_t tsresol = 9;  // nanoseconds
  option(body, 9, &tsresol, 1);
  option(body, 0, nullptr, 0);
  const auto b = block(1, body);
  put(b.data(), b.size());
}

void PcapngWriter::add_packet(uint32_t iface, uint64_t ts_ns, const uint8_t* data, uint32_t caplen,
                              uint32_t origlen) {
  const uint32_t total = packet_block_bytes(caplen);
  const uint32_t padded = total - 32;
  uint32_t h[7] = {6, total, iface, static_cast<uint32_t>(ts_ns >> 32),
                   static_cast<uint32_t>(ts_ns), caplen, origlen};
  put(h, sizeof h);
  put(data, caplen);
  static const uint8_t zeros[4] = {0, 0, 0, 0};
  put(zeros, padded - caplen);
  put(&total, 4);
}

void PcapngWriter::add_interface_statistics(uint32_t iface, uint64_t ts_ns, uint64_t dropped) {
  // Block header, interface, stamp, isb_ifdrop (code 5, 8 bytes), the end of options, the length.
  const uint32_t total = 12 + 8 + 4 + 8 + 4 + 4;
  const uint32_t h[5] = {5, total, iface, static_cast<uint32_t>(ts_ns >> 32), static_cast<uint32_t>(ts_ns)};
  put(h, sizeof h);
  const uint16_t opt[2] = {5, 8};
  put(opt, sizeof opt);
  put(&dropped, 8);
  const uint32_t end_of_options = 0;
  put(&end_of_options, 4);
  put(&total, 4);
}

void PcapngWriter::put(const void* p, size_t n) {
  const auto* c = static_cast<const uint8_t*>(p);
  buf_.insert(buf_.end(), c, c + n);
  if (buf_.size() >= (1u << 22)) flush();
}

void PcapngWriter::flush() {
  if (f_ && !buf_.empty() && std::fwrite(buf_.data(), 1, buf_.size(), f_) != buf_.size())
    error_ = true;
  buf_.clear();
}

bool PcapngWriter::close() {
  if (!f_) return !error_;
  flush();
  if (std::fclose(f_) != 0) error_ = true;
  f_ = nullptr;
  return !error_;
}

}  // namespace synth
