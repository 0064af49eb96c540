// SPDX-License-Identifier: GPL-2.0-or-later
// rdmatel-bench: packets per second of each stage on one capture, to locate the cost.
//   rdmatel-bench CAPTURE [STAGE]   (STAGE: reader, decoder, wiretap, engine; default all)
// Stages: fast reader only; fast reader + frame decoder; libwiretap reader; the whole engine.
#include <chrono>
#include <cstdio>
#include <string>

#include "adapters/wiretap/wiretap_source.h"
#include "rdmatel/capture.h"
#include "rdmatel/engine.h"
#include "engine/src/decode/roce_frame.h"

using namespace rdmatel;

namespace {

struct NullSink : RecordSink {
  uint64_t records = 0;
  void on_record(const Record&) override { ++records; }
};

template <typename F>
void measure(const char* name, F&& f) {
  auto t0 = std::chrono::steady_clock::now();
  uint64_t n = f();
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("%-28s %10llu packets %8.3f s %8.2f M packets/s\n", name, (unsigned long long)n, s, double(n) / s / 1e6);
}

std::unique_ptr<CaptureSource> open_fast(const std::string& path) {
  std::unique_ptr<CaptureSource> src;
  std::string err;
  if (open_fast_capture(path, src, err) != OpenStatus::kOk) {
    std::fprintf(stderr, "rdmatel-bench: %s\n", err.empty() ? "not pcap/pcapng" : err.c_str());
    std::exit(3);
  }
  return src;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: rdmatel-bench CAPTURE\n");
    return 2;
  }
  std::string path = argv[1];
  std::string only = argc > 2 ? argv[2] : "";
  auto want = [&](const char* stage) { return only.empty() || only == stage; };
  if (want("reader")) measure("fast reader (touch BTH)", [&] {
    auto src = open_fast(path);
    CapturedPacket p;
    uint64_t n = 0, sum = 0;
    while (src->next(p)) {
      ++n;
      if (p.cap_len > 54) sum += p.data[42];  // the BTH opcode of an untagged IPv4 RoCEv2 frame
    }
    std::fprintf(stderr, "%s", sum == 1 ? "" : "");
    return n;
  });
  if (want("decoder")) measure("fast reader + decoder", [&] {
    auto src = open_fast(path);
    CapturedPacket p;
    RoceFrame f;
    uint64_t n = 0;
    while (src->next(p)) {
      decode_roce_frame(p.link, p.data, p.cap_len, p.wire_len, f);
      ++n;
    }
    return n;
  });
  if (want("wiretap")) measure("libwiretap reader", [&] {
    std::string err;
    auto src = wiretap::open_wiretap_capture(path, err);
    CapturedPacket p;
    uint64_t n = 0;
    while (src && src->next(p)) ++n;
    return n;
  });
  if (want("engine")) measure("engine (all plugins)", [&] {
    auto src = open_fast(path);
    NullSink sink;
    Engine e{Settings{}};
    e.subscribe(sink);
    std::vector<PointId> pts;
    CapturedPacket p;
    uint64_t n = 0;
    while (src->next(p)) {
      while (pts.size() < src->interfaces().size()) {
        const std::string& name = src->interfaces()[pts.size()].name;
        pts.push_back(e.declare_point(name.empty() ? "if" + std::to_string(pts.size()) : name, uint32_t(pts.size())));
      }
      FrameIn in{p.frame, p.ts, p.has_ts, pts[p.interface], p.link, p.data, p.cap_len, p.wire_len};
      e.push(in);
      ++n;
    }
    e.finish();
    return n;
  });
  return 0;
}
