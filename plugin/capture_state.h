// SPDX-License-Identifier: GPL-2.0-or-later
// Per-capture-file state of the Wireshark plugin: the engine, fed on the first pass, and what it
// produced, indexed for display on every pass. C++ only; no Wireshark calls in here, so no
// Wireshark exception can unwind through it.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/core/engine.h"

namespace rdmatel::plugin {

/// What the display code needs about one frame; plain data.
struct FrameView {
  const char* point = nullptr;  ///< observation point name
  const char* role = nullptr;   ///< role name, nullptr when unknown
  const FrameNote* notes = nullptr;
  size_t note_count = 0;
};

class CaptureState final : public ResultSink {
 public:
  explicit CaptureState(EngineConfig config);

  /// First pass: feeds one frame to the engine. `interface_name` may be null.
  void process(uint32_t frame, TimeNs ts, uint32_t interface_id, const char* interface_name, int wtap_encap,
               const uint8_t* data, uint32_t cap_len, uint32_t wire_len);
  /// Ends the first pass (called when the first revisited frame shows up): flushes the engine.
  void finish() {
    engine_.finish();
    finished_ = true;
  }
  bool finished() const { return finished_; }

  /// Display data for a frame (valid until the next call to process()).
  FrameView view(uint32_t frame, uint32_t interface_id);
  /// The latest record of an I/O (final if the I/O has ended), or nullptr.
  const IoRecord* io(uint64_t id) const;
  /// The latest record of an RDMA message, or nullptr.
  const MessageRecord* message(uint64_t id) const;
  const PointRegistry& points() const { return engine_.points(); }

  // ResultSink
  void on_frame_note(const FrameNote& n) override;
  void on_io(const IoRecord& r) override;
  void on_message(const MessageRecord& m) override;
  void on_warning(const EngineWarning& w) override { warnings_.push_back(w.what); }

  const std::vector<std::string>& warnings() const { return warnings_; }

 private:
  PointId point_for(uint32_t interface_id, const char* name);

  Engine engine_;
  bool finished_ = false;
  std::unordered_map<uint32_t, PointId> points_by_interface_;
  std::unordered_map<uint32_t, std::vector<FrameNote>> notes_;
  std::unordered_map<uint64_t, IoRecord> ios_;
  std::unordered_map<uint64_t, MessageRecord> messages_;
  std::unordered_map<uint64_t, uint64_t> merged_;  ///< message id -> the message it became part of
  std::vector<std::string> warnings_;
};

}  // namespace rdmatel::plugin
