// SPDX-License-Identifier: GPL-2.0-or-later
// Keeps what an engine produced for front ends that show it frame by frame (the Wireshark
// plugin) or record by record (the analyzer): the latest version of every I/O and message
// record, and every frame note, indexed by frame once the input has ended.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "rdmatel/records.h"
#include "rdmatel/sink.h"

namespace rdmatel {

class RecordStore final : public RecordSink {
 public:
  RecordStore();
  ~RecordStore() override;
  RecordStore(const RecordStore&) = delete;
  RecordStore& operator=(const RecordStore&) = delete;

  void on_record(const Record& r) override;
  void on_note(const FrameNote& n) override;

  /// The latest record of an I/O (final once the I/O has ended), or nullptr.
  const IoRecord* io(uint64_t id) const;
  /// The latest record of an RDMA message (following merges into another message), if any.
  /// Made on each call from what is stored (a copy: messages are kept compactly, below).
  std::optional<MessageRecord> message(uint64_t id) const;
  /// The id of the message `id` is (following merges) when it is complete and `frame` is its
  /// last, else 0: what a first pass counts on a frame, asked of each of its packets without
  /// making their records.
  uint64_t message_completed_on(uint64_t id, uint64_t frame) const;
  /// Every final I/O record, in id order (for the analyzer's tables).
  const std::deque<IoRecord>& ios() const { return ios_; }
  /// The diagnosis's findings (records with a rank), in the order they came.
  const std::vector<DiagnosisRecord>& findings() const { return findings_; }
  /// The finding of `rank` (a diag.finding note's ref), or nullptr.
  const DiagnosisRecord* finding(uint64_t rank) const;

  /// The hop records (export paths), in emission order.
  const std::deque<PathRecord>& paths() const { return paths_; }
  /// Hop record `n` (a path.record note's ref: 1, 2, ...), or nullptr.
  const PathRecord* path(uint64_t n) const;

  /// For a front end that shows each frame once, as it is pushed, and never again (tshark in one
  /// pass): notes are kept only while `keep` is set (the push of a frame that is shown), and
  /// forget_notes() drops them once shown. The notes then take the memory of one frame's instead
  /// of growing with the capture (about 35 bytes per packet on the header-snapped benchmark
  /// capture). The records are kept either way.
  void keep_notes(bool keep) { keep_notes_ = keep; }
  void forget_notes();

  /// Indexes the notes and the final records by frame (call once the engine has finished).
  void index();
  bool indexed() const { return indexed_; }

  /// Notes about `frame` (after index()); a frame's notes keep the order they were made in.
  std::span<const FrameNote> notes(uint64_t frame) const;
  /// Every note (after index(): in frame order).
  std::span<const FrameNote> all_notes() const;
  /// Notes made since `from` (during the input: the notes of the frames just handled).
  size_t note_count() const;
  std::span<const FrameNote> notes_since(size_t from) const;

  /// The records counted on `frame` (after index()): an I/O on its compute-side completion (its
  /// command when it never completed), a message on the frame that completes it.
  std::vector<const IoRecord*> ios_counted_on(uint64_t frame) const;
  std::vector<MessageRecord> messages_counted_on(uint64_t frame) const;
  /// The ids of the messages whose last frame is `frame` (after index()), in id order: complete
  /// or not (a message the capture's end cut has no LAST, and no packet note that shows it).
  std::span<const std::pair<uint64_t, uint64_t>> messages_ending_on(uint64_t frame) const;
  /// Congestion records counted on `frame` (after index()): a flow's on its first packet at
  /// the point, a PFC priority's on its first PFC frame.
  const EcnRecord* congestion_counted_on(uint64_t frame) const;
  std::vector<const PfcRecord*> pfc_counted_on(uint64_t frame) const;
  /// The CNPs of an IP pair at a point, counted on its first CNP there.
  const CnpRecord* cnp_counted_on(uint64_t frame) const;

 private:
  std::deque<IoRecord> ios_;  ///< at index id - 1; id 0 marks a slot without a record yet
  // A capture keeps a record for every message it carried (hundreds of thousands): each is
  // stored without what it shares with the other messages of its flow and point (addresses,
  // QPN, point, GPUs, key-flow mark: one MessageFlow each), 112 bytes instead of 208.
  struct MessageFlow {
    IpAddress src, dst;
    uint32_t dst_qpn = 0;
    PointId point = kNoPoint;
    GpuEnds gpu;
    bool key_flow = false;
  };
  struct StoredMessage {
    uint64_t merged_into = 0;
    uint32_t flow = 0;  ///< index into message_flows_
    uint32_t first_psn = 0, last_psn = 0;
    MessageKind kind = MessageKind::kWrite;
    bool present = false;  ///< a record came for this id
    bool with_immediate = false, complete = false, provisional = false, has_poll_period = false;
    TimeNs first_ns = 0, last_ns = 0, poll_period_ns = 0;
    uint64_t first_frame = 0, last_frame = 0;
    uint64_t packets = 0, retrans_packets = 0, bytes = 0, retrans_bytes = 0, naks = 0;
  };
  void store_message(const MessageRecord& r);
  MessageRecord expand(uint64_t id) const;  ///< the record of stored message `id` (present)
  uint64_t resolve_message(uint64_t id) const;  ///< the message `id` was merged into, or itself; 0: none
  std::deque<StoredMessage> messages_;      ///< at index id - 1
  std::vector<MessageFlow> message_flows_;
  // A MessageFlow's members' bytes one after another (no padding in between): a fixed-size key,
  // so looking up a message's flow allocates nothing.
  static constexpr size_t kMessageFlowKeyBytes = 2 * (sizeof(IpAddress::bytes) + sizeof(IpAddress::v6)) +
                                                 sizeof(uint32_t) + sizeof(PointId) + sizeof(GpuEnds) + sizeof(bool);
  using MessageFlowKey = std::array<uint8_t, kMessageFlowKeyBytes>;
  struct MessageFlowKeyHash {
    size_t operator()(const MessageFlowKey& k) const;
  };
  std::unordered_map<MessageFlowKey, uint32_t, MessageFlowKeyHash> message_flow_ids_;  ///< key -> index
  /// In front of message_flow_ids_, by QPN and point: a message's flow was most often looked up
  /// a moment ago (the plugin stores a snapshot of an open message at each of its packets).
  struct RecentFlow {
    MessageFlowKey key{};
    uint32_t index = UINT32_MAX;
  };
  std::array<RecentFlow, 64> recent_flows_{};
  // A few notes per frame of the capture (77 MB on 2.2 M packets), in one block of their own
  // (record_store.cpp): grown without copying, sorted without a second copy held at once.
  class NoteArray;
  std::unique_ptr<NoteArray> notes_;
  std::vector<DiagnosisRecord> findings_;
  std::deque<EcnRecord> congestion_;  ///< sorted by first_frame by index()
  std::deque<PfcRecord> pfc_;                ///< sorted by first_frame by index()
  std::deque<CnpRecord> cnps_;               ///< sorted by first_frame by index()
  std::deque<PathRecord> paths_;
  std::vector<std::pair<uint64_t, const IoRecord*>> io_by_frame_;
  std::vector<std::pair<uint64_t, uint64_t>> message_by_frame_;  ///< (last frame, id)
  bool indexed_ = false;
  bool keep_notes_ = true;
  /// Where the last lookup of each index by frame began (record_store.cpp, frame_range): the
  /// lookups are const but not safe to run on two threads at once (the plugin asks from the one
  /// thread that dissects).
  struct Hints {
    size_t notes = 0, ios = 0, messages = 0, congestion = 0, pfc = 0, cnps = 0;
  };
  mutable Hints hints_;
};

}  // namespace rdmatel
