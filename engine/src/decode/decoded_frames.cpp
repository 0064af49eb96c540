// SPDX-License-Identifier: GPL-2.0-or-later
#include "rdmatel/decoded_frames.h"

#include <vector>

#include "engine/src/decode/decoded_frame.h"

namespace rdmatel {

struct DecodedFrames::Slots {
  std::vector<DecodedFrame> frames;
  size_t used = 0;  ///< frames beyond it are kept for their storage (decoding fills a slot whole)
};

// A moved-from set is empty and takes new storage when it is used again.
DecodedFrames::DecodedFrames() = default;
DecodedFrames::~DecodedFrames() = default;
DecodedFrames::DecodedFrames(DecodedFrames&&) noexcept = default;
DecodedFrames& DecodedFrames::operator=(DecodedFrames&&) noexcept = default;

DecodedFrame& DecodedFrames::new_slot() {
  if (!slots_) slots_ = std::make_unique<Slots>();
  Slots& s = *slots_;
  if (s.used == s.frames.size()) s.frames.emplace_back();
  return s.frames[s.used++];
}

size_t DecodedFrames::decode(const FrameIn& in) {
  decode_frame(in.link, in.data, in.cap_len, in.wire_len, new_slot());
  return slots_->used - 1;
}

size_t DecodedFrames::append(const DecodedFrames& other, size_t i) {
  new_slot() = other.slots_->frames[i];
  return slots_->used - 1;
}

const DecodedFrame* DecodedFrames::at(size_t i) const { return &slots_->frames[i]; }
size_t DecodedFrames::size() const { return slots_ ? slots_->used : 0; }
void DecodedFrames::pop_back() { --slots_->used; }
void DecodedFrames::clear() {
  if (slots_) slots_->used = 0;
}
size_t DecodedFrames::bytes_each() { return sizeof(DecodedFrame); }

}  // namespace rdmatel
