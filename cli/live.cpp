// SPDX-License-Identifier: GPL-2.0-or-later
#include "cli/live.h"

#include <signal.h>
#include <time.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <thread>

#include "adapters/live/pcap_source.h"
#include "cli/live_outputs.h"
#include "cli/period_summary.h"
#include "cli/stream_source.h"
#include "rdmatel/session.h"
#include "rdmatel/writers.h"

namespace rdmatel::cli {
namespace {

constexpr int kExitOk = 0;
constexpr int kExitUsage = 2;
constexpr int kExitBadInput = 3;

// Set by SIGINT / SIGTERM: the sources end, the session finishes the engine, every open record
// is written. A second signal is not needed and not special: the first always ends the run.
std::atomic<bool> g_stop{false};
static_assert(std::atomic<bool>::is_always_lock_free);

extern "C" void on_stop_signal(int) {
  g_stop.store(true);
}

void install_signals() {
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;  // no SA_RESTART: a blocking read or poll returns, and the flag is seen
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  // A closed standard output or a server that went away is an error we report, not a kill.
  signal(SIGPIPE, SIG_IGN);
}

double monotonic_s() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return double(ts.tv_sec) + double(ts.tv_nsec) / 1e9;
}

class WarningPrinter final : public RecordSink {
 public:
  explicit WarningPrinter(bool quiet) : quiet_(quiet) {}
  void on_warning(const Warning& w) override {
    if (!quiet_) std::fprintf(stderr, "rdmatel: warning: %s\n", w.text.c_str());
  }

 private:
  bool quiet_;
};

}  // namespace

int run_live(const Options& o) {
  install_signals();
  const LiveOptions& lo = o.live;
  std::string error;

  // Ticks come from the sources' thread (the session's): no locking with the sinks.
  std::function<void()> on_tick;
  auto tick = [&on_tick] {
    if (on_tick) on_tick();
  };

  std::vector<SessionInput> inputs;
  live::PcapLiveSource* pcap = nullptr;
  if (!lo.interfaces.empty()) {
    live::PcapOptions po;
    po.interfaces = lo.interfaces;
    po.snaplen = lo.snaplen;
    po.filter = lo.filter;
    auto src = live::open_live_capture(po, g_stop, error);
    if (!src) {
      std::fprintf(stderr, "rdmatel: %s\n", error.c_str());
      return kExitBadInput;
    }
    src->set_tick(tick);
    pcap = src.get();
    if (!o.quiet) {
      std::string names;
      for (const CaptureInterface& i : src->interfaces())
        names += (names.empty() ? "" : ", ") + i.name;
      std::fprintf(stderr, "rdmatel: capturing on %s\n", names.c_str());
    }
    inputs.push_back(SessionInput{"live", std::move(src)});
  }
  for (const std::string& path : o.captures) {
    auto src = open_stream(path, g_stop, tick, error);
    if (!src && g_stop.load()) {
      // Told to stop while waiting for the stream's first bytes: nothing was read, nothing lost.
      if (!o.quiet)
        std::fprintf(stderr, "rdmatel: stopped before %s began\n",
                     path == "-" ? "the stream" : path.c_str());
      return kExitOk;
    }
    if (!src) {
      std::fprintf(stderr, "rdmatel: %s\n", error.c_str());
      return kExitBadInput;
    }
    inputs.push_back(SessionInput{path, std::move(src)});
  }

  // The session reads the first packet of each input when it is made: a silent interface
  // answers with a heartbeat within 100 ms, a pipe when its writer writes.
  Session session(std::move(inputs), o.settings);
  for (const std::string& e : session.usage_errors()) {
    std::fprintf(stderr, "rdmatel: %s\n", e.c_str());
    return kExitUsage;
  }
  const Engine& engine = session.engine();
  PointNamer names = [&engine](PointId id) -> const std::string& { return engine.point_name(id); };

  WarningPrinter warnings(o.quiet);
  session.subscribe(warnings);
  PeriodSummary summary;
  session.subscribe(summary);

  std::FILE* out = stdout;
  if (!o.output.empty()) {
    out = std::fopen(o.output.c_str(), "w");
    if (!out) {
      std::fprintf(stderr, "rdmatel: cannot write %s: %s\n", o.output.c_str(),
                   std::strerror(errno));
      return kExitUsage;
    }
  }
  std::unique_ptr<RecordWriter> writer;
  if (lo.records != "none") {
    writer = std::make_unique<RecordWriter>(out, o.format, *find_schema(lo.records), names);
    session.subscribe(*writer);
  }

  LiveOutputs outputs;
  if (!outputs.open(lo, engine, names, &g_stop, error)) {
    std::fprintf(stderr, "rdmatel: %s\n", error.c_str());
    if (out != stdout) std::fclose(out);
    return kExitUsage;
  }
  outputs.subscribe(session);

  // The session's thread blocks in the sources (a silent pipe), so records are flushed and the
  // summary printed by a thread of their own each period; stdio locks the stream, and the
  // summary its counters. Counters of the sources are copied at their ticks.
  const double period = double(o.settings.duration("period")) / 1e9;
  const double start = monotonic_s();
  std::atomic<uint64_t> packets{0}, dropped{0};
  std::atomic<bool> out_failed{false};
  auto capture_counts = [&] {
    packets.store(pcap ? pcap->packets() : engine.stats().frames);
    dropped.store(pcap ? pcap->drops().dropped : 0);
  };
  on_tick = [&] {
    capture_counts();
    outputs.tick(engine, packets.load(), dropped.load());
  };
  std::mutex period_mutex;
  std::condition_variable period_cv;
  bool run_over = false;
  double period_start = start;
  auto end_period = [&] {
    const double now = monotonic_s();
    if (std::fflush(out) != 0 || std::ferror(out)) {
      out_failed.store(true);
      g_stop.store(true);  // nobody reads what we write: stop as if told to
    }
    if (!o.quiet)
      std::fprintf(stderr, "rdmatel: %s\n",
                   summary.line(now - period_start, packets.load(), dropped.load()).c_str());
    period_start = now;
  };
  std::thread periodic([&] {
    std::unique_lock<std::mutex> lock(period_mutex);
    while (
        !period_cv.wait_for(lock, std::chrono::duration<double>(period), [&] { return run_over; }))
      end_period();
  });

  SessionSummary result = session.run();
  {
    std::lock_guard<std::mutex> lock(period_mutex);
    run_over = true;
  }
  period_cv.notify_all();
  periodic.join();
  on_tick = nullptr;
  capture_counts();
  outputs.tick(engine, packets.load(), dropped.load());
  end_period();
  if (!o.quiet) {
    std::fprintf(stderr, "rdmatel: stopped after %.1f s: %llu packets", monotonic_s() - start,
                 (unsigned long long)packets.load());
    if (pcap) {
      live::PcapDrops d = pcap->drops();
      std::fprintf(stderr, ", %llu dropped by the kernel, %llu by the interface",
                   (unsigned long long)d.dropped, (unsigned long long)d.if_dropped);
    }
    std::fprintf(stderr, "\n");
  }
  int status = result.errors.empty() ? kExitOk : kExitBadInput;
  if (!outputs.finish(o.quiet)) status = kExitBadInput;

  bool failed = out_failed.load() || std::fflush(out) != 0 || std::ferror(out);
  int out_errno = errno;
  if (out != stdout && std::fclose(out) != 0) {
    failed = true;
    out_errno = errno;
  }
  if (failed) {
    std::fprintf(stderr, "rdmatel: cannot write %s: %s\n",
                 o.output.empty() ? "standard output" : o.output.c_str(), std::strerror(out_errno));
    return kExitUsage;
  }
  if (!o.quiet)
    for (const std::string& w : result.warnings)
      std::fprintf(stderr, "rdmatel: warning: %s\n", w.c_str());
  for (const std::string& e : result.errors)
    std::fprintf(stderr, "rdmatel: error: %s\n", e.c_str());
  return status;
}

}  // namespace rdmatel::cli
