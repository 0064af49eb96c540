// SPDX-License-Identifier: GPL-2.0-or-later
// Test-only: an engine fed hand-built frames, and a sink that keeps what it produced.
#pragma once

#include <cstdint>
#include <string>
#include <initializer_list>
#include <stdexcept>
#include <vector>

#include "rdmatel/engine.h"
#include "rdmatel/records.h"
#include "rdmatel/schema.h"
#include "rdmatel/sink.h"

namespace rdmatel::test {

/// Keeps the final records by kind, every note and every warning.
struct Collector : RecordSink {
  std::vector<IoRecord> ios;
  std::vector<MessageRecord> messages;
  std::vector<FlowPeriodRecord> periods;
  std::vector<EcnRecord> congestion;
  std::vector<CnpRecord> cnps;
  std::vector<PfcRecord> pfc;
  std::vector<PathRecord> paths;
  std::vector<FrameNote> notes;
  std::vector<std::string> warnings;
  bool keep_provisional = false;
  size_t provisional = 0;

  void on_record(const Record& r) override {
    if (r.provisional) {
      ++provisional;
      if (!keep_provisional) return;
    }
    if (r.is(kIoSchema)) ios.push_back(r.as<IoRecord>());
    else if (r.is(kMessageSchema)) messages.push_back(r.as<MessageRecord>());
    else if (r.is(kFlowSchema)) periods.push_back(r.as<FlowPeriodRecord>());
    else if (r.is(kPathSchema)) paths.push_back(r.as<PathRecord>());
    else if (r.is(kCongestionSchema)) {
      const CongestionHead& h = r.as<CongestionHead>();
      if (const auto* e = congestion_as<EcnRecord>(h)) congestion.push_back(*e);
      else if (const auto* c = congestion_as<CnpRecord>(h)) cnps.push_back(*c);
      else if (const auto* p = congestion_as<PfcRecord>(h)) pfc.push_back(*p);
    }
  }
  void on_note(const FrameNote& n) override { notes.push_back(n); }
  void on_warning(const Warning& w) override { warnings.push_back(w.text); }
  bool warned(const std::string& needle) const {
    for (const std::string& w : warnings)
      if (w.find(needle) != std::string::npos) return true;
    return false;
  }
};

/// Settings with some values set ({"max_ios", "8"}, ...); a bad value fails the test loudly.
inline Settings settings_with(std::initializer_list<std::pair<const char*, std::string>> values,
                              bool frame_notes = false) {
  Settings s;
  s.frame_notes = frame_notes;
  for (const auto& [name, value] : values) {
    std::string error;
    if (!s.set(name, value, error)) throw std::runtime_error(error);
  }
  return s;
}

/// An engine with named points, fed frames numbered 1, 2, ... in the order given.
class Feeder {
 public:
  /// `speeds_bps`: the interfaces' link speeds (pcapng if_speed), 0 or absent when unknown.
  explicit Feeder(const Settings& s, std::vector<std::string> points = {"compute", "storage"},
                  std::vector<uint64_t> speeds_bps = {})
      : engine_(s) {
    engine_.subscribe(out);
    for (size_t i = 0; i < points.size(); ++i)
      ids_.push_back(engine_.declare_point(points[i], uint32_t(i), i < speeds_bps.size() ? speeds_bps[i] : 0));
  }
  /// Feeds one frame seen at point number `point` (index into the names) with stamp `ts`.
  uint64_t push(size_t point, TimeNs ts, const std::vector<uint8_t>& bytes, bool has_ts = true) {
    FrameIn in;
    in.frame = ++frame_;
    in.ts = ts;
    in.has_ts = has_ts;
    in.point = point < ids_.size() ? ids_[point] : kNoPoint;
    in.data = bytes.data();
    in.cap_len = in.wire_len = uint32_t(bytes.size());
    engine_.push(in);
    return frame_;
  }
  void finish() { engine_.finish(); }
  Engine& engine() { return engine_; }
  PointId id(size_t point) const { return ids_[point]; }

  Collector out;

 private:
  Engine engine_;
  std::vector<PointId> ids_;
  uint64_t frame_ = 0;
};

}  // namespace rdmatel::test
