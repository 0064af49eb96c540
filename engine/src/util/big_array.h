// SPDX-License-Identifier: GPL-2.0-or-later
// An array of trivially copyable elements for large, long-lived buffers (the reorder buffers hold
// a quarter of a second of packets: tens of MB). Beyond 2 MiB it is mapped directly and the kernel
// is asked for transparent huge pages: one fault per 2 MiB instead of per 4 KiB. Grown in place
// (mremap moves the pages, it does not copy or zero them again): the old and the new array never
// both take memory, and only the added part is faulted in.
#pragma once

#include <sys/mman.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <type_traits>
#include <utility>

namespace rdmatel {

template <typename T>
class BigArray {
  static_assert(std::is_trivially_copyable_v<T> && std::is_trivially_destructible_v<T>);

 public:
  BigArray() = default;
  explicit BigArray(size_t n) : size_(n) {
    bytes_ = n * sizeof(T);
    if (bytes_ >= kMapAbove) {
      void* p = mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (p == MAP_FAILED) throw std::bad_alloc();
      madvise(p, bytes_, MADV_HUGEPAGE);  // a hint: without huge pages it is an ordinary mapping
      data_ = static_cast<T*>(p);
      mapped_ = true;
    } else if (n) {
      data_ = static_cast<T*>(std::calloc(n, sizeof(T)));
      if (!data_) throw std::bad_alloc();
    }
  }
  ~BigArray() { release(); }
  BigArray(const BigArray&) = delete;
  BigArray& operator=(const BigArray&) = delete;
  BigArray(BigArray&& o) noexcept { *this = std::move(o); }
  BigArray& operator=(BigArray&& o) noexcept {
    if (this != &o) {
      release();
      data_ = std::exchange(o.data_, nullptr);
      size_ = std::exchange(o.size_, 0);
      bytes_ = std::exchange(o.bytes_, 0);
      mapped_ = std::exchange(o.mapped_, false);
    }
    return *this;
  }

  /// Grows to `n` elements (n >= size()), keeping the first size() (the rest is zero-filled).
  void grow_to(size_t n) {
    const size_t bytes = n * sizeof(T);
    if (mapped_) {
      void* p = mremap(data_, bytes_, bytes, MREMAP_MAYMOVE);
      if (p == MAP_FAILED) throw std::bad_alloc();
      madvise(p, bytes, MADV_HUGEPAGE);
      data_ = static_cast<T*>(p);
    } else if (bytes >= kMapAbove) {
      BigArray bigger(n);
      if (size_) std::memcpy(static_cast<void*>(bigger.data_), data_, bytes_);
      *this = std::move(bigger);
    } else {
      void* p = std::realloc(data_, bytes);
      if (!p) throw std::bad_alloc();
      std::memset(static_cast<char*>(p) + bytes_, 0, bytes - bytes_);
      data_ = static_cast<T*>(p);
    }
    size_ = n;
    bytes_ = bytes;
  }

  /// Gives the memory of elements [from, to) back to the system where it can (whole pages of a
  /// mapped array); what was there reads as zero afterwards. For a buffer read once from the
  /// front (a sort's source): what was read takes no memory while the rest is.
  void discard(size_t from, size_t to) {
    if (!mapped_ || to <= from) return;
    constexpr uintptr_t kPage = 4096;
    const uintptr_t begin = (reinterpret_cast<uintptr_t>(data_ + from) + kPage - 1) & ~(kPage - 1);
    const uintptr_t end = reinterpret_cast<uintptr_t>(data_ + to) & ~(kPage - 1);
    if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED);
  }

  size_t size() const { return size_; }
  T* data() { return data_; }
  const T* data() const { return data_; }
  T& operator[](size_t i) { return data_[i]; }
  const T& operator[](size_t i) const { return data_[i]; }

 private:
  static constexpr size_t kMapAbove = size_t(2) << 20;
  void release() {
    if (!data_) return;
    if (mapped_) munmap(data_, bytes_);
    else std::free(data_);
    data_ = nullptr;
  }
  T* data_ = nullptr;
  size_t size_ = 0;
  size_t bytes_ = 0;
  bool mapped_ = false;
};

}  // namespace rdmatel
