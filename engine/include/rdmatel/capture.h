// SPDX-License-Identifier: GPL-2.0-or-later
// A source of captured packets in file order. Implementations: the engine's fast pcap/pcapng
// reader (memory-mapped files), and adapters outside the engine: libwiretap for every other
// format and for streams (adapters/wiretap), libpcap for live interfaces.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "rdmatel/types.h"

namespace rdmatel {

/// How far a capture file's first stamps may step back behind the packets of the file before it
/// and the file still continue it (a ring file): packets are stamped when queued, and NIC queues
/// stamp in parallel. A pcapng section beginning further back is another sniffer's capture
/// joined with cat. (Readers bound it by the reorder window too: the engine reorders no further.)
inline constexpr DurationNs kRingFileOverlap = 10 * kNsPerMs;

/// One capture interface (pcapng IDB); becomes an observation point.
struct CaptureInterface {
  std::string name;  ///< if_name, or empty
  LinkType link = LinkType::kUnsupported;
  uint32_t pcap_linktype = 0;
  uint32_t snaplen = 0;
  uint64_t speed_bps = 0;  ///< pcapng if_speed, 0 when unknown
  /// Packets the capture itself dropped (pcapng interface statistics: isb_ifdrop + isb_osdrop,
  /// the largest seen: dumpcap counts from the start of the capture and writes them at the end
  /// of each file). Known only once the statistics block has been read, usually at the end.
  uint64_t capture_dropped = 0;
  /// pcapng: the section the interface was declared in (files concatenated with cat hold several)
  /// and its number there; interfaces are numbered over the whole file.
  uint32_t section = 0, section_index = 0;
};

struct DecodedFrame;  // engine-internal (engine/src/decode/decoded_frame.h)

/// A packet as read from the file; `data` stays valid until the next call to next().
struct CapturedPacket {
  uint64_t frame = 0;      ///< 1-based, file order, as Wireshark numbers frames
  TimeNs ts = 0;           ///< ns since the epoch
  bool has_ts = true;      ///< false for records without a timestamp (pcapng simple packet blocks)
  uint32_t interface = 0;  ///< index into interfaces()
  uint32_t cap_len = 0;
  uint32_t wire_len = 0;
  LinkType link = LinkType::kUnsupported;
  const uint8_t* data = nullptr;
  /// The frame decoded already (the engine's own read-ahead: capture/read_ahead_source.h), valid
  /// as long as `data`; null otherwise, and for every other source.
  const DecodedFrame* decoded = nullptr;
};

class CaptureSource {
 public:
  virtual ~CaptureSource() = default;
  /// Next packet; false at the end of the file or on an error (then error() is not empty).
  virtual bool next(CapturedPacket& out) = 0;
  /// Interfaces seen so far (pcapng files may declare more as they go).
  virtual const std::vector<CaptureInterface>& interfaces() const = 0;
  /// Why reading stopped early ("truncated at byte 1234: ..."); empty after a clean end.
  virtual const std::string& error() const = 0;
  /// For progress reports: bytes consumed and total (0 when unknown, e.g. compressed input).
  virtual uint64_t position() const = 0;
  virtual uint64_t size() const = 0;
  /// "pcapng", "pcap (ns)", or the wiretap file type name.
  virtual std::string format() const = 0;
};

/// Result of trying to open a file with the fast reader.
enum class OpenStatus { kOk, kNotRecognized, kError };

/// Opens a capture that is not a pcap/pcapng file (or is not a regular file: a pipe, standard
/// input): the front end's adapter (libwiretap). Returns nullptr with `error` set.
using CaptureOpener = std::unique_ptr<CaptureSource> (*)(const std::string& path, std::string& error);

/// Opens a pcap or pcapng file with the fast (mmap) reader. kNotRecognized when the file is
/// neither (the caller may try another reader); kError with `error` set when it cannot be read.
OpenStatus open_fast_capture(const std::string& path, std::unique_ptr<CaptureSource>& out,
                             std::string& error);

}  // namespace rdmatel
