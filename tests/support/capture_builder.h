// SPDX-License-Identifier: GPL-2.0-or-later
// Test-only pcap/pcapng writing, block by block (pcapng: IETF draft-ietf-opsawg-pcapng), for
// tests that need files the samples cannot contain (hand-built, hostile or corrupt ones).
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <initializer_list>
#include <iterator>
#include <string>
#include <vector>

#include "tests/support/frame_builder.h"

namespace rdmatel::test {

/// A file under /tmp holding `bytes`, removed when the object goes.
struct TempCapture {
  std::string path;
  explicit TempCapture(const Bytes& bytes, const char* suffix = ".pcapng") {
    std::string tmpl = std::string("/tmp/rdmatel_robust_XXXXXX") + suffix;
    std::vector<char> name(tmpl.begin(), tmpl.end());
    name.push_back(0);
    int fd = mkstemps(name.data(), int(std::string(suffix).size()));
    if (fd < 0) std::abort();
    path = name.data();
    if (!bytes.empty() && write(fd, bytes.data(), bytes.size()) != ssize_t(bytes.size())) std::abort();
    close(fd);
  }
  ~TempCapture() { unlink(path.c_str()); }
};

inline Bytes read_file_bytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return Bytes(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

inline Bytes concat(std::initializer_list<Bytes> parts) {
  Bytes out;
  for (const Bytes& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

namespace pcapng {

/// A block with `body` padded to 4 bytes; `length` overrides both length fields when non-zero.
inline Bytes block(uint32_t type, const Bytes& body, uint32_t length = 0) {
  Bytes b;
  uint32_t len = length ? length : uint32_t(12 + ((body.size() + 3) & ~size_t(3)));
  putle32(b, type);
  putle32(b, len);
  b.insert(b.end(), body.begin(), body.end());
  while (b.size() % 4) b.push_back(0);
  putle32(b, len);
  return b;
}

inline Bytes shb() {
  Bytes body;
  putle32(body, 0x1A2B3C4D);
  putle16(body, 1);
  putle16(body, 0);
  for (int i = 0; i < 8; ++i) body.push_back(0xFF);  // section length unknown
  return block(0x0A0D0D0A, body);
}

inline Bytes option(uint16_t code, const Bytes& value) {
  Bytes o;
  putle16(o, code);
  putle16(o, uint16_t(value.size()));
  o.insert(o.end(), value.begin(), value.end());
  while (o.size() % 4) o.push_back(0);
  return o;
}

/// An IDB; tsresol < 0 leaves the default (us); tsoffset 0 omits the option.
inline Bytes idb(const std::string& name, int tsresol = 9, int64_t tsoffset = 0, uint16_t linktype = 1,
                 uint32_t snaplen = 262144) {
  Bytes body;
  putle16(body, linktype);
  putle16(body, 0);
  putle32(body, snaplen);
  if (!name.empty()) {
    Bytes o = option(2, Bytes(name.begin(), name.end()));
    body.insert(body.end(), o.begin(), o.end());
  }
  if (tsresol >= 0) {
    Bytes o = option(9, Bytes{uint8_t(tsresol)});
    body.insert(body.end(), o.begin(), o.end());
  }
  if (tsoffset) {
    Bytes v;
    putle64(v, uint64_t(tsoffset));
    Bytes o = option(14, v);
    body.insert(body.end(), o.begin(), o.end());
  }
  putle32(body, 0);  // opt_endofopt
  return block(1, body);
}

/// An EPB; `orig` 0 means the captured length.
inline Bytes epb(uint32_t iface, uint64_t ts, const Bytes& data, uint32_t orig = 0) {
  Bytes body;
  putle32(body, iface);
  putle32(body, uint32_t(ts >> 32));
  putle32(body, uint32_t(ts));
  putle32(body, uint32_t(data.size()));
  putle32(body, orig ? orig : uint32_t(data.size()));
  body.insert(body.end(), data.begin(), data.end());
  return block(6, body);
}

}  // namespace pcapng

namespace pcap {

/// A classic pcap file header (little-endian, ns or us timestamps).
inline Bytes header(uint32_t snaplen = 262144, uint32_t linktype = 1, bool ns = true) {
  Bytes b;
  putle32(b, ns ? 0xA1B23C4D : 0xA1B2C3D4);
  putle16(b, 2);
  putle16(b, 4);
  putle32(b, 0);
  putle32(b, 0);
  putle32(b, snaplen);
  putle32(b, linktype);
  return b;
}

inline Bytes record(uint32_t sec, uint32_t frac, const Bytes& data, uint32_t orig = 0) {
  Bytes b;
  putle32(b, sec);
  putle32(b, frac);
  putle32(b, uint32_t(data.size()));
  putle32(b, orig ? orig : uint32_t(data.size()));
  b.insert(b.end(), data.begin(), data.end());
  return b;
}

}  // namespace pcap
}  // namespace rdmatel::test
