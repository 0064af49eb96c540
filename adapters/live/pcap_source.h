// SPDX-License-Identifier: GPL-2.0-or-later
// CaptureSource over libpcap live capture: one source for every interface of `rdmatel live -i`,
// each interface one observation point. Kept out of the engine, which links no capture library.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "rdmatel/capture.h"

namespace rdmatel::live {

struct PcapOptions {
  std::vector<std::string> interfaces;
  uint32_t snaplen = 262144;
  /// Kernel buffer per interface; packets beyond it are dropped by the kernel (counted).
  uint32_t buffer_bytes = 32u << 20;
  std::string filter;  ///< a BPF filter, empty = every packet
};

/// Packets the kernel or the interface dropped, summed over the interfaces.
struct PcapDrops {
  uint64_t received = 0;
  uint64_t dropped = 0;     ///< ps_drop: no room in the buffer (rdmatel too slow)
  uint64_t if_dropped = 0;  ///< ps_ifdrop: dropped by the interface
};

/// A live source is unbounded: next() waits for packets until `stop` is set (from a signal
/// handler), then returns false with no error so that the session finishes and flushes. While
/// an interface is silent it yields a heartbeat frame (an empty Ethernet frame stamped with the
/// wall clock, not counted as a packet) so that the engine's time-driven output keeps going:
/// records complete when time passes, not only when the next packet arrives.
class PcapLiveSource : public CaptureSource {
 public:
  /// Called from next() (the session's thread) at least every `tick_ms`.
  using TickFn = std::function<void()>;
  virtual void set_tick(TickFn fn) = 0;
  virtual PcapDrops drops() const = 0;
  /// Real packets delivered (heartbeats excluded).
  virtual uint64_t packets() const = 0;
};

/// Opens every interface; nullptr with one sentence in `error` (interface not found, no
/// permission to capture, bad filter).
std::unique_ptr<PcapLiveSource> open_live_capture(const PcapOptions& options,
                                                  const std::atomic<bool>& stop,
                                                  std::string& error);

}  // namespace rdmatel::live
