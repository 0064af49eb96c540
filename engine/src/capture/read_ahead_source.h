// SPDX-License-Identifier: GPL-2.0-or-later
// A capture source read ahead on a thread of its own (`--threads` 2 or more). Decompressing a
// gzip or zstd capture (libwiretap) costs more than measuring it, on the one thread that also
// measures; read ahead, the decompression runs beside the measurement on the second core. A
// mapped file is read ahead and decoded there (ReadAhead::kDecode).
//
// What the reader sees is exactly what the source gives, in the same order and at the same
// moment: each packet comes with the number of interfaces the source had declared when it
// returned that packet, and interfaces() grows only to that count as the packet is taken (a
// point declared a batch early could change what `paths` waits for). The reading thread starts
// at the second packet: the session takes every input's first packet when it opens them, and a
// ring of hundreds of files is read one after another, so a file not reached yet holds one
// packet, not a batch, and no thread; one read to its end lets its thread and batches go; only a
// few files are read ahead at once (ReadAheadSlots). Memory per file read ahead:
// four batches at most (the one being read, two queued, one being filled) of up to 1024 packets
// or 256 KiB each (one packet larger than that alone), about a megabyte per input being read.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

#include "rdmatel/capture.h"

namespace rdmatel {

/// What the thread does with a packet's bytes.
enum class ReadAhead : uint8_t {
  /// Copies them into the batch: the source reuses its buffer from call to call (libwiretap).
  kCopy,
  /// Leaves them where they are, valid as long as the source lives (a mapped file), and decodes
  /// the frame (CapturedPacket::decoded): the measuring thread then never reads the bytes, and
  /// reading and decoding, a fifth of its work, run beside it.
  kDecode,
};

/// How many files may be read ahead at once, shared by a session's inputs. Files whose packets
/// interleave (one per sniffer) are all being read at once, and more reading threads than cores
/// only take turns: twenty interleaved files each read ahead cost 45 % more cpu and 1.2-1.5x
/// the wall time of reading them on the measuring thread. A file takes a slot when its reading
/// would start (its second packet) and gives it back at its end; a file that finds none free is
/// read on the caller's thread. A ring of files read one after another passes the slot on.
class ReadAheadSlots {
 public:
  explicit ReadAheadSlots(int count) : free_(count) {}
  bool take() {
    for (int n = free_.load(); n > 0;)
      if (free_.compare_exchange_weak(n, n - 1)) return true;
    return false;
  }
  void give_back() { free_.fetch_add(1); }

 private:
  std::atomic<int> free_;
};

/// `source` read ahead on a thread of its own (see above), when `slots` has one free when its
/// reading starts (null: always). Not for a source whose next() may block for ever (standard
/// input, a live interface): destroying the reader waits for the thread, which may be inside
/// next().
std::unique_ptr<CaptureSource> read_ahead(std::unique_ptr<CaptureSource> source, ReadAhead mode,
                                          std::shared_ptr<ReadAheadSlots> slots = nullptr);

}  // namespace rdmatel
