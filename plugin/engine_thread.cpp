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
  b.frames.back().decoded = nullptr;
  // A frame without bytes is pushed without them, as on the dissecting thread.
  Carried c;
  if (in.data && in.cap_len >= decode_ahead_from()) {
    c = {Carried::kDecoding, b.decoded.decode(in)};
  } else if (in.data) {
    c = {Carried::kBytes, b.bytes.size()};
    b.bytes.insert(b.bytes.end(), in.data, in.data + in.cap_len);
  }
  b.carried.push_back(c);
  if (b.frames.size() >= kFramesPerBatch || b.size_in_bytes() >= kBytesPerBatch) submit_all_but_newest();
}

bool EngineThread::retract(uint64_t frame) {
  Batch& b = filling_;
  if (b.frames.empty() || b.frames.back().frame != frame) return false;
  const Carried c = b.carried.back();
  if (c.kind == Carried::kBytes) b.bytes.resize(c.at);
  if (c.kind == Carried::kDecoding) b.decoded.pop_back();
  b.frames.pop_back();
  b.carried.pop_back();
  return true;
}

void EngineThread::submit_all_but_newest() {
  Batch& b = filling_;
  if (b.frames.size() < 2) return;  // one frame over the byte limit: it goes with the next one
  const FrameIn newest = b.frames.back();
  Carried c = b.carried.back();
  newest_decoded_.clear();
  if (c.kind == Carried::kBytes) newest_bytes_.assign(b.bytes.begin() + ptrdiff_t(c.at), b.bytes.end());
  if (c.kind == Carried::kDecoding) newest_decoded_.append(b.decoded, c.at);
  retract(newest.frame);
  submit();
  filling_.frames.push_back(newest);
  if (c.kind == Carried::kBytes) {
    c.at = 0;
    filling_.bytes.assign(newest_bytes_.begin(), newest_bytes_.end());
  }
  if (c.kind == Carried::kDecoding) c.at = filling_.decoded.append(newest_decoded_, 0);
  filling_.carried.push_back(c);
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
      const Carried c = b.carried[i];
      if (c.kind == Carried::kBytes) in.data = b.bytes.data() + c.at;
      if (c.kind == Carried::kDecoding) in.decoded = b.decoded.at(c.at);
      // As on the dissecting thread (rdmatel_proto.cpp, guarded): a push that throws loses its
      // frame's results and the others go on.
      try {
        push_(in);
      } catch (...) {
        failed = true;
      }
    }
    b.frames.clear();
    b.carried.clear();
    b.bytes.clear();
    b.decoded.clear();
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
