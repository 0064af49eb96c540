// SPDX-License-Identifier: GPL-2.0-or-later
// Pushes frames to the engine on a thread of its own. Wireshark dissects on one thread; while no
// rdmatel result of the frame being read is shown (tshark -z io,stat,0, the first pass of tshark
// -2, Wireshark reading a file: it computes columns and colours later), the engine's work need
// not be done before the next frame is dissected, so the dissecting thread only copies each frame
// into a batch and goes on: its bytes, or, for a long frame, its decoding (DecodedFrames: a
// full-size frame's bytes are five times its decoding, and copying them cost more than decoding).
// Whoever reads the engine's results first waits until every frame handed over has been pushed
// (wait_idle), so the engine always sees the same frames in the same order as on one thread, and
// its results are the same. Plain C++: no Wireshark calls.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "rdmatel/batch_channel.h"
#include "rdmatel/decoded_frames.h"
#include "rdmatel/engine.h"

namespace rdmatel::plugin {

class EngineThread {
 public:
  /// Starts the thread; `push` runs there, one frame at a time, in the order add() got them.
  explicit EngineThread(std::function<void(const FrameIn&)> push);
  /// Stops the thread; frames not pushed yet are dropped (the capture is being closed).
  ~EngineThread();
  EngineThread(const EngineThread&) = delete;
  EngineThread& operator=(const EngineThread&) = delete;

  /// Hands a frame over: its bytes are copied, or decoded here when it has decode_ahead_from()
  /// bytes or more (then it is pushed with `decoded` and without `data`), so `in.data` may go away
  /// on return. Blocks while kMaxQueued batches wait (memory stays bounded whatever the engine's
  /// speed).
  void add(const FrameIn& in);
  /// Takes back the frame handed over last if it is `frame` and was not pushed yet: Wireshark
  /// numbers the next record the same when a read filter drops one, so a frame number that comes
  /// again means the frame before was dropped. The newest frame stays revocable until
  /// wait_idle(); false when it is not `frame` or went to the engine already.
  bool retract(uint64_t frame);
  /// Waits until every frame handed over has been pushed; after it, the engine and its sinks
  /// may be read on this thread. False when a push threw since the last call (the frame's
  /// results are missing, as when a push on this thread throws).
  bool wait_idle();

  // Frames are handed over in batches: one lock and one wake-up per batch, not per frame.
  static constexpr size_t kFramesPerBatch = 4096;
  static constexpr size_t kBytesPerBatch = size_t(1) << 20;
  static constexpr size_t kMaxQueued = 4;
  // Twice a decoding: shorter frames (header-only snaps) are cheaper to copy, and decoding them
  // here would lengthen the dissecting thread, which sets tshark's wall time.
  static size_t decode_ahead_from() { return 2 * DecodedFrames::bytes_each(); }

 private:
  /// Where a frame's contents travel in its batch.
  struct Carried {
    enum Kind : uint8_t { kNothing, kBytes, kDecoding } kind = kNothing;  ///< kNothing: came without bytes
    size_t at = 0;  ///< kBytes: offset in `bytes`; kDecoding: slot in `decoded`
  };
  struct Batch {
    std::vector<FrameIn> frames;  ///< data and decoded: null, see carried[i]
    std::vector<Carried> carried;
    std::vector<uint8_t> bytes;
    DecodedFrames decoded;
    size_t size_in_bytes() const { return bytes.size() + decoded.size() * DecodedFrames::bytes_each(); }
  };
  void run();
  void submit();  ///< hands the batch being filled over (not empty)
  void submit_all_but_newest();  ///< a full batch: the newest frame stays (retract)

  std::function<void(const FrameIn&)> push_;
  BatchChannel<Batch> channel_{kMaxQueued};
  Batch filling_;           ///< dissecting thread only
  std::vector<uint8_t> newest_bytes_;  ///< submit_all_but_newest's copies (dissecting thread only)
  DecodedFrames newest_decoded_;
  uint64_t submitted_ = 0;  ///< batches handed over (dissecting thread only)
  std::atomic<bool> stopping_{false};  ///< the thread drops what is still queued
  std::mutex mutex_;
  std::condition_variable pushed_changed_;
  uint64_t pushed_ = 0;  ///< batches the thread has pushed (mutex_)
  bool failed_ = false;  ///< a push threw since the last wait_idle() (mutex_)
  std::thread thread_;   ///< last: started once everything above exists
};

}  // namespace rdmatel::plugin
