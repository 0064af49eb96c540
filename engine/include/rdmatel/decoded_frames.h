// SPDX-License-Identifier: GPL-2.0-or-later
// Frames decoded before they are pushed, on the thread that has their bytes. A front end that
// measures on a thread of its own (the Wireshark plugin's engine thread) hands these over instead
// of the bytes when a frame is long: a full-size frame's ~1,500 bytes become one decoding of
// ~300, and the measuring thread does not decode it again (FrameIn::decoded). The engine decodes
// a frame pushed without one by the same function, so the results are the same either way.
#pragma once

#include <cstddef>
#include <memory>

#include "rdmatel/engine.h"

namespace rdmatel {

class DecodedFrames {
 public:
  DecodedFrames();
  ~DecodedFrames();
  DecodedFrames(DecodedFrames&&) noexcept;
  DecodedFrames& operator=(DecodedFrames&&) noexcept;  ///< the one moved from is left empty

  /// Decodes `in`'s bytes (link, data, cap_len, wire_len) into a new last slot; returns its index.
  size_t decode(const FrameIn& in);
  /// Copies slot `i` of `other` to a new last slot; returns its index.
  size_t append(const DecodedFrames& other, size_t i);
  /// Slot `i`, for FrameIn::decoded; valid until the next decode(), append() or clear().
  const DecodedFrame* at(size_t i) const;
  size_t size() const;
  void pop_back();
  void clear();  ///< keeps the storage

  /// What one decoding takes, in bytes: a frame with fewer bytes is cheaper handed over as is.
  static size_t bytes_each();

 private:
  struct Slots;
  std::unique_ptr<Slots> slots_;
  /// A new last slot (storage kept from before, or new), to be filled whole.
  DecodedFrame& new_slot();
};

}  // namespace rdmatel
