// SPDX-License-Identifier: GPL-2.0-or-later
// An open-addressing hash map for the hot paths: one array of slots (key, value, stored hash),
// linear probing, power-of-two capacity, deletion by backward shift (no tombstones). A lookup
// touches one or two cache lines where std::unordered_map chases a node pointer per element.
// Pointers to values are invalidated by any insertion.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace rdmatel {

template <typename K, typename V, typename Hash>
class FlatMap {
 public:
  V* find(const K& k) {
    if (size_ == 0) return nullptr;
    uint64_t h = hash_of(k);
    for (size_t i = h & mask_;; i = (i + 1) & mask_) {
      Slot& s = slots_[i];
      if (!s.used) return nullptr;
      if (s.hash == h && s.key == k) return &s.value;
    }
  }
  const V* find(const K& k) const { return const_cast<FlatMap*>(this)->find(k); }

  /// The value of `k`, default-constructed when new.
  V& operator[](const K& k) {
    if ((size_ + 1) * 8 > slots_.size() * 7) grow();
    uint64_t h = hash_of(k);
    for (size_t i = h & mask_;; i = (i + 1) & mask_) {
      Slot& s = slots_[i];
      if (!s.used) {
        s.used = true;
        s.hash = h;
        s.key = k;
        s.value = V{};
        ++size_;
        return s.value;
      }
      if (s.hash == h && s.key == k) return s.value;
    }
  }

  bool erase(const K& k) {
    return erase_if(k, [](V&) { return true; });
  }

  /// Finds `k` and erases it when `f(value)` says so (`f` may change the value first, say drop
  /// an element of a list and erase the key once it is empty): one probe where find() then
  /// erase() take two. Returns whether `k` was present.
  template <typename F>
  bool erase_if(const K& k, F&& f) {
    if (size_ == 0) return false;
    uint64_t h = hash_of(k);
    size_t i = h & mask_;
    for (;; i = (i + 1) & mask_) {
      Slot& s = slots_[i];
      if (!s.used) return false;
      if (s.hash == h && s.key == k) break;
    }
    if (!f(slots_[i].value)) return true;
    // Backward shift: move later members of the probe run into the hole.
    for (size_t j = (i + 1) & mask_;; j = (j + 1) & mask_) {
      Slot& next = slots_[j];
      if (!next.used) break;
      size_t home = next.hash & mask_;
      // `next` may move to `i` when its home lies cyclically outside (i, j].
      bool movable = i <= j ? (home <= i || home > j) : (home <= i && home > j);
      if (movable) {
        slots_[i] = std::move(next);
        i = j;
      }
    }
    slots_[i].used = false;
    slots_[i].value = V{};
    --size_;
    return true;
  }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

  template <typename F>
  void for_each(F&& f) {
    for (Slot& s : slots_)
      if (s.used) f(s.key, s.value);
  }

 private:
  struct Slot {
    K key{};
    V value{};
    uint64_t hash = 0;
    bool used = false;
  };
  static uint64_t hash_of(const K& k) {
    uint64_t h = uint64_t(Hash{}(k));
    h ^= h >> 29;  // spread whatever the functor gives over the low bits used as the index
    h *= 0xBF58476D1CE4E5B9ULL;
    return h ^ (h >> 32);
  }
  [[gnu::noinline]] void grow() {  // out of line: a lookup that adds stays short
    std::vector<Slot> old;
    old.swap(slots_);
    slots_.resize(old.empty() ? 16 : old.size() * 2);
    mask_ = slots_.size() - 1;
    size_ = 0;
    for (Slot& s : old)
      if (s.used) {
        for (size_t i = s.hash & mask_;; i = (i + 1) & mask_)
          if (!slots_[i].used) {
            slots_[i] = std::move(s);
            ++size_;
            break;
          }
      }
  }

  std::vector<Slot> slots_;
  size_t mask_ = 0;
  size_t size_ = 0;
};

}  // namespace rdmatel
