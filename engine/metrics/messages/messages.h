// SPDX-License-Identifier: GPL-2.0-or-later
// messages: throughput visibility (SPEC §5). For every RDMA message (WRITE, SEND, READ RESPONSE;
// FIRST..LAST or ONLY, WITH_IMMEDIATE and WITH_INVALIDATE included) at every observation point:
// FCT, bytes, retransmitted bytes and packets, NAKs, FET and FNR; per flow and period: bytes,
// effective bytes, FET, NAKs, retransmitted and out-of-sequence packets.
//
// Everything is per point, from that point's packets in its stamp order and its own clock.
// Rules (per flow, point and PSN space):
//  - a data packet is retransmitted when its PSN is not newer than the newest PSN seen (24-bit
//    serial comparison): go-back-N resends, and resent copies of packets lost before the point;
//  - out of sequence when it skips PSNs (newer than newest + 1);
//  - a packet belongs to the message whose PSN range holds it; a READ RESPONSE FIRST inside an
//    earlier response's range is the answer to a re-issued READ REQUEST: part of that message;
//    a message seen without its FIRST joins the FIRST that comes after it (resent or late);
//  - NAKs (AETH 011xxxxx) travel the other way with the requester's QPN: the flow pairing
//    (a core fact, from echoed PSNs) maps them back, and they count for the message holding
//    their PSN; a NAK naming a READ REQUEST's PSN is tied to that READ REQUEST's frame;
//  - a message is final once an ACK covers it and the reorder window has passed at its point,
//    or when no packet has touched it for message_timeout, or at the end of the capture.
#pragma once

#include <deque>
#include <memory>
#include <optional>
#include <unordered_map>

#include "engine/metrics/messages/message_state.h"
#include "engine/metrics/messages/pause_periods.h"
#include "engine/src/core/component.h"
#include "rdmatel/notes.h"

namespace rdmatel::messages {

extern const ComponentSpec kSpec;


struct MessagesStats {
  uint64_t data_packets = 0;
  uint64_t messages = 0;
  uint64_t naks = 0;
  uint64_t naks_unattributed = 0;  ///< reverse flow never paired (counted at the end)
  uint64_t naks_on_reads = 0;      ///< NAKs naming a READ REQUEST
  uint64_t late_packets = 0;       ///< copies after their message was final
  uint64_t evicted = 0;
};

class Messages final : public Component {
 public:
  explicit Messages(Ctx& ctx);
  void on_packet(const Packet& p, Ctx& ctx) override;
  void on_advance(PointId point, Ctx& ctx) override;
  void finish(Ctx& ctx) override;
  const MessagesStats& stats() const { return stats_; }

 private:
  void on_data(const Packet& p, Ctx& ctx, Space space);
  void on_aeth(const Packet& p, Ctx& ctx);
  void on_read_request(const Packet& p, Ctx& ctx);
  /// Sizes the READ REQUEST that came last in `s` once the path MTU is known (Stream::read_unsized),
  /// or once the next request's PSN `psn` tells it.
  void size_unsized_read(Stream& s, const Flow& flow, uint32_t psn);
  /// A CNP: counted in the period of the flow whose sender it slows down (its peer).
  void on_cnp(const Packet& p, Ctx& ctx);
  void on_pfc(const Packet& p);
  /// A NAK on the reverse of `forward` (flows known): counts it for the message it names.
  void count_nak(Ctx& ctx, FlowId forward, PointId point, uint32_t psn, TimeNs ts, uint64_t frame, uint8_t syndrome);
  /// NAKs seen before the two directions were paired, counted once the pairing is known.
  void drain_unpaired_naks(Ctx& ctx, const Flow& flow);
  /// The (first, last) response PSNs of the READ a READ RESPONSE answers, when known.
  std::optional<std::pair<uint32_t, uint32_t>> read_range(Ctx& ctx, const Packet& p) const;
  /// The stream of READ REQUESTs a READ RESPONSE answers, its ranges those of the flow's MTU.
  Stream* read_requests(Ctx& ctx, const Packet& p) const;
  /// True when READ RESPONSE `p` (of READ range `read`) answers another READ than message `m`'s.
  bool other_read(Ctx& ctx, const Packet& p, std::pair<uint32_t, uint32_t> read, const Message& m) const;
  uint32_t mtu_of(const Flow& f) const;
  FlowPoint& flow_point(FlowId flow, PointId point);
  FlowPoint* find_flow_point(FlowId flow, PointId point) const;
  Stream& stream(FlowId flow, PointId point, Space space);
  FlowPeriodRecord& period(FlowId flow, PointId point, TimeNs ts, Ctx& ctx) {
    return period(flow_point(flow, point), ts, ctx);
  }
  FlowPeriodRecord& period(FlowPoint& fp, TimeNs ts, Ctx& ctx);
  Message* find(Stream& s, uint32_t psn) const;
  /// Where `m` is in its stream's PSN-ordered list (end() when it is not there).
  static std::deque<OpenMessage>::iterator locate(Stream& s, const Message* m);
  Message* open_message(Ctx& ctx, Stream& s, MessageKind kind, uint32_t first_psn, bool has_first);
  /// Counts one packet into a message; returns true when its PSN was already seen there.
  bool count_packet(Message& m, uint32_t psn, uint32_t len, TimeNs ts, uint64_t frame, bool retrans, bool last,
                    bool first);
  /// The packet at `psn` filled the message's gap: the run seen from it joins the message's own.
  void close_gap(Message& m, uint32_t psn);
  /// Moves the packets a message took past a PSN gap beyond its LAST into a new message.
  void split_after_last(Ctx& ctx, Stream& s, Message& m);
  void split_beyond(Ctx& ctx, Stream& s, Message& m, uint32_t from);
  /// Moves the packets `from` took past a PSN gap, from `boundary` on, to `to`.
  void move_beyond(Ctx& ctx, Message& from, Message& to, uint32_t boundary);
  void claim_pending_naks(Stream& s, Message& m);
  /// Merges `from` (a message seen without its FIRST) into `into` (its FIRST, resent or late).
  void absorb(Ctx& ctx, Message& into, Message& from);
  void absorb_covered(Ctx& ctx, Stream& s, Message& m);
  void finalize(Ctx& ctx, Message& m);
  void emit_periods(Ctx& ctx, PointId point, bool all);
  void emit_snapshot(Ctx& ctx, const Message& m) const;
  /// The message's record: its counts with its stream's flow and point.
  static MessageRecord record_of(const Ctx& ctx, const Message& m);
  struct PointQueues;
  PointQueues& queues(PointId point);

  // Settings.
  DurationNs window_;
  DurationNs message_timeout_;
  DurationNs period_ns_;
  size_t max_open_;
  bool frame_notes_;
  NoteKind note_packet_, note_nak_, note_nak_read_;

  std::vector<FlowState> flows_;       ///< by flow id
  std::deque<FlowPoint> flow_points_;  ///< owns them (stable addresses)
  std::deque<Stream> streams_;         ///< owns them
  uint32_t fabric_mtu_ = 0;  ///< largest FIRST/MIDDLE payload anywhere
  /// A NAK or a CNP on a flow not paired yet: attributed to the forward flow once it is.
  struct UnpairedNak {
    PointId point;
    uint32_t psn;
    TimeNs ts;
    uint64_t frame;
    uint8_t syndrome;
    bool cnp = false;
  };
  std::unordered_map<FlowId, std::vector<UnpairedNak>> unpaired_naks_;  ///< by the NAK's own flow
  std::deque<Message> pool_;  ///< owns messages (stable addresses); finished ones are recycled
  std::vector<Message*> free_;
  /// The queues below refer to messages that may have finished since (lazy deletion): a
  /// reference is live while its message is open with the same id. Whether it is is told by
  /// open_ids_ (8 bytes per message, in one array) rather than by the message itself, so that
  /// dropping the dead references at a queue's front reads no finished message. A reference is
  /// 12 bytes (the pool slot and the id, in halves so nothing pads it): the queues hold several
  /// per open message, and open messages are many (acknowledged ones wait a reorder window), so
  /// at 24 bytes they were 18 of the 110 MB of heap on the benchmark capture.
  struct Ref {
    uint32_t slot;
    uint32_t id_low, id_high;
    uint64_t id() const { return uint64_t(id_high) << 32 | id_low; }
  };
  bool live(const Ref& r) const { return open_ids_[r.slot] == r.id(); }
  Ref ref(const Message& m) const { return Ref{m.slot, uint32_t(m.rec.id), uint32_t(m.rec.id >> 32)}; }
  Message& message(const Ref& r) { return pool_[r.slot]; }  ///< a message's slot is its place in pool_
  /// Marks a message finished for its references.
  void close(Message& m) {
    m.done = true;
    open_ids_[m.slot] = 0;
  }
  std::vector<uint64_t> open_ids_;  ///< by pool slot: the id of the open message there, 0 if none
  /// An acknowledged message and the stamp of its ACK, kept beside the reference so that
  /// waiting for it (checked at every step of the point's horizon) reads no message.
  struct AckedRef {
    Ref ref;
    uint32_t acked_low, acked_high;
    TimeNs acked_at() const { return TimeNs(uint64_t(acked_high) << 32 | acked_low); }
  };
  AckedRef acked_ref(const Message& m) const {
    return AckedRef{ref(m), uint32_t(uint64_t(m.acked_at)), uint32_t(uint64_t(m.acked_at) >> 32)};
  }
  static const Ref& ref_of(const Ref& r) { return r; }
  static const Ref& ref_of(const AckedRef& a) { return a.ref; }
  template <typename Entry>
  void push_ref(std::deque<Entry>& queue, Entry entry);
  std::deque<Ref> open_;  ///< creation order, for eviction and the end of the capture
  /// Per point (each on its own clock): idle messages by deadline, acknowledged messages in ACK
  /// order, open periods in creation order.
  struct PointQueues {
    std::deque<Ref> idle;
    std::deque<AckedRef> acked;
    std::deque<std::pair<FlowPoint*, int64_t>> periods;
    PausesByPeriod pauses;
  };
  std::vector<PointQueues> points_;
  size_t open_count_ = 0;
  uint64_t next_id_ = 1;
  MessagesStats stats_;
};

}  // namespace rdmatel::messages
