// SPDX-License-Identifier: GPL-2.0-or-later
#include "cli/stream_source.h"

#include <time.h>

#include "adapters/wiretap/wiretap_source.h"

namespace rdmatel::cli {
namespace {

constexpr int64_t kTickNs = 100 * 1000 * 1000;

int64_t monotonic_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

class StoppableSource final : public CaptureSource {
 public:
  StoppableSource(std::unique_ptr<CaptureSource> inner, const std::atomic<bool>& stop, TickFn tick)
      : inner_(std::move(inner)),
        stop_(stop),
        tick_(std::move(tick)),
        next_tick_(monotonic_ns() + kTickNs) {}

  bool next(CapturedPacket& out) override {
    if (stopped()) return false;
    const int64_t now = monotonic_ns();
    if (now >= next_tick_) {
      next_tick_ = now + kTickNs;
      if (tick_) tick_();
    }
    return inner_->next(out) && !stopped();
  }
  const std::vector<CaptureInterface>& interfaces() const override { return inner_->interfaces(); }
  const std::string& error() const override { return stop_.load() ? none_ : inner_->error(); }
  uint64_t position() const override { return inner_->position(); }
  uint64_t size() const override { return inner_->size(); }
  std::string format() const override { return inner_->format(); }

 private:
  bool stopped() const { return stop_.load(std::memory_order_relaxed); }
  std::unique_ptr<CaptureSource> inner_;
  const std::atomic<bool>& stop_;
  TickFn tick_;
  int64_t next_tick_;
  std::string none_;
};

}  // namespace

std::unique_ptr<CaptureSource> open_stream(const std::string& path, const std::atomic<bool>& stop,
                                           TickFn tick, std::string& error) {
  std::unique_ptr<CaptureSource> src;
  // A pipe is read by libwiretap, which reads a stream as it comes; the fast reader maps files.
  OpenStatus st = path == "-" ? OpenStatus::kNotRecognized : open_fast_capture(path, src, error);
  if (st == OpenStatus::kError) return nullptr;
  if (st == OpenStatus::kNotRecognized) {
    src = wiretap::open_wiretap_capture(path, error);
    if (!src) {
      if (path == "-" && error.rfind("- ", 0) == 0) error = "standard input" + error.substr(1);
      return nullptr;
    }
  }
  return std::make_unique<StoppableSource>(std::move(src), stop, std::move(tick));
}

}  // namespace rdmatel::cli
