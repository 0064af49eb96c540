// SPDX-License-Identifier: GPL-2.0-or-later
// A queue of batches between two threads, one producer and one consumer (the engine with
// threads > 1, the Wireshark plugin's engine thread): the producer fills a batch on its own and
// hands it over whole, so the lock is taken once per batch, not per item. Consumed batches come
// back empty for the producer to fill again, so their storage is allocated once. Bounded: the
// producer waits while `capacity` batches are queued.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <mutex>
#include <vector>

namespace rdmatel {

template <typename Batch>
class BatchChannel {
 public:
  explicit BatchChannel(size_t capacity) : capacity_(capacity ? capacity : 1) {}

  /// Queues `batch` (waits while the channel is full). Once the consumer gave up (abandon()), the
  /// batch is dropped.
  void push(Batch&& batch) {
    std::unique_lock lock(mutex_);
    not_full_.wait(lock, [&] { return queue_.size() < capacity_ || abandoned_; });
    if (abandoned_) return;
    queue_.push_back(std::move(batch));
    not_empty_.notify_one();
  }
  /// No batch will follow.
  void close() {
    std::lock_guard lock(mutex_);
    closed_ = true;
    not_empty_.notify_all();
  }
  /// The consumer stops reading (it failed, or the engine is destroyed): the producer no longer waits.
  void abandon() {
    std::lock_guard lock(mutex_);
    abandoned_ = true;
    not_full_.notify_all();
  }

  /// The next batch, waiting for one; false once the channel is closed and empty.
  bool pop(Batch& out) {
    std::unique_lock lock(mutex_);
    not_empty_.wait(lock, [&] { return !queue_.empty() || closed_; });
    return take(out);
  }
  /// The next batch if one is queued.
  bool try_pop(Batch& out) {
    std::lock_guard lock(mutex_);
    return take(out);
  }
  /// True once closed and every batch taken.
  bool drained() const {
    std::lock_guard lock(mutex_);
    return closed_ && queue_.empty();
  }

  /// Gives a consumed batch's storage back (the consumer clears it first).
  void recycle(Batch&& empty) {
    std::lock_guard lock(mutex_);
    if (spare_.size() < capacity_) spare_.push_back(std::move(empty));
  }
  /// An empty batch for the producer: a recycled one when there is one.
  Batch spare() {
    std::lock_guard lock(mutex_);
    if (spare_.empty()) return Batch{};
    Batch b = std::move(spare_.back());
    spare_.pop_back();
    return b;
  }

 private:
  bool take(Batch& out) {
    if (queue_.empty()) return false;
    out = std::move(queue_.front());
    queue_.pop_front();
    not_full_.notify_one();
    return true;
  }

  const size_t capacity_;
  mutable std::mutex mutex_;
  std::condition_variable not_empty_, not_full_;
  std::deque<Batch> queue_;
  std::vector<Batch> spare_;
  bool closed_ = false;
  bool abandoned_ = false;
};

}  // namespace rdmatel
