// SPDX-License-Identifier: GPL-2.0-or-later
#include "plugin/engine_thread.h"

#include <pthread.h>

namespace rdmatel::plugin {

EngineThread::EngineThread(std::function<void(const FrameIn&)> push)
    : push_(std::move(push)), filling_(std::make_unique<Batch>()), thread_([this] { run(); }) {}

EngineThread::~EngineThread() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  changed_.notify_all();
  thread_.join();
}

void EngineThread::add(const FrameIn& in) {
  Batch& b = *filling_;
  b.frames.push_back(in);
  b.frames.back().data = nullptr;
  // A frame without bytes is pushed without them, as on the dissecting thread.
  b.offsets.push_back(in.data ? b.bytes.size() : kNoBytes);
  if (in.data && in.cap_len) b.bytes.insert(b.bytes.end(), in.data, in.data + in.cap_len);
  if (b.frames.size() >= kFramesPerBatch || b.bytes.size() >= kBytesPerBatch) submit();
}

void EngineThread::submit() {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [this] { return queued_.size() < kMaxQueued; });
  queued_.push_back(std::move(filling_));
  if (!free_.empty()) {
    filling_ = std::move(free_.back());
    free_.pop_back();
  } else {
    filling_ = std::make_unique<Batch>();
  }
  lock.unlock();
  changed_.notify_all();
}

bool EngineThread::wait_idle() {
  if (!filling_->frames.empty()) submit();
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [this] { return queued_.empty() && !busy_; });
  // The mutex orders the thread's pushes before what this thread reads next.
  const bool ok = !failed_;
  failed_ = false;
  return ok;
}

void EngineThread::run() {
  pthread_setname_np(pthread_self(), "rdmatel-engine");  // for top -H, perf and gdb
  std::unique_lock lock(mutex_);
  for (;;) {
    changed_.wait(lock, [this] { return stop_ || !queued_.empty(); });
    if (stop_) return;
    std::unique_ptr<Batch> b = std::move(queued_.front());
    queued_.pop_front();
    busy_ = true;
    lock.unlock();
    changed_.notify_all();  // room for another batch
    bool failed = false;
    for (size_t i = 0; i < b->frames.size(); ++i) {
      FrameIn& in = b->frames[i];
      in.data = b->offsets[i] == kNoBytes ? nullptr : b->bytes.data() + b->offsets[i];
      // As on the dissecting thread (rdmatel_proto.cpp, guarded): a push that throws loses its
      // frame's results and the others go on.
      try {
        push_(in);
      } catch (...) {
        failed = true;
      }
    }
    b->clear();
    lock.lock();
    free_.push_back(std::move(b));
    busy_ = false;
    failed_ = failed_ || failed;
    changed_.notify_all();
  }
}

}  // namespace rdmatel::plugin
