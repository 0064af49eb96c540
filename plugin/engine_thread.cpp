// SPDX-License-Identifier: GPL-2.0-or-later
#include "plugin/engine_thread.h"

#include <pthread.h>

namespace rdmatel::plugin {

EngineThread::EngineThread(std::function<void(const FrameIn&)> push)
    : push_(std::move(push)), thread_([this] { run(); }) {}

EngineThread::~EngineThread() {
  stopping_ = true;
  channel_.close();
  thread_.join();
}

void EngineThread::add(const FrameIn& in) {
  Batch& b = filling_;
  b.frames.push_back(in);
  b.frames.back().data = nullptr;
  // A frame without bytes is pushed without them, as on the dissecting thread.
  b.offsets.push_back(in.data ? b.bytes.size() : kNoBytes);
  if (in.data && in.cap_len) b.bytes.insert(b.bytes.end(), in.data, in.data + in.cap_len);
  if (b.frames.size() >= kFramesPerBatch || b.bytes.size() >= kBytesPerBatch) submit_all_but_newest();
}

bool EngineThread::retract(uint64_t frame) {
  Batch& b = filling_;
  if (b.frames.empty() || b.frames.back().frame != frame) return false;
  if (b.offsets.back() != kNoBytes) b.bytes.resize(b.offsets.back());
  b.frames.pop_back();
  b.offsets.pop_back();
  return true;
}

void EngineThread::submit_all_but_newest() {
  Batch& b = filling_;
  if (b.frames.size() < 2) return;  // one frame over the byte limit: it goes with the next one
  const FrameIn newest = b.frames.back();
  const size_t offset = b.offsets.back();
  if (offset != kNoBytes) newest_bytes_.assign(b.bytes.begin() + ptrdiff_t(offset), b.bytes.end());
  retract(newest.frame);
  submit();
  filling_.frames.push_back(newest);
  filling_.offsets.push_back(offset == kNoBytes ? kNoBytes : 0);
  if (offset != kNoBytes) filling_.bytes.assign(newest_bytes_.begin(), newest_bytes_.end());
}

void EngineThread::submit() {
  channel_.push(std::move(filling_));
  ++submitted_;
  filling_ = channel_.spare();
}

bool EngineThread::wait_idle() {
  if (!filling_.frames.empty()) submit();
  std::unique_lock lock(mutex_);
  pushed_changed_.wait(lock, [this] { return pushed_ == submitted_; });
  // The mutex orders the thread's pushes before what this thread reads next.
  const bool ok = !failed_;
  failed_ = false;
  return ok;
}

void EngineThread::run() {
  pthread_setname_np(pthread_self(), "rdmatel-engine");  // for top -H, perf and gdb
  Batch b;
  while (channel_.pop(b)) {
    bool failed = false;
    for (size_t i = 0; i < b.frames.size() && !stopping_; ++i) {
      FrameIn& in = b.frames[i];
      in.data = b.offsets[i] == kNoBytes ? nullptr : b.bytes.data() + b.offsets[i];
      // As on the dissecting thread (rdmatel_proto.cpp, guarded): a push that throws loses its
      // frame's results and the others go on.
      try {
        push_(in);
      } catch (...) {
        failed = true;
      }
    }
    b.frames.clear();
    b.offsets.clear();
    b.bytes.clear();
    channel_.recycle(std::move(b));
    {
      std::lock_guard lock(mutex_);
      ++pushed_;
      failed_ = failed_ || failed;
    }
    pushed_changed_.notify_all();
  }
}

}  // namespace rdmatel::plugin
