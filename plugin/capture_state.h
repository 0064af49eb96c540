// SPDX-License-Identifier: GPL-2.0-or-later
// Per-capture-file state of the Wireshark plugin: the engine, fed on the first pass, and what it
// produced, indexed for display on every pass. C++ only; no Wireshark calls in here, so no
// Wireshark exception can unwind through it.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "engine/core/engine.h"
#include "engine/core/flow_table.h"

namespace rdmatel::plugin {

/// What the display code needs about one frame; plain data.
struct FrameView {
  const char* point = nullptr;  ///< observation point name
  const char* role = nullptr;   ///< role name, nullptr when unknown
  const FrameNote* notes = nullptr;
  size_t note_count = 0;
};

/// The records a frame contributes to the statistics; each I/O and message is counted on exactly
/// one frame. Pointers stay valid until the next call to process().
struct FrameCounts {
  static constexpr size_t kMax = 2;
  size_t io_count = 0;
  const IoRecord* ios[kMax] = {};
  size_t message_count = 0;
  const MessageRecord* messages[kMax] = {};
};

/// The RDMA endpoints (IP + QPN) of a RoCEv2 frame.
struct FrameEndpoints {
  IpAddress src, dst;
  uint32_t src_qpn = 0;  ///< valid when src_qpn_known
  uint32_t dst_qpn = 0;
  bool src_qpn_known = false;
};

class CaptureState final : public ResultSink {
 public:
  explicit CaptureState(EngineConfig config);

  /// First pass: feeds one frame to the engine. `interface_name(interface_id)` (may return
  /// null) is called only for an interface not seen before: Wireshark's lookup allocates.
  template <typename NameOf>
  void process(uint32_t frame, TimeNs ts, uint32_t interface_id, NameOf&& interface_name, int wtap_encap,
               const uint8_t* data, uint32_t cap_len, uint32_t wire_len) {
    auto it = points_by_interface_.find(interface_id);
    PointId point = it != points_by_interface_.end() ? it->second : declare_point(interface_id, interface_name(interface_id));
    process(frame, ts, point, wtap_encap, data, cap_len, wire_len);
  }
  /// Ends the first pass (called when the first revisited frame shows up): flushes the engine
  /// and indexes the final records by the frame that counts them.
  void finish();
  bool finished() const { return finished_; }

  /// What `frame` counts for the statistics. After the first pass: the final records (an I/O on
  /// its compute-side completion, or its command when it never completed; a message on the
  /// frame that completes it). During the first pass: completed I/Os and messages as known at
  /// this frame, each once.
  FrameCounts counts(uint32_t frame, const FrameView& view);

  /// The endpoints of a RoCEv2 frame (decoded again from its bytes: no per-frame storage);
  /// false for other frames. The sending QPN comes from the pairing of the queue pair's two
  /// directions as known now (final after the first pass).
  bool endpoints(int wtap_encap, const uint8_t* data, uint32_t cap_len, uint32_t wire_len, FrameEndpoints& out);

  /// Name of an observation point.
  const char* point_name(PointId id) const {
    return id < engine_.points().size() ? engine_.points()[id].name.c_str() : "?";
  }

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
  PointId declare_point(uint32_t interface_id, const char* name);
  void process(uint32_t frame, TimeNs ts, PointId point, int wtap_encap, const uint8_t* data, uint32_t cap_len,
               uint32_t wire_len);
  const Flow* find_flow(const FlowKey& key);

  Engine engine_;
  bool finished_ = false;
  std::unordered_map<uint32_t, PointId> points_by_interface_;
  // Every frame note in the order the engine made them; sorted by frame (stably) at finish().
  // During the first pass the notes of the frame being dissected are the ones made since its
  // process() began (the engine never notes a frame before it has seen it), copied into
  // current_notes_ because notes about earlier frames may come in between.
  std::vector<FrameNote> notes_;
  size_t notes_of_frame_begin_ = 0;
  std::vector<FrameNote> current_notes_;
  // The latest record of each I/O and message, at index id - 1 (the engine numbers them 1, 2,
  // ... in each family); id 0 marks a slot with no record yet. A deque: records never move, so
  // the pointers handed out stay valid while records are added. A message merged into another
  // keeps its slot with merged_into set.
  std::deque<IoRecord> ios_;
  std::deque<MessageRecord> messages_;
  std::vector<std::string> warnings_;

  // Statistics: during the first pass, what was already counted; after it, the final records
  // sorted by the frame that counts them.
  std::vector<bool> first_pass_ios_, first_pass_messages_;  ///< by id - 1
  std::vector<std::pair<uint32_t, const IoRecord*>> io_by_frame_;
  std::vector<std::pair<uint32_t, const MessageRecord*>> message_by_frame_;

  // The engine's flows by key, indexed incrementally (flows are only ever appended).
  std::unordered_map<FlowKey, FlowId, FlowKeyHash> flow_index_;
  size_t flows_indexed_ = 0;
};

}  // namespace rdmatel::plugin
