// SPDX-License-Identifier: GPL-2.0-or-later
// When the first pass is over, so that the engine can finish and every frame show final results.
// Wireshark tells a dissector only part of it:
//  * the end of a sequential read calls the "postseq cleanup" routines: tshark -2 before its
//    second pass, the GUI when it has read a file and when a live capture stops;
//  * a redissection (a preference changed, Decode As) dissects every frame again with the packet
//    list frozen and calls nothing at its end: the first frame dissected again marks it;
//  * a live capture in the GUI dissects frames again to paint the packet list while new frames
//    keep arriving: a frame dissected again must not end the pass there.
// A redissection and a live capture look alike while they run. They differ in what came before:
// a redissection reads again a capture that was read to its end, the same first frame. Plain C++,
// no Wireshark calls.
#pragma once

#include <cstdint>

namespace rdmatel::plugin {

/// What tells captures apart: their first frame (time, interface, lengths, a hash of its bytes).
struct CaptureIdentity {
  int64_t ts = 0;
  uint32_t interface = 0;
  uint32_t cap_len = 0;
  uint32_t wire_len = 0;
  uint64_t bytes_hash = 0;
  bool valid = false;
  static CaptureIdentity of_first_frame(int64_t ts, uint32_t interface, const uint8_t* data, uint32_t cap_len,
                                        uint32_t wire_len);
  bool operator==(const CaptureIdentity&) const = default;
};

class FirstPassEnd {
 public:
  /// A new dissection session (Wireshark's init routine): a new capture, or a redissection.
  void new_session() { session_ = {}; }
  /// The first pass dissects frame 1 of the session.
  void first_frame(const CaptureIdentity& id) { session_ = id; }
  /// Whether a frame dissected again before any end of a sequential read ends the first pass:
  /// yes when this session redissects a capture that was read to its end; no in a live capture,
  /// whose revisited frames are shown with what is known so far.
  bool revisit_ends_pass() const { return session_.valid && session_ == read_to_end_; }
  /// The first pass of this session is over: a redissection of the same capture ends at its first
  /// revisited frame.
  void ended() { read_to_end_ = session_; }

 private:
  CaptureIdentity session_;
  CaptureIdentity read_to_end_;  ///< the last capture whose first pass ended; kept across sessions
};

}  // namespace rdmatel::plugin
