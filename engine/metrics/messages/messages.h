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

#include <array>
#include <deque>
#include <memory>
#include <optional>
#include <unordered_map>

#include "engine/metrics/messages/message_state.h"
#include "engine/metrics/messages/pause_periods.h"
#include "engine/src/core/component.h"
#include "engine/src/util/flat_map.h"
#include "engine/src/util/stable_pool.h"
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
  void on_data(const Packet& p, Ctx& ctx, MsgPosition pos, MessageKind kind, Space space);
  void on_aeth(const Packet& p, Ctx& ctx);
  void on_read_request(const Packet& p, Ctx& ctx);
  /// Sizes the READ REQUEST that came last in `s` (Stream::read_unsized) once the path MTU is
  /// known, or once the next request's PSN `psn` tells it.
  void size_unsized_read(Stream& s, FlowId flow, FlowId peer, uint32_t psn);
  /// A CNP: counted in the period of the flow whose sender it slows down (its peer).
  void on_cnp(const Packet& p, Ctx& ctx);
  void on_pfc(const Packet& p);
  /// A NAK on the reverse of `forward` (flows known): counts it for the message it names.
  void count_nak(Ctx& ctx, FlowId forward, PointId point, uint32_t psn, TimeNs ts, uint64_t frame, uint8_t syndrome);
  /// NAKs seen before the two directions were paired, counted once the pairing is known.
  void drain_unpaired_naks(Ctx& ctx, const Flow& flow);
  /// The (first, last) response PSNs of the READ a READ RESPONSE answers, when known.
  std::optional<std::pair<uint32_t, uint32_t>> read_range(FlowId peer, const Packet& p) const;
  /// The stream of READ REQUESTs the READ RESPONSEs of `flow` (whose peer is `peer`) at `point`
  /// answer, its ranges those of the flow's MTU.
  Stream* read_requests(FlowId flow, FlowId peer, PointId point) const;
  /// True when READ RESPONSE `p` (of READ range `read`) answers another READ than message `m`'s.
  bool other_read(FlowId peer, const Packet& p, std::pair<uint32_t, uint32_t> read, const Message& m) const;
  /// The path MTU of a queue pair (its two flows), as far as known.
  uint32_t mtu_of(FlowId flow, FlowId peer) const;
  /// The peer of `fp`'s flow (kNoFlow until the two directions are paired; FlowPoint::peer).
  FlowId peer_of(FlowPoint& fp, const Ctx& ctx) const {
    if (fp.peer == kNoFlow) [[unlikely]]
      fp.peer = ctx.flows[fp.flow].peer;
    return fp.peer;
  }
  /// The flow's state at the point (null: none yet).
  FlowPoint* find_flow_point(FlowId flow, PointId point) const {
    if (flow >= by_flow_.size()) return nullptr;
    const FlowPoints& f = by_flow_[flow];
    for (size_t i = 0; i < f.point.size(); ++i)
      if (f.point[i] == point) return f.at[i];
    if (!f.more) return nullptr;
    FlowPoint* const* fp = more_.find(more_key(flow, point));
    return fp ? *fp : nullptr;
  }
  FlowPoint& flow_point(FlowId flow, PointId point) {
    FlowPoint* fp = find_flow_point(flow, point);
    return fp ? *fp : new_flow_point(flow, point);
  }
  FlowPoint& new_flow_point(FlowId flow, PointId point);
  Stream& stream(FlowId flow, PointId point, Space space) {
    return stream(flow_point(flow, point), space);
  }
  Stream& stream(FlowPoint& fp, Space space) {
    Stream* s = fp.streams[int(space)];
    return s ? *s : new_stream(fp, space);
  }
  Stream& new_stream(FlowPoint& fp, Space space);
  FlowPeriodRecord& period(FlowId flow, PointId point, TimeNs ts, Ctx& ctx) {
    return period(flow_point(flow, point), ts, ctx);
  }
  /// The flow's record of the period holding `ts` (most packets: the one the last went to).
  FlowPeriodRecord& period(FlowPoint& fp, TimeNs ts, Ctx& ctx) {
    if (fp.last_record && ts >= fp.last_from && ts < fp.last_to) return *fp.last_record;
    return open_period(fp, period_index(ts), ctx);
  }
  FlowPeriodRecord& open_period(FlowPoint& fp, int64_t idx, Ctx& ctx);
  int64_t period_index(TimeNs ts) const {
    const int64_t q = ts / period_ns_;
    return (ts % period_ns_ < 0) ? q - 1 : q;  // floor, also before 1970
  }
  /// The open message holding `psn` (most often the newest; else find_older()).
  Message* find(Stream& s, uint32_t psn) const {
    if (s.messages.empty()) return nullptr;
    const OpenMessage& newest = s.messages.back();
    if (psn::distance(newest.first_psn, psn) >= 0) return holds(*newest.m, psn) ? newest.m : nullptr;
    return find_older(s, psn);
  }
  Message* find_older(Stream& s, uint32_t psn) const;
  /// True when `psn` is one of message `m`'s (its LAST unseen: any after its first).
  static bool holds(const Message& m, uint32_t psn) {
    if (psn::distance(m.rec.first_psn, psn) < 0) return false;
    return !m.has_last || psn::in_range(psn, m.rec.first_psn, m.rec.last_psn);
  }
  /// Where `m` is in its stream's PSN-ordered list (its size when it is not there).
  static size_t locate(const Stream& s, const Message* m) {
    // Messages are kept in PSN order and most often leave from the front.
    const size_t n = s.messages.size();
    if (n == 0 || s.messages.front().m == m) return 0;
    if (s.messages.back().m == m) return n - 1;  // just opened
    return locate_inside(s, m);
  }
  static size_t locate_inside(const Stream& s, const Message* m);
  Message* open_message(Ctx& ctx, Stream& s, MessageKind kind, uint32_t first_psn, bool has_first);
  /// Counts one packet into a message; returns true when its PSN was already seen there.
  /// (Inlined: called for every data packet, with eight arguments.)
  bool count_packet(Message& m, uint32_t psn, uint32_t len, TimeNs ts, uint64_t frame, bool retrans, bool last,
                    bool first) {
    return count_copies(m, psn, len, ts, frame, ts, frame, 1, retrans ? 1 : 0, last, first);
  }
  /// Counts copies of one PSN: one packet, or those another message kept past its gap.
  bool count_copies(Message& m, uint32_t psn, uint32_t len, TimeNs ts, uint64_t frame, TimeNs last_ts,
                    uint64_t last_frame, uint32_t copies, uint32_t retrans_copies, bool last, bool first);
  bool count_copies(Message& m, const DataPacket& d) {
    return count_copies(m, d.psn, d.len, d.ts, d.frame, d.last_ts, d.last_frame, d.copies, d.retrans_copies, d.last,
                        d.first);
  }
  /// Keeps `d`, past the message's gap, in its `beyond` (folding copies once it filled).
  static void keep_beyond(Message& m, const DataPacket& d);
  /// The packet at `psn` filled the message's gap: the run seen from it joins the message's own.
  void close_gap(Message& m, uint32_t psn);
  /// Moves the packets a message took past a PSN gap beyond its LAST into a new message (whose
  /// FIRST this point has not seen yet: they belong to the next message).
  void split_after_last(Ctx& ctx, Stream& s, Message& m) {
    if (m.gapped) split_beyond(ctx, s, m, psn::add(m.rec.last_psn, 1));
  }
  void split_beyond(Ctx& ctx, Stream& s, Message& m, uint32_t from);
  /// Moves the packets `from` took past a PSN gap, from `boundary` on, to `to`.
  void move_beyond(Ctx& ctx, Message& from, Message& to, uint32_t boundary);
  /// Its first stamp and frame again, from the packets it holds (its earliest was given away).
  static void earliest_again(Message& m);
  /// Counts for `m` the NAKs waiting in its stream for a message holding their PSN.
  void claim_pending_naks(Stream& s, Message& m) {
    if (!s.pending_naks.empty()) claim_waiting_naks(s, m);
  }
  void claim_waiting_naks(Stream& s, Message& m);
  /// Merges `from` (a message seen without its FIRST) into `into` (its FIRST, resent or late).
  void absorb(Ctx& ctx, Message& into, Message& from);
  void absorb_covered(Ctx& ctx, Stream& s, Message& m) {
    if (!m.has_last && s.messages.size() > 1 && s.messages.back().m != &m) absorb_following(ctx, s, m);
  }
  void absorb_following(Ctx& ctx, Stream& s, Message& m);
  void finalize(Ctx& ctx, Message& m);
  void emit_periods(Ctx& ctx, PointId point, bool all);
  /// Whether a NAK or CNP of the reverse direction of `fp`'s flow, at its point and stamped before
  /// `end`, waits for the two directions to be paired: it then counts in the period of its stamp,
  /// and that period emitted before would be reported twice (its packets, then its NAKs). Counts
  /// those of a flow paired since.
  bool awaits_unpaired_naks(const FlowPoint& fp, TimeNs end, TimeNs horizon, Ctx& ctx);
  void emit_snapshot(Ctx& ctx, const Message& m);
  /// The message's record: its counts with its stream's flow and point (valid until the next
  /// record). One record for every flow-point, whose flow's part is filled when the flow-point
  /// differs from the last record's: a record per flow-point was 220 of its 330 bytes, and a
  /// flow's messages are reported in bursts (an ACK finishes several).
  MessageRecord& record_of(const Ctx& ctx, const Message& m);
  MessageRecord record_;
  const FlowPoint* record_owner_ = nullptr;
  struct PointQueues;
  PointQueues& queues(PointId point) {
    if (point >= points_.size()) [[unlikely]]
      points_.resize(size_t(point) + 1);
    return points_[point];
  }
  /// The queues of a point some flow was seen at (they exist since its FlowPoint does).
  PointQueues& queues_at(PointId point) { return points_[point]; }

  // Settings.
  DurationNs window_;
  DurationNs message_timeout_;
  DurationNs period_ns_;
  size_t max_open_;
  bool frame_notes_;
  NoteKind note_packet_, note_nak_, note_nak_read_;

  std::vector<uint32_t> mtu_;  ///< by flow id: its largest FIRST/MIDDLE payload
  /// A flow's FlowPoints: those of the first three points that saw it side by side with their
  /// point ids (most flows are seen at one or two points: found without reading a FlowPoint),
  /// how many more there are in `more_`.
  struct FlowPoints {
    std::array<PointId, 3> point{kNoPoint, kNoPoint, kNoPoint};
    uint32_t more = 0;
    std::array<FlowPoint*, 3> at{};
  };
  std::vector<FlowPoints> by_flow_;  ///< by flow id
  /// The FlowPoints beyond a flow's first three, by (flow, point): hashed, since a flow seen at
  /// thousands of points (a mirror of every port) looked each packet's point up in a list of
  /// them: 20,000 points took minutes.
  static uint64_t more_key(FlowId flow, PointId point) { return uint64_t(flow) << 32 | point; }
  struct MoreKeyHash {
    size_t operator()(uint64_t k) const noexcept { return size_t(k); }  // FlatMap mixes it
  };
  FlatMap<uint64_t, FlowPoint*, MoreKeyHash> more_;
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
  struct Waiting {
    std::vector<UnpairedNak> naks;
    TimeNs oldest = 0;  ///< the earliest stamp among them
  };
  std::unordered_map<FlowId, Waiting> unpaired_naks_;  ///< by the NAK's own flow
  size_t unpaired_count_ = 0;  ///< NAKs and CNPs in unpaired_naks_
  void keep_unpaired(FlowId flow, const UnpairedNak& n, Ctx& ctx);
  StablePool<Message> pool_;  ///< owns messages (stable addresses); finished ones are recycled
  std::vector<Message*> free_;
  /// The queues below refer to messages that may have finished since (lazy deletion): a
  /// reference is live while its message is open with the same id. Whether it is is told by
  /// slots_ (16 bytes per message, in one array) rather than by the message itself, so that
  /// dropping the dead references at a queue's front reads no finished message. A reference is
  /// 12 bytes (the pool slot and the id, in halves so nothing pads it): the queues hold several
  /// per open message, and open messages are many (acknowledged ones wait a reorder window), so
  /// at 24 bytes they were 18 of the 110 MB of heap on the benchmark capture.
  struct Ref {
    uint32_t slot;
    uint32_t id_low, id_high;
    uint64_t id() const { return uint64_t(id_high) << 32 | id_low; }
  };
  bool live(const Ref& r) const { return slots_[r.slot].open_id == r.id(); }
  Ref ref(const Message& m) const { return Ref{m.slot, uint32_t(m.rec.id), uint32_t(m.rec.id >> 32)}; }
  Message& message(const Ref& r) { return *slots_[r.slot].message; }
  /// Asks the CPU for the lines of a message finalize() reads: the messages a horizon finishes
  /// were last touched a reorder window ago and are out of every cache, so each cost a wait for
  /// memory (half of finalize()'s time) until the next few are fetched while one is finished.
  void prefetch(const Ref& r) const {
    const char* m = reinterpret_cast<const char*>(slots_[r.slot].message);
    for (size_t line = 0; line < sizeof(Message); line += 64) __builtin_prefetch(m + line);
  }
  static constexpr size_t kPrefetchAhead = 4;
  /// Marks a message finished for its references.
  void close(Message& m) {
    m.done = true;
    slots_[m.slot].open_id = 0;
  }
  struct Slot {
    uint64_t open_id;  ///< the id of the message while it is open, 0 once it is finished
    Message* message;
  };
  std::vector<Slot> slots_;  ///< by Message::slot, its place in pool_
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
  // Messages finished out of queue order (evicted, merged, acknowledged) leave dead references
  // behind; queues are pruned from the front as time passes, but time need not pass. Compacting
  // once the dead outnumber the open keeps each queue within twice the open messages.
  template <typename Entry>
  void push_ref(Ring<Entry>& queue, Entry entry) {
    if (queue.size() >= 2 * open_count_ + 1024) [[unlikely]]
      queue.erase_if([&](const Entry& e) { return !live(ref_of(e)); });
    queue.push_back(entry);
  }
  /// The open messages in creation order (by id), for eviction: gathered from slots_ when a
  /// message must be evicted and none of those gathered before is still open (the messages
  /// opened since are newer than every one gathered). Each message is gathered at most once.
  std::vector<Ref> by_age_;
  size_t by_age_next_ = 0;  ///< by_age_ before it were finished
  /// The open message opened first (null when none is open).
  Message* oldest_open();
  /// Every open message, by id.
  std::vector<Ref> open_by_age() const;
  /// Per point (each on its own clock): idle messages by deadline, acknowledged messages in ACK
  /// order, open periods in creation order.
  struct OpenPeriod {
    FlowPoint* fp;
    int64_t idx;
  };
  struct PointQueues {
    Ring<Ref> idle;
    Ring<AckedRef> acked;
    Ring<OpenPeriod> periods;
    PausesByPeriod pauses;
  };
  std::vector<PointQueues> points_;
  size_t open_count_ = 0;
  bool capture_ended_ = false;  ///< finish() runs: no packet follows
  uint64_t next_id_ = 1;
  MessagesStats stats_;
};

}  // namespace rdmatel::messages
