// SPDX-License-Identifier: GPL-2.0-or-later
#include "cli/capture_input.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>

#include "cli/wiretap_source.h"

namespace rdmatel::cli {

bool CaptureInput::open(const std::vector<std::string>& paths, std::string& error) {
  for (const std::string& path : paths) {
    File f;
    f.path = path;
    std::string err;
    switch (open_fast_capture(path, f.src, err)) {
      case OpenStatus::kOk: break;
      case OpenStatus::kError: error = err; return false;
      case OpenStatus::kNotRecognized:
        f.src = open_wiretap_capture(path, err);
        if (!f.src) {
          error = err;
          return false;
        }
        break;
    }
    std::string base = path.substr(path.find_last_of('/') + 1);
    f.label = base;
    files_.push_back(std::move(f));
  }
  return true;
}

void CaptureInput::declare_interfaces(Engine& engine, File& f, InputSummary& sum) {
  const auto& ifaces = f.src->interfaces();
  while (f.points.size() < ifaces.size()) {
    uint32_t id = uint32_t(f.points.size());
    std::string name = ifaces[id].name.empty() ? "if" + std::to_string(id) : ifaces[id].name;
    // Interfaces of different files are different points even when they share a name.
    for (const auto& [owner, taken] : names_)
      if (owner != &f && taken == name) {
        name = f.label + ":" + name;
        break;
      }
    names_.emplace_back(&f, name);
    if (ifaces[id].link == LinkType::kUnsupported)
      sum.warnings.push_back(f.path + ": interface " + name + " has link type " +
                             std::to_string(ifaces[id].pcap_linktype) +
                             ", which rdmatel does not decode; its packets are skipped");
    f.points.push_back(engine.declare_point(id, name));
  }
}

InputSummary CaptureInput::run(Engine& engine, bool progress) {
  InputSummary sum;
  uint64_t total_size = 0;
  for (File& f : files_) {
    sum.formats.push_back(f.src->format());
    total_size += f.src->size();
    f.has_next = f.src->next(f.next);
    declare_interfaces(engine, f, sum);
  }
  auto start = std::chrono::steady_clock::now();
  auto last_report = start;
  uint64_t frame = 0;
  for (;;) {
    // The file whose next packet is oldest goes first; ties go to the earlier file (mergecap).
    File* pick = nullptr;
    for (File& f : files_)
      if (f.has_next && (!pick || f.next.ts < pick->next.ts)) pick = &f;
    if (!pick) break;
    const CapturedPacket& c = pick->next;
    declare_interfaces(engine, *pick, sum);
    FrameInput in;
    in.frame = files_.size() == 1 ? c.frame : ++frame;
    in.ts = c.ts;
    in.point = c.interface < pick->points.size() ? pick->points[c.interface] : kNoPoint;
    in.link = c.link;
    in.data = c.data;
    in.cap_len = c.cap_len;
    in.wire_len = c.wire_len;
    engine.process(in);
    if (sum.frames == 0 || c.ts < sum.first_ts) sum.first_ts = c.ts;
    if (sum.frames == 0 || c.ts > sum.last_ts) sum.last_ts = c.ts;
    ++sum.frames;
    pick->has_next = pick->src->next(pick->next);
    if (progress && (sum.frames & 0xffff) == 0) {
      auto now = std::chrono::steady_clock::now();
      if (now - last_report > std::chrono::seconds(1)) {
        last_report = now;
        uint64_t pos = 0;
        for (File& f : files_) pos += f.src->position();
        double secs = std::chrono::duration<double>(now - start).count();
        if (total_size) {
          std::fprintf(stderr, "\rrdmatel: %llu packets, %.0f%%, %.1f M packets/s ", (unsigned long long)sum.frames,
                       100.0 * double(pos) / double(total_size), double(sum.frames) / secs / 1e6);
        } else {
          std::fprintf(stderr, "\rrdmatel: %llu packets, %.1f M packets/s ", (unsigned long long)sum.frames,
                       double(sum.frames) / secs / 1e6);
        }
        std::fflush(stderr);
      }
    }
  }
  if (progress && last_report != start) std::fprintf(stderr, "\r%60s\r", "");
  for (File& f : files_)
    if (!f.src->error().empty()) sum.errors.push_back(f.path + ": " + f.src->error());
  engine.finish();
  return sum;
}

}  // namespace rdmatel::cli
