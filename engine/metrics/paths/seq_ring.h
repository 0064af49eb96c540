// SPDX-License-Identifier: GPL-2.0-or-later
// A queue of the packets `paths` keeps waiting, in creation order, each found by its creation
// number (what SeqIndex maps an identity to). A ring of power-of-two capacity whose slot for
// number s is s & mask: finding an element is an AND and an index, where a std::deque of them
// divided and followed a block pointer, and allocated a block of four every fourth packet.
// Slots are reused as they are: an element pushed is what the one popped from its slot left
// (the caller sets every field it reads; an element's own storage is kept, not freed and
// allocated again). Grows by doubling when full; the caller bounds its length.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace rdmatel::paths {

template <typename T>
class SeqRing {
 public:
  bool empty() const { return front_ == end_; }
  /// Elements queued (creation numbers wrap modulo 2^32; the queue is far shorter).
  size_t size() const { return uint32_t(end_ - front_); }
  /// Creation number of the front element, and of the next one pushed.
  uint32_t front_seq() const { return front_; }
  uint32_t end_seq() const { return end_; }
  /// The element with creation number `seq` (queued: front_seq() <= seq < end_seq()).
  T& operator[](uint32_t seq) { return slots_[seq & mask_]; }
  T& front() { return slots_[front_ & mask_]; }
  /// Queues an element at the back and returns it, as its slot's last occupant left it.
  T& push_back() {
    if (size() == slots_.size()) grow();
    return slots_[end_++ & mask_];
  }
  void pop_front() { ++front_; }
  /// Empties the queue and frees its slots (creation numbers go on from where they were).
  void clear() {
    std::vector<T>().swap(slots_);
    mask_ = 0;
    front_ = end_;
  }

 private:
  void grow() {
    std::vector<T> bigger(slots_.empty() ? 1024 : slots_.size() * 2);
    const size_t mask = bigger.size() - 1;
    for (uint32_t s = front_; s != end_; ++s) bigger[s & mask] = std::move(slots_[s & mask_]);
    slots_.swap(bigger);
    mask_ = mask;
  }

  std::vector<T> slots_;
  size_t mask_ = 0;
  uint32_t front_ = 0;
  uint32_t end_ = 0;
};

}  // namespace rdmatel::paths
