// SPDX-License-Identifier: GPL-2.0-or-later
// A double-ended queue over one power-of-two array, for the messages component's queues of small entries
// (references to messages, a stream's open messages): pushing at the back and popping at the
// front are a store and an index step each, where std::deque walks its block map, and an empty
// ring takes no memory (a deque allocates a 512-byte block up front: one per stream). Inserting
// and erasing inside (a message opened or finished out of PSN order, which is rare) shift the
// entries after the position. Grows by doubling; never shrinks (its users bound their size).
#pragma once

#include <cstddef>
#include <memory>
#include <type_traits>
#include <utility>

namespace rdmatel::messages {

template <typename T>
class Ring {
  static_assert(std::is_trivially_copyable_v<T>);

 public:
  Ring() = default;
  Ring(Ring&& o) noexcept { *this = std::move(o); }
  Ring& operator=(Ring&& o) noexcept {
    buf_ = std::move(o.buf_);
    head_ = std::exchange(o.head_, 0);
    size_ = std::exchange(o.size_, 0);
    capacity_ = std::exchange(o.capacity_, 0);
    mask_ = std::exchange(o.mask_, 0);
    return *this;
  }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  /// The i-th entry from the front.
  T& operator[](size_t i) { return buf_[(head_ + i) & mask_]; }
  const T& operator[](size_t i) const { return buf_[(head_ + i) & mask_]; }
  T& front() { return buf_[head_]; }
  const T& front() const { return buf_[head_]; }
  T& back() { return (*this)[size_ - 1]; }
  const T& back() const { return (*this)[size_ - 1]; }

  void push_back(const T& x) {
    if (size_ == capacity_) [[unlikely]]
      grow();
    buf_[(head_ + size_) & mask_] = x;
    ++size_;
  }
  void pop_front() {
    head_ = (head_ + 1) & mask_;
    --size_;
  }
  void pop_back() { --size_; }
  void clear() { head_ = size_ = 0; }

  /// Inserts `x` before the i-th entry (i == size(): at the back), moving the entries on the
  /// shorter side of it.
  void insert(size_t i, const T& x) {
    if (size_ == capacity_) [[unlikely]]
      grow();
    if (i < size_ / 2) {
      head_ = (head_ - 1) & mask_;
      ++size_;
      for (size_t j = 0; j < i; ++j) (*this)[j] = (*this)[j + 1];
    } else {
      ++size_;
      for (size_t j = size_ - 1; j > i; --j) (*this)[j] = (*this)[j - 1];
    }
    (*this)[i] = x;
  }
  /// Erases the i-th entry, keeping the order of the others (moving those on its shorter side).
  void erase(size_t i) {
    if (i < size_ / 2) {
      for (size_t j = i; j > 0; --j) (*this)[j] = (*this)[j - 1];
      pop_front();
    } else {
      for (size_t j = i; j + 1 < size_; ++j) (*this)[j] = (*this)[j + 1];
      --size_;
    }
  }
  /// Erases the entries `drop` is true for, keeping the order of the others.
  template <typename Pred>
  void erase_if(Pred&& drop) {
    size_t kept = 0;
    for (size_t i = 0; i < size_; ++i)
      if (!drop(std::as_const((*this)[i]))) (*this)[kept++] = (*this)[i];
    size_ = kept;
  }

 private:
  [[gnu::noinline]] void grow() {  // out of line: push_back stays small enough to inline
    const size_t capacity = capacity_ ? 2 * capacity_ : 8;
    std::unique_ptr<T[]> bigger(new T[capacity]);
    for (size_t i = 0; i < size_; ++i) bigger[i] = (*this)[i];
    buf_ = std::move(bigger);
    head_ = 0;
    capacity_ = capacity;
    mask_ = capacity - 1;
  }

  std::unique_ptr<T[]> buf_;
  size_t head_ = 0, size_ = 0, capacity_ = 0, mask_ = 0;
};

}  // namespace rdmatel::messages
