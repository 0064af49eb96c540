// SPDX-License-Identifier: GPL-2.0-or-later
// rdmatel-bench: packets per second of each stage on one capture, to locate the cost.
//   rdmatel-bench CAPTURE [STAGE]   (STAGE: bare, reader, decoder, wiretap, engine, plugin-engine;
//                                    default all)
// Stages: a bare loop over the mapped pcapng; fast reader only; fast reader + frame decoder;
// libwiretap reader; the whole engine as the CLI runs it, and as the Wireshark plugin runs it.
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>

#include "adapters/wiretap/wiretap_source.h"
#include "rdmatel/capture.h"
#include "rdmatel/engine.h"
#include "rdmatel/record_store.h"
#include "engine/src/capture/mapped_file.h"
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
  if (want("bare")) measure("bare loop (mmap, touch BTH)", [&] {
    // The floor: pcapng blocks walked in the mapping with no reader, no interfaces, no stamps.
    MappedFile file;
    std::string err;
    if (!file.open(path, err)) {
      std::fprintf(stderr, "rdmatel-bench: %s\n", err.c_str());
      std::exit(3);
    }
    const uint8_t* b = file.data();
    uint64_t n = 0, sum = 0;
    for (size_t pos = 0; pos + 12 <= file.size();) {
      uint32_t type, len, cap;
      std::memcpy(&type, b + pos, 4);
      std::memcpy(&len, b + pos + 4, 4);
      if (len < 12 || pos + len > file.size()) break;
      if (type == 6 && len >= 32) {  // enhanced packet block (little-endian files, as generated)
        std::memcpy(&cap, b + pos + 20, 4);
        ++n;
        if (cap > 54) sum += b[pos + 28 + 42];
      }
      pos += len;
    }
    std::fprintf(stderr, "%s", sum == 1 ? "" : "");
    return n;
  });
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
  // The engine as the CLI runs it (records to a sink), and as the Wireshark plugin runs it: frame
  // notes on, every record and note kept by frame in a RecordStore.
  auto run_engine = [&](bool as_plugin) {
    auto src = open_fast(path);
    NullSink sink;
    RecordStore store;
    Settings settings;
    settings.frame_notes = as_plugin;
    std::string ignored;
    if (as_plugin) settings.set("spike_factor", "0", ignored);  // as plugin/capture_state.cpp: no spike alerts
    Engine e{settings};
    if (as_plugin) e.subscribe(store);
    else e.subscribe(sink);
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
    if (as_plugin) store.index();
    return n;
  };
  if (want("engine")) measure("engine (all plugins)", [&] { return run_engine(false); });
  if (want("plugin-engine")) measure("engine as the plugin runs it", [&] { return run_engine(true); });
  return 0;
}
