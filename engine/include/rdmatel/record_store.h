// SPDX-License-Identifier: GPL-2.0-or-later
// Keeps what an engine produced for front ends that show it frame by frame (the Wireshark
// plugin) or record by record (the analyzer): the latest version of every I/O and message
// record, and every frame note, indexed by frame once the input has ended.
#pragma once

#include <cstdint>
#include <deque>
#include <span>
#include <utility>
#include <vector>

#include "rdmatel/records.h"
#include "rdmatel/sink.h"

namespace rdmatel {

class RecordStore final : public RecordSink {
 public:
  void on_record(const Record& r) override;
  void on_note(const FrameNote& n) override;

  /// The latest record of an I/O (final once the I/O has ended), or nullptr.
  const IoRecord* io(uint64_t id) const;
  /// The latest record of an RDMA message (following merges into another message), or nullptr.
  const MessageRecord* message(uint64_t id) const;
  /// Every final I/O record, in id order (for the analyzer's tables).
  const std::deque<IoRecord>& ios() const { return ios_; }
  const std::deque<MessageRecord>& messages() const { return messages_; }
  /// The diagnosis's findings (records with a rank), in the order they came.
  const std::vector<DiagnosisRecord>& findings() const { return findings_; }
  /// The finding of `rank` (a diag.finding note's ref), or nullptr.
  const DiagnosisRecord* finding(uint64_t rank) const;

  /// The hop records (export paths), in emission order.
  const std::deque<PathRecord>& paths() const { return paths_; }
  /// Hop record `n` (a path.record note's ref: 1, 2, ...), or nullptr.
  const PathRecord* path(uint64_t n) const;

  /// Indexes the notes and the final records by frame (call once the engine has finished).
  void index();
  bool indexed() const { return indexed_; }

  /// Notes about `frame` (after index()); a frame's notes keep the order they were made in.
  std::span<const FrameNote> notes(uint64_t frame) const;
  /// Every note (after index(): in frame order).
  std::span<const FrameNote> all_notes() const { return notes_; }
  /// Notes made since `from` (during the input: the notes of the frames just handled).
  size_t note_count() const { return notes_.size(); }
  std::span<const FrameNote> notes_since(size_t from) const;

  /// The records counted on `frame` (after index()): an I/O on its compute-side completion (its
  /// command when it never completed), a message on the frame that completes it.
  std::vector<const IoRecord*> ios_counted_on(uint64_t frame) const;
  std::vector<const MessageRecord*> messages_counted_on(uint64_t frame) const;
  /// Congestion records counted on `frame` (after index()): a flow's on its first packet at
  /// the point, a PFC priority's on its first PFC frame.
  const EcnRecord* congestion_counted_on(uint64_t frame) const;
  std::vector<const PfcRecord*> pfc_counted_on(uint64_t frame) const;
  /// The CNPs of an IP pair at a point, counted on its first CNP there.
  const CnpRecord* cnp_counted_on(uint64_t frame) const;

 private:
  std::deque<IoRecord> ios_;  ///< at index id - 1; id 0 marks a slot without a record yet
  std::deque<MessageRecord> messages_;
  std::vector<FrameNote> notes_;
  std::vector<DiagnosisRecord> findings_;
  std::deque<EcnRecord> congestion_;  ///< sorted by first_frame by index()
  std::deque<PfcRecord> pfc_;                ///< sorted by first_frame by index()
  std::deque<CnpRecord> cnps_;               ///< sorted by first_frame by index()
  std::deque<PathRecord> paths_;
  std::vector<std::pair<uint64_t, const IoRecord*>> io_by_frame_;
  std::vector<std::pair<uint64_t, const MessageRecord*>> message_by_frame_;
  bool indexed_ = false;
};

}  // namespace rdmatel
