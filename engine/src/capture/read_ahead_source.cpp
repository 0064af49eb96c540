// SPDX-License-Identifier: GPL-2.0-or-later
#include "engine/src/capture/read_ahead_source.h"

#include "rdmatel/decoded_frames.h"

#include <algorithm>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <deque>
#include <exception>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

namespace rdmatel {
namespace {

// A batch is a few hundred microseconds of decompression (or a hundred of decoding): long enough
// that handing it over (a lock and a wake-up) costs little beside it, short enough that both
// threads start at once and that it stays in the caches (kDecode: ~220 KB of decoded frames).
constexpr size_t kBatchPackets = 1024;
constexpr size_t kBatchBytes = size_t(256) << 10;
constexpr size_t kQueued = 2;  ///< full batches waiting for the reader; the thread then waits

struct Batch {
  /// kCopy: `data` unset, the bytes are at offsets[i]; kDecode: `data` as the source gave it,
  /// the frame decoded in decoded.at(i).
  std::vector<CapturedPacket> packets;
  std::vector<size_t> offsets;
  DecodedFrames decoded;  ///< its storage is kept across clear()
  /// How many interfaces the source had declared when it returned packets[i].
  std::vector<uint32_t> interfaces_after;
  std::vector<uint8_t> bytes;
  /// The source's interfaces declared since the previous batch (an interface's place in the
  /// whole list: the count of earlier batches' ones before it).
  std::vector<CaptureInterface> new_interfaces;
  bool end = false;  ///< the source ended after these packets
  uint32_t interfaces_at_end = 0;
  std::string error;      ///< why it ended, when it ended early
  uint64_t position = 0;  ///< the source's position after its last packet

  void clear() {
    packets.clear();
    offsets.clear();
    decoded.clear();
    interfaces_after.clear();
    bytes.clear();
    new_interfaces.clear();
    end = false;
    error.clear();
  }
};

class ReadAheadSource final : public CaptureSource {
 public:
  ReadAheadSource(std::unique_ptr<CaptureSource> source, ReadAhead mode, std::shared_ptr<ReadAheadSlots> slots)
      : mode_(mode),
        slots_(std::move(slots)),
        source_(std::move(source)),
        interfaces_(source_->interfaces()),
        position_(source_->position()),
        size_(source_->size()),
        format_(source_->format()),
        published_interfaces_(interfaces_.size()) {}

  ~ReadAheadSource() override {
    {
      std::lock_guard lock(mutex_);
      stop_ = true;
    }
    changed_.notify_all();
    if (thread_.joinable()) thread_.join();
    give_back_slot();
  }

  bool next(CapturedPacket& out) override {
    // A packet of the batch being taken (a batch is only held while reading ahead, until the
    // end): inline, without the stack frame the rest needs.
    if (current_ && taken_ < current_->packets.size()) [[likely]] {
      take(*current_, out);
      return true;
    }
    return next_otherwise(out);
  }

  const std::vector<CaptureInterface>& interfaces() const override { return interfaces_; }
  const std::string& error() const override { return error_; }
  uint64_t position() const override { return position_; }
  uint64_t size() const override { return size_; }
  std::string format() const override { return format_; }

 private:
  void take(const Batch& b, CapturedPacket& out) {
    const size_t i = taken_++;
    out = b.packets[i];
    if (mode_ == ReadAhead::kDecode) out.decoded = b.decoded.at(i);
    else out.data = b.bytes.data() + b.offsets[i];
    reveal_interfaces(b.interfaces_after[i]);
  }

  [[gnu::noinline]] bool next_otherwise(CapturedPacket& out) {
    if (direct_) return direct(out);
    if (!reading_) return first(out);
    if (ended_) return false;
    while (!current_ || taken_ == current_->packets.size()) {
      if (current_ && current_->end) {
        finish();
        return false;
      }
      if (!take_next_batch()) return false;
    }
    take(*current_, out);
    return true;
  }

  // The first packet is read here, on the caller's thread: a file the session opens but does not
  // reach yet (a later file of a ring) keeps no thread and no batch. The thread starts at the
  // second call, once the caller is done with the first packet's bytes (they belong to the
  // source, which the thread then reads on).
  bool first(CapturedPacket& out) {
    if (!first_taken_) {
      first_taken_ = true;
      const bool got = direct(out);
      published_interfaces_ = interfaces_.size();
      ended_ = !got;
      return got;
    }
    if (ended_) return false;
    // Too many files read ahead at once already: this one is read on this thread (for good).
    if (slots_ && !slots_->take()) {
      direct_ = true;
      return direct(out);
    }
    holds_slot_ = slots_ != nullptr;
    try {
      thread_ = std::thread([this] { read(); });
    } catch (const std::system_error&) {
      give_back_slot();
      direct_ = true;  // no thread to be had: read on this one, as without read-ahead
      return direct(out);
    }
    reading_ = true;
    return next(out);
  }

  void give_back_slot() {
    if (holds_slot_) slots_->give_back();
    holds_slot_ = false;
  }

  // A packet read on the caller's thread (the first, or all of them without a thread).
  bool direct(CapturedPacket& out) {
    const bool got = source_->next(out);
    interfaces_ = source_->interfaces();
    position_ = source_->position();
    if (!got) error_ = source_->error();
    return got;
  }

  void reveal_interfaces(size_t count) {
    if (interfaces_.size() < count) [[unlikely]]
      reveal_more_interfaces(count);
  }
  [[gnu::noinline]] void reveal_more_interfaces(size_t count) {
    while (interfaces_.size() < count && !pending_interfaces_.empty()) {
      interfaces_.push_back(std::move(pending_interfaces_.front()));
      pending_interfaces_.pop_front();
    }
  }

  // The source has ended: its thread has too. The batches are let go at once: a ring of many
  // compressed files is read one file after another, and each file read to its end would
  // otherwise keep its batches until the whole run is over.
  void finish() {
    reveal_interfaces(current_->interfaces_at_end);
    error_ = current_->error;
    position_ = current_->position;
    ended_ = true;
    thread_.join();
    // The capture's own drop counts come at the end of the file (interface statistics): the
    // source is this thread's to read again now.
    const std::vector<CaptureInterface>& all = source_->interfaces();
    for (size_t i = 0; i < interfaces_.size() && i < all.size(); ++i)
      interfaces_[i].capture_dropped = all[i].capture_dropped;
    give_back_slot();
    current_.reset();
    free_.clear();
    full_.clear();
  }

  // Hands the batch read back to the thread and takes the next full one, waiting if need be.
  // False when the thread failed outside a batch (no memory for one): reading ends there.
  bool take_next_batch() {
    std::unique_lock lock(mutex_);
    if (current_) free_.push_back(std::move(current_));
    changed_.notify_all();
    changed_.wait(lock, [&] { return !full_.empty() || thread_failed_; });
    if (full_.empty()) {
      error_ = thread_error_;
      ended_ = true;
      lock.unlock();
      thread_.join();
      give_back_slot();
      return false;
    }
    current_ = std::move(full_.front());
    full_.pop_front();
    lock.unlock();
    taken_ = 0;
    position_ = current_->position;
    for (CaptureInterface& i : current_->new_interfaces) pending_interfaces_.push_back(std::move(i));
    return true;
  }

  // The thread: fills batches until the source ends or the reader is destroyed. (The source's own
  // failures end a batch with their reason, in fill(); this catches running out of memory for a
  // batch, which would otherwise end the process.)
  void read() {
    try {
      read_batches();
    } catch (const std::exception& e) {
      {
        std::lock_guard lock(mutex_);
        // Into a fixed buffer: there may be no memory for a string.
        std::snprintf(thread_error_, sizeof thread_error_, "reading stopped: %s", e.what());
        thread_failed_ = true;
      }
      changed_.notify_all();
    }
  }

  void read_batches() {
    for (;;) {
      std::unique_ptr<Batch> b;
      {
        std::unique_lock lock(mutex_);
        changed_.wait(lock, [&] { return stop_ || full_.size() < kQueued; });
        if (stop_) return;
        if (!free_.empty()) {
          b = std::move(free_.back());
          free_.pop_back();
        }
      }
      if (!b) b = std::make_unique<Batch>();
      b->clear();
      fill(*b);
      const bool end = b->end;
      {
        std::lock_guard lock(mutex_);
        full_.push_back(std::move(b));
      }
      changed_.notify_all();
      if (end) return;
    }
  }

  void fill(Batch& b) {
    try {
      CapturedPacket p;
      while (b.packets.size() < kBatchPackets && b.bytes.size() < kBatchBytes) {
        if (!source_->next(p)) {
          b.end = true;
          b.error = source_->error();
          break;
        }
        if (mode_ == ReadAhead::kDecode) {
          FrameIn in;
          in.link = p.link;
          in.data = p.data;
          in.cap_len = p.cap_len;
          in.wire_len = p.wire_len;
          b.decoded.decode(in);
        } else {
          b.offsets.push_back(b.bytes.size());
          b.bytes.insert(b.bytes.end(), p.data, p.data + p.cap_len);
          p.data = nullptr;
        }
        b.packets.push_back(p);
        b.interfaces_after.push_back(uint32_t(publish_interfaces(b)));
      }
      b.interfaces_at_end = uint32_t(publish_interfaces(b));
      b.position = source_->position();
    } catch (const std::exception& e) {
      // The packets whose every part was stored stay (a throw may come between the parts).
      b.packets.resize(std::min(b.packets.size(), b.interfaces_after.size()));
      b.end = true;
      b.interfaces_at_end = uint32_t(published_interfaces_);
      b.error = std::string("reading stopped: ") + e.what();
    }
  }

  // Copies the interfaces the source declared since the last call into the batch; returns how
  // many it has declared.
  size_t publish_interfaces(Batch& b) {
    const std::vector<CaptureInterface>& all = source_->interfaces();
    for (; published_interfaces_ < all.size(); ++published_interfaces_) b.new_interfaces.push_back(all[published_interfaces_]);
    return all.size();
  }

  const ReadAhead mode_;
  const std::shared_ptr<ReadAheadSlots> slots_;
  bool holds_slot_ = false;
  std::unique_ptr<CaptureSource> source_;  ///< read by the thread once it runs, never here
  // The reader's side.
  std::vector<CaptureInterface> interfaces_;
  std::deque<CaptureInterface> pending_interfaces_;  ///< received, not yet revealed
  std::unique_ptr<Batch> current_;
  size_t taken_ = 0;
  bool first_taken_ = false, ended_ = false, reading_ = false, direct_ = false;
  std::string error_;
  uint64_t position_ = 0;
  const uint64_t size_;
  const std::string format_;
  // The thread's side.
  size_t published_interfaces_ = 0;
  // Shared, under mutex_.
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<std::unique_ptr<Batch>> full_;
  std::vector<std::unique_ptr<Batch>> free_;
  bool stop_ = false;
  bool thread_failed_ = false;  ///< the thread failed outside a batch, for this reason:
  char thread_error_[200] = {};
  std::thread thread_;
};

}  // namespace

std::unique_ptr<CaptureSource> read_ahead(std::unique_ptr<CaptureSource> source, ReadAhead mode,
                                          std::shared_ptr<ReadAheadSlots> slots) {
  return std::make_unique<ReadAheadSource>(std::move(source), mode, std::move(slots));
}

}  // namespace rdmatel
