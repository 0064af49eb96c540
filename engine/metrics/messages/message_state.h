// SPDX-License-Identifier: GPL-2.0-or-later
// State of RDMA messages per flow, point and PSN space for the messages plugin.
#pragma once

#include <array>
#include <cstdint>
#include <limits>
#include <memory>
#include <map>
#include <optional>
#include <vector>

#include "engine/metrics/messages/read_log.h"
#include "engine/metrics/messages/ring.h"
#include "engine/src/core/flows.h"
#include "engine/src/util/psn.h"
#include "rdmatel/records.h"

namespace rdmatel::messages {

/// A flow's packets use two PSN sequences: its requests (SEND, WRITE, READ REQUEST) and its
/// responses (READ RESPONSE, ACK) to the other side's requests. Each is analysed on its own.
enum class Space : uint8_t { kRequest = 0, kResponse = 1 };

/// Which PSNs of a message this point has seen (for duplicates and completeness), as sorted
/// disjoint ranges: one range for a message seen whole, a few when packets were lost, so the
/// memory follows the losses, not the message's length. Beyond kMaxRanges gaps (or a span
/// past kMaxSpan) new PSNs are counted but no longer tracked, and never called duplicates.
///
/// The newest range is kept apart from the others, so that marking a message's first PSN and
/// extending its newest run (every packet of a message seen in order) touch no vector; the
/// other cases put it back at the end of the list for the time of the search.
class PsnBitmap {
 public:
  /// Marks `psn`; returns true when it was already marked.
  bool mark(uint32_t psn) {
    if (!has_base_) {
      has_base_ = has_newest_ = true;
      base_ = psn;
      newest_ = {0, 0};
      ++distinct_;
      return false;
    }
    const int32_t off = psn::distance(base_, psn);
    if (has_newest_ && off == newest_.hi + 1 && off < kMaxSpan) {
      newest_.hi = off;
      ++distinct_;
      return false;
    }
    return mark_elsewhere(psn);
  }
  /// Unmarks `psn` (a packet moved to another message).
  void unmark(uint32_t psn);
  /// The last PSN of the marked run holding `psn` (`psn` itself when it is not marked, or the
  /// run is not tracked).
  uint32_t run_end(uint32_t psn) const;
  /// Forgets every PSN, keeping the memory (messages are recycled).
  void clear() {
    has_base_ = has_newest_ = false;
    base_ = 0;
    ranges_.clear();
    distinct_ = 0;
  }
  uint32_t distinct() const { return distinct_; }
  /// Calls f(psn) for every marked PSN, in order.
  template <typename F>
  void for_each(F&& f) const {
    for (const Range& r : ranges_) for_each_in(r, f);
    if (has_newest_) for_each_in(newest_, f);
  }

 private:
  struct Range {
    int32_t lo, hi;  ///< offsets from base_
  };
  bool mark_elsewhere(uint32_t psn);
  /// mark() and unmark() on the whole sorted list, the newest range at its end.
  bool mark_sorted(uint32_t psn);
  void unmark_sorted(uint32_t psn);
  /// Moves the newest range to the end of ranges_, and back.
  void gather() {
    if (has_newest_) ranges_.push_back(newest_);
    has_newest_ = false;
  }
  void scatter() {
    if (ranges_.empty()) return;
    newest_ = ranges_.back();
    ranges_.pop_back();
    has_newest_ = true;
  }
  template <typename F>
  void for_each_in(const Range& r, F& f) const {
    for (int64_t o = r.lo; o <= r.hi; ++o) f(uint32_t((int64_t(base_) + o) & 0xFFFFFF));
  }

  static constexpr int32_t kMaxSpan = 1 << 22;
  static constexpr size_t kMaxRanges = 256;
  bool has_base_ = false;
  bool has_newest_ = false;
  uint32_t base_ = 0;
  Range newest_{0, 0};         ///< the newest range (has_newest_), after every range in ranges_
  std::vector<Range> ranges_;  ///< the older ranges, sorted
  uint32_t distinct_ = 0;
};

struct Stream;

/// A data packet as a message counts it, or several copies of one PSN. A message keeps the ones
/// it took after a gap in its PSNs: until its LAST (or the next message's FIRST) says where it
/// ends, such a packet may belong to the next message — stamps at a point can put a message's
/// MIDDLE before its FIRST. Go-back-N resends the packets past a gap that stays open again and
/// again; once a message's list of them is full, the copies of one PSN fold into one entry
/// (Message::beyond_folded), so that the next message's packets still find room.
struct DataPacket {
  uint32_t psn;
  uint32_t len;  ///< the bytes of one copy
  TimeNs ts;     ///< the earliest copy's stamp and frame
  uint64_t frame;
  TimeNs last_ts;  ///< the latest copy's (the same when one)
  uint64_t last_frame;
  uint32_t copies;
  uint32_t retrans_copies;  ///< of them, retransmissions
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

/// No stamp yet (later than every stamp).
inline constexpr TimeNs kNoStamp = std::numeric_limits<TimeNs>::max();

/// What a message knows besides which PSNs it saw and the packets past its gap: the part a
/// recycled message resets in one assignment (those two keep their memory).
struct MessageFacts {
  MessageCounts rec;               ///< accumulating counts, PSNs, stamps, frames
  bool has_first = false;          ///< FIRST/ONLY seen (else first_psn is the oldest PSN seen)
  bool has_last = false;
  bool gapped = false;             ///< some PSN after contig_end is missing, later ones were seen
  bool beyond_full = false;        ///< some packets past the gap did not fit in `beyond`
  bool beyond_folded = false;      ///< `beyond` filled once: one entry per PSN (and length) since
  bool acked = false;
  bool done = false;
  uint32_t contig_end = 0;         ///< the message's PSNs from first_psn to here were all seen
  TimeNs contig_last_ns = 0;       ///< latest stamp of the packets before the gap
  uint64_t contig_last_frame = 0;
  /// Earliest stamp of the packets before the gap (kNoStamp: none yet), for the message's first
  /// stamp once it gives the packets past its gap away: the earliest of all may be one of those.
  TimeNs contig_first_ns = kNoStamp;
  uint64_t contig_first_frame = 0;
  /// The packets before its gap now include ones stamped from `first_ts` to `last_ts` (their
  /// frames beside): its earliest and latest there (an equal stamp: the earliest kept stays, the
  /// latest given becomes the latest, as for the message's own first and last).
  void widen_contig(TimeNs first_ts, uint64_t first_frame, TimeNs last_ts, uint64_t last_frame) {
    if (last_ts >= contig_last_ns) {
      contig_last_ns = last_ts;
      contig_last_frame = last_frame;
    }
    if (first_ts < contig_first_ns) {
      contig_first_ns = first_ts;
      contig_first_frame = first_frame;
    }
  }
  TimeNs acked_at = 0;             ///< the point's newest stamp when the ACK came
  TimeNs queued_last = 0;          ///< last_ns when it was (re)queued for the idle timeout
  Stream* stream = nullptr;
};

struct Message : MessageFacts {
  std::vector<DataPacket> beyond;  ///< packets past the gap (bounded)
  PsnBitmap seen;
  uint32_t slot = 0;  ///< its place in the pool (Messages::open_ids_), kept when recycled

  /// A recycled message starts over, keeping its vectors' memory.
  void reset() {
    static_cast<MessageFacts&>(*this) = MessageFacts{};
    beyond.clear();
    seen.clear();
  }
};

/// An open message in its stream's PSN-ordered list, with its first PSN (fixed once it is
/// open) beside the pointer: searching the list by PSN reads the list, not every message.
struct OpenMessage {
  uint32_t first_psn;
  Message* m;
};

/// PSN ranges of a stream's recently finished messages (the last kCount), for telling late
/// copies of their packets. Kept as first PSN and length (0: an empty slot, which holds nothing)
/// so that asking is one pass over a fixed array without an early exit: the loop vectorizes.
/// The arrays come with the stream's first finished message: a stream that never finishes one
/// (a flow-point that saw a FIRST and nothing more, of which a hostile capture makes millions)
/// takes a pointer, not 512 bytes.
class FinishedRanges {
 public:
  static constexpr size_t kCount = 64;
  void add(uint32_t first, uint32_t last) {
    if (!ranges_) ranges_ = std::make_unique<Ranges>();
    ranges_->first[next_] = first;
    ranges_->len[next_] = int32_t((last - first) & psn::kMask) + 1;
    next_ = (next_ + 1) % kCount;
  }
  /// True when one of the ranges holds `psn` (psn::in_range; compared as signed numbers, both
  /// sides being below 2^25, which vector units compare in one step).
  bool holds(uint32_t psn) const {
    if (!ranges_) return false;
    int32_t any = 0;
    for (size_t i = 0; i < kCount; ++i)
      any |= -int32_t(int32_t((psn - ranges_->first[i]) & psn::kMask) < ranges_->len[i]);
    return any != 0;
  }

 private:
  struct Ranges {
    std::array<uint32_t, kCount> first{};
    std::array<int32_t, kCount> len{};
  };
  std::unique_ptr<Ranges> ranges_;
  size_t next_ = 0;  ///< the slot of the oldest range (replaced next)
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
  Ring<OpenMessage> messages;     ///< open messages in PSN order
  Message* hint = nullptr;        ///< where the last resent packet went (checked before use)
  size_t acked_count = 0;         ///< how many messages at the front an ACK has covered
  /// NAKs whose PSN names no message yet (the message's packets were lost before this point).
  std::vector<uint32_t> pending_naks;
  /// PSN ranges of recently finished messages: late copies count for the flow only.
  FinishedRanges finished;
  /// Request space: the READs issued here, so that the answer to a re-issued READ REQUEST joins
  /// the original READ RESPONSE message, and a NAK naming a READ is tied to it.
  ReadLog reads;
};

/// Per flow and point: its two streams and its open periods.
struct FlowPoint {
  FlowId flow = kNoFlow;
  PointId point = kNoPoint;
  /// Its flow's peer (the reverse direction of the queue pair) once the two are paired, which
  /// never changes: read from the flow table until then (Messages::peer_of).
  FlowId peer = kNoFlow;
  /// Its peer's request stream at the point, which its ACKs acknowledge (set by the first).
  Stream* acked_stream = nullptr;
  Stream* streams[2] = {nullptr, nullptr};      ///< by Space
  std::map<int64_t, FlowPeriodRecord> periods;  ///< by period index
  /// A one-entry cache into periods: the record of the period of its last packet, and the stamps
  /// that period holds, [last_from, last_to) (no division per packet).
  FlowPeriodRecord* last_record = nullptr;
  TimeNs last_from = 0, last_to = 0;
  /// The 802.1p priority of its first data packet's VLAN tag at the point (none: untagged, or no
  /// data packet seen): its periods count the PFC pauses of that priority, else of every one.
  std::optional<uint8_t> priority;
  bool class_known = false;
};

}  // namespace rdmatel::messages
