// SPDX-License-Identifier: GPL-2.0-or-later
// A vector of trivially copyable elements that keeps its first N inline: most I/Os are seen at
// one to three points, and an allocation per I/O would cost more than the I/O's matching. The
// inline slots are raw storage: an empty vector costs nothing to make (elements with default
// member initializers are set up only when added).
#pragma once

#include <cstddef>
#include <memory>
#include <new>
#include <type_traits>

namespace rdmatel {

template <typename T, size_t N>
class SmallVector {
  static_assert(std::is_trivially_copyable_v<T>, "elements are moved with memcpy-like copies");

 public:
  SmallVector() = default;
  SmallVector(const SmallVector& o) { *this = o; }
  SmallVector& operator=(const SmallVector& o) {
    if (this == &o) return *this;
    clear();
    for (const T& x : o) push_back(x);
    return *this;
  }
  SmallVector(SmallVector&& o) noexcept { *this = std::move(o); }
  SmallVector& operator=(SmallVector&& o) noexcept {
    if (this == &o) return *this;
    heap_ = std::move(o.heap_);
    capacity_ = o.capacity_;
    size_ = o.size_;
    if (!heap_)
      for (size_t i = 0; i < size_; ++i) new (&inline_.items[i]) T(o.inline_.items[i]);
    o.capacity_ = N;
    o.size_ = 0;
    return *this;
  }

  T* begin() { return data(); }
  T* end() { return data() + size_; }
  const T* begin() const { return data(); }
  const T* end() const { return data() + size_; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T& operator[](size_t i) { return data()[i]; }
  const T& operator[](size_t i) const { return data()[i]; }
  void clear() { size_ = 0; }

  T& emplace_back() {
    if (size_ == capacity_) grow();
    return *new (data() + size_++) T{};  // in place: no temporary copied in
  }
  void erase(T* pos) {
    for (T* p = pos; p + 1 < end(); ++p) *p = *(p + 1);
    --size_;
  }
  void push_back(const T& x) {
    if (size_ == capacity_) grow();
    new (data() + size_++) T(x);
  }

 private:
  T* data() { return heap_ ? heap_.get() : inline_.items; }
  const T* data() const { return heap_ ? heap_.get() : inline_.items; }
  [[gnu::noinline]] void grow() {  // out of line: adding stays a few instructions
    size_t cap = capacity_ * 2;
    std::unique_ptr<T[]> bigger(new T[cap]);
    for (size_t i = 0; i < size_; ++i) bigger[i] = data()[i];
    heap_ = std::move(bigger);
    capacity_ = cap;
  }

  union Inline {
    Inline() {}  // no element made until one is added
    T items[N];
  } inline_;
  std::unique_ptr<T[]> heap_;
  size_t capacity_ = N;
  size_t size_ = 0;
};

}  // namespace rdmatel
