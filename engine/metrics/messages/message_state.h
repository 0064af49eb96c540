// SPDX-License-Identifier: GPL-2.0-or-later
// State of RDMA messages per flow, point and PSN space for the messages plugin.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <vector>

#include "engine/metrics/messages/read_log.h"
#include "engine/src/core/flows.h"
#include "rdmatel/records.h"

namespace rdmatel::messages {

/// A flow's packets use two PSN sequences: its requests (SEND, WRITE, READ REQUEST) and its
/// responses (READ RESPONSE, ACK) to the other side's requests. Each is analysed on its own.
enum class Space : uint8_t { kRequest = 0, kResponse = 1 };

/// Which PSNs of a message this point has seen (for duplicates and completeness), as sorted
/// disjoint ranges: one range for a message seen whole, a few when packets were lost, so the
/// memory follows the losses, not the message's length. Beyond kMaxRanges gaps (or a span
/// past kMaxSpan) new PSNs are counted but no longer tracked, and never called duplicates.
class PsnBitmap {
 public:
  /// Marks `psn`; returns true when it was already marked.
  bool mark(uint32_t psn);
  /// Unmarks `psn` (a packet moved to another message).
  void unmark(uint32_t psn);
  /// The last PSN of the marked run holding `psn` (`psn` itself when it is not marked, or the
  /// run is not tracked).
  uint32_t run_end(uint32_t psn) const;
  /// Forgets every PSN, keeping the memory (messages are recycled).
  void clear() {
    has_base_ = false;
    base_ = 0;
    ranges_.clear();
    distinct_ = 0;
  }
  uint32_t distinct() const { return distinct_; }
  /// Calls f(psn) for every marked PSN.
  template <typename F>
  void for_each(F&& f) const {
    for (const auto& [lo, hi] : ranges_)
      for (int64_t o = lo; o <= hi; ++o) f(uint32_t((int64_t(base_) + o) & 0xFFFFFF));
  }

 private:
  static constexpr int32_t kMaxSpan = 1 << 22;
  static constexpr size_t kMaxRanges = 256;
  bool has_base_ = false;
  uint32_t base_ = 0;
  std::vector<std::pair<int32_t, int32_t>> ranges_;  ///< [lo, hi] offsets from base_, sorted
  uint32_t distinct_ = 0;
};

struct Stream;

/// A packet an open message took after a gap in its PSNs: until the message's LAST (or the
/// next message's FIRST) says where it ends, such a packet may belong to the next message —
/// stamps at a point can put a message's MIDDLE before its FIRST.
struct BeyondGap {
  uint32_t psn;
  uint32_t len;
  TimeNs ts;
  uint64_t frame;
  bool retrans;
  bool last;   ///< a LAST packet
  bool first;  ///< a FIRST or ONLY packet
};

/// What an open message accumulates: the fields of its MessageRecord that differ between the
/// messages of one stream (names as there). Its flow's addresses, QPN, GPUs and key-flow mark
/// and its point are the stream's, filled in when the record is made (Messages::record_of):
/// a hundred bytes less for each of the hundreds of thousands of messages a capture keeps open.
struct MessageCounts {
  uint64_t id = 0;
  MessageKind kind = MessageKind::kWrite;
  bool with_immediate = false;
  bool complete = false;
  bool provisional = false;
  uint64_t merged_into = 0;
  uint32_t first_psn = 0, last_psn = 0;
  TimeNs first_ns = 0, last_ns = 0;
  uint64_t first_frame = 0, last_frame = 0;
  uint64_t packets = 0, retrans_packets = 0;
  uint64_t bytes = 0, retrans_bytes = 0;
  uint64_t naks = 0;
};

struct Message {
  MessageCounts rec;  ///< accumulating counts, PSNs, stamps, frames
  bool has_first = false;  ///< FIRST/ONLY seen (else first_psn is the oldest PSN seen)
  bool has_last = false;
  bool gapped = false;       ///< some PSN after contig_end is missing, later ones were seen
  uint32_t contig_end = 0;   ///< the message's PSNs from first_psn to here were all seen
  TimeNs contig_last_ns = 0;         ///< latest stamp of the packets before the gap
  uint64_t contig_last_frame = 0;
  std::vector<BeyondGap> beyond;     ///< packets past the gap (bounded)
  bool beyond_full = false;          ///< some packets past the gap did not fit in `beyond`

  /// A recycled message starts over, keeping its vectors' memory.
  void reset() {
    PsnBitmap s = std::move(seen);
    std::vector<BeyondGap> b = std::move(beyond);
    const uint32_t at = slot;
    *this = Message{};
    s.clear();
    b.clear();
    seen = std::move(s);
    beyond = std::move(b);
    slot = at;
  }
  uint32_t slot = 0;  ///< its place in the pool (Messages::open_ids_), kept when recycled
  bool acked = false;
  bool done = false;
  TimeNs acked_at = 0;      ///< the point's newest stamp when the ACK came
  TimeNs queued_last = 0;   ///< last_ns when it was (re)queued for the idle timeout
  Stream* stream = nullptr;
  PsnBitmap seen;
};

/// An open message in its stream's PSN-ordered list, with its first PSN (fixed once it is
/// open) beside the pointer: searching the list by PSN reads the list, not every message.
struct OpenMessage {
  uint32_t first_psn;
  Message* m;
};

struct FlowPoint;

struct Stream {
  FlowId flow = kNoFlow;
  PointId point = kNoPoint;
  FlowPoint* owner = nullptr;  ///< its flow and point (their periods)
  Space space = Space::kRequest;
  bool has_newest = false;
  uint32_t newest = 0;  ///< newest PSN this point has seen in this stream
  /// A READ REQUEST came last while the path MTU was unknown (so how many PSNs it takes): its
  /// first PSN and DMA length, sized by the next packet when that one tells the MTU, and until
  /// then the next PSN may jump.
  bool read_unsized = false;
  uint32_t unsized_psn = 0, unsized_len = 0;
  bool has_acked = false;
  uint32_t acked = 0;             ///< newest PSN an ACK covered (request space)
  std::deque<OpenMessage> messages;  ///< open messages in PSN order
  Message* hint = nullptr;        ///< where the last resent packet went (checked before use)
  size_t acked_count = 0;         ///< how many messages at the front an ACK has covered
  /// NAKs whose PSN names no message yet (the message's packets were lost before this point).
  std::vector<uint32_t> pending_naks;
  /// PSN ranges of recently finished messages: late copies count for the flow only.
  std::deque<std::pair<uint32_t, uint32_t>> finished;
  /// Request space: the READs issued here, so that the answer to a re-issued READ REQUEST joins
  /// the original READ RESPONSE message, and a NAK naming a READ is tied to it.
  ReadLog reads;
};

/// Per flow and point: its two streams and its open periods.
struct FlowPoint {
  FlowId flow = kNoFlow;
  PointId point = kNoPoint;
  Stream* streams[2] = {nullptr, nullptr};      ///< by Space
  std::map<int64_t, FlowPeriodRecord> periods;  ///< by period index
  int64_t last_period = 0;                      ///< one-entry cache into periods
  FlowPeriodRecord* last_record = nullptr;
  /// The 802.1p priority of its first data packet's VLAN tag at the point (none: untagged, or no
  /// data packet seen): its periods count the PFC pauses of that priority, else of every one.
  std::optional<uint8_t> priority;
  bool class_known = false;
};

/// Per flow: what the plugin keeps, found by flow id without hashing.
struct FlowState {
  uint32_t mtu = 0;                  ///< largest FIRST/MIDDLE payload seen
  std::vector<FlowPoint*> points;    ///< one per point that saw the flow (few)
};

}  // namespace rdmatel::messages
