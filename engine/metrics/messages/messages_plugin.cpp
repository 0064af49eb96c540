// SPDX-License-Identifier: GPL-2.0-or-later
#include "engine/metrics/messages/messages_plugin.h"

#include <algorithm>
#include <tuple>

#include "engine/util/psn.h"

namespace rdmatel::messages {
namespace {

constexpr size_t kMaxPendingNaks = 256;  // per stream; older ones are dropped
constexpr size_t kFinishedRanges = 64;   // per stream
constexpr uint64_t kMaxMtu = 4096;       // the largest InfiniBand path MTU
constexpr size_t kReadRanges = 256;      // READs remembered per stream
constexpr size_t kUnpairedNaksPerFlow = 64;
constexpr size_t kUnpairedNakFlows = 4096;
// Bounds against hostile or broken traffic: a flow and point keeps at most this many open
// periods (stamps jumping around) and open messages (SENDs nobody acknowledges); beyond them
// the oldest are reported early. Real queue pairs stay far below (send queues of a few
// thousand work requests at most).
constexpr size_t kMaxOpenPeriods = 64;
constexpr size_t kMaxOpenMessagesPerStream = 4096;


int64_t period_index(TimeNs ts, DurationNs period) {
  int64_t q = ts / period;
  return (ts % period < 0) ? q - 1 : q;  // floor, also before 1970
}

MessageKind kind_of(IbOpClass c) {
  switch (c) {
    case IbOpClass::kSend: return MessageKind::kSend;
    case IbOpClass::kReadResponse: return MessageKind::kReadResponse;
    default: return MessageKind::kWrite;
  }
}

bool contains(const Message& m, uint32_t psn) {
  if (psn::distance(m.rec.first_psn, psn) < 0) return false;
  return !m.has_last || psn::in_range(psn, m.rec.first_psn, m.rec.last_psn);
}

}  // namespace

bool PsnBitmap::mark(uint32_t psn) {
  if (!has_base_) {
    has_base_ = true;
    base_ = psn;
  }
  int32_t off = psn::distance(base_, psn);
  if (off >= kMaxSpan || off <= -kMaxSpan) {
    ++distinct_;  // too far from the rest to track: count, never call it a duplicate
    return false;
  }
  // First range ending at or after off - 1 (it may hold off, or be adjacent to it).
  auto it = std::lower_bound(ranges_.begin(), ranges_.end(), off - 1,
                             [](const std::pair<int32_t, int32_t>& r, int32_t v) { return r.second < v; });
  if (it != ranges_.end() && it->first <= off && off <= it->second) return true;
  if (it != ranges_.end() && it->second == off - 1) {  // extends a range upwards
    it->second = off;
    auto next = std::next(it);
    if (next != ranges_.end() && next->first == off + 1) {
      it->second = next->second;
      ranges_.erase(next);
    }
  } else if (it != ranges_.end() && it->first == off + 1) {  // extends the next range downwards
    it->first = off;
  } else if (ranges_.size() < kMaxRanges) {
    ranges_.insert(it, {off, off});
  }
  ++distinct_;
  return false;
}

FlowPoint* MessagesPlugin::find_flow_point(FlowId flow, PointId point) const {
  if (flow >= flows_.size()) return nullptr;
  for (FlowPoint* fp : flows_[flow].points)
    if (fp->point == point) return fp;
  return nullptr;
}

FlowPoint& MessagesPlugin::flow_point(FlowId flow, PointId point) {
  if (FlowPoint* fp = find_flow_point(flow, point)) return *fp;
  if (flow >= flows_.size()) flows_.resize(size_t(flow) + 1);
  FlowPoint& fp = flow_points_.emplace_back();
  fp.flow = flow;
  fp.point = point;
  flows_[flow].points.push_back(&fp);
  return fp;
}

Stream& MessagesPlugin::stream(FlowId flow, PointId point, Space space) {
  FlowPoint& fp = flow_point(flow, point);
  Stream*& s = fp.streams[int(space)];
  if (!s) {
    s = &streams_.emplace_back();
    s->flow = flow;
    s->point = point;
    s->space = space;
  }
  return *s;
}

FlowPeriodRecord& MessagesPlugin::period(FlowId flow, PointId point, TimeNs ts, EngineContext& ctx) {
  FlowPoint& fp = flow_point(flow, point);
  int64_t idx = period_index(ts, cfg_.period_ns);
  if (fp.last_record && fp.last_period == idx) return *fp.last_record;
  fp.last_period = idx;
  auto it = fp.periods.find(idx);
  if (it != fp.periods.end()) return *(fp.last_record = &it->second);
  if (fp.periods.size() >= kMaxOpenPeriods) {
    ctx.warn_once(ctx, "open_periods",
                  "timestamps jump between more than " + std::to_string(kMaxOpenPeriods) +
                      " periods on one flow: the oldest periods are reported early");
    auto oldest = fp.periods.begin();
    ctx.sink.on_flow_period(oldest->second);
    fp.periods.erase(oldest);
  }
  FlowPeriodRecord& r = fp.periods[idx];
  fp.last_record = &r;
  const Flow& f = ctx.flows[flow];
  r.src = f.key.src;
  r.dst = f.key.dst;
  r.dst_qpn = f.key.dst_qpn;
  r.point = point;
  r.period_start_ns = idx * cfg_.period_ns;
  r.period_ns = cfg_.period_ns;
  period_queue_.emplace_back(&fp, idx);
  return r;
}

Message* MessagesPlugin::find(Stream& s, uint32_t psn) const {
  // The latest message starting at or before psn holds it, unless that one ended earlier.
  if (s.messages.empty()) return nullptr;
  Message* back = s.messages.back();
  if (psn::distance(back->rec.first_psn, psn) >= 0) return contains(*back, psn) ? back : nullptr;
  // Resent packets: most often in the message the previous resend went to.
  // (Closed ranges only: they are disjoint, so holding psn is proof.)
  if (s.hint && !s.hint->done && s.hint->stream == &s && s.hint->has_last && contains(*s.hint, psn)) return s.hint;
  // Messages are in PSN order, so "starts at or before psn" holds for a prefix of them: binary
  // search (go-back-N resends walk back over many messages).
  size_t lo = 0, hi = s.messages.size();
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (psn::distance(s.messages[mid]->rec.first_psn, psn) >= 0) lo = mid + 1;
    else hi = mid;
  }
  if (lo == 0) return nullptr;
  Message* m = s.messages[lo - 1];
  if (!contains(*m, psn)) return nullptr;
  s.hint = m;
  return m;
}

Message* MessagesPlugin::open_message(EngineContext& ctx, Stream& s, const PacketContext& p, uint32_t first_psn,
                                      bool has_first) {
  if (open_count_ >= cfg_.max_open_messages) {
    while (!open_.empty() && !open_.front().live()) open_.pop_front();
    if (!open_.empty()) {
      ctx.warn_once(ctx, "max_open_messages",
                    "more than " + std::to_string(cfg_.max_open_messages) +
                        " RDMA messages open at once: the oldest are reported early (limit max_open_messages)");
      ++stats_.evicted;
      finalize(ctx, *open_.front().m);
      open_.pop_front();
    }
  }
  if (s.messages.size() >= kMaxOpenMessagesPerStream) {
    ctx.warn_once(ctx, "open_messages_per_flow",
                  "more than " + std::to_string(kMaxOpenMessagesPerStream) +
                      " RDMA messages open on one flow (never acknowledged): the oldest are reported early");
    ++stats_.evicted;
    finalize(ctx, *s.messages.front());
  }
  Message* m;
  if (!free_.empty()) {
    m = free_.back();
    free_.pop_back();
    *m = Message{};
  } else {
    m = &pool_.emplace_back();
  }
  const Flow& f = ctx.flows[s.flow];
  m->rec.id = next_id_++;
  m->rec.src = f.key.src;
  m->rec.dst = f.key.dst;
  m->rec.dst_qpn = f.key.dst_qpn;
  m->rec.point = s.point;
  m->rec.kind = kind_of(p.pkt.op->op_class);
  m->rec.first_psn = first_psn;
  m->rec.last_psn = first_psn;
  m->has_first = has_first;
  m->stream = &s;
  // Keep the stream's messages in PSN order (a resent FIRST can come after later messages).
  auto pos = s.messages.end();
  while (pos != s.messages.begin() && psn::distance(first_psn, (*std::prev(pos))->rec.first_psn) > 0) --pos;
  size_t index = size_t(pos - s.messages.begin());
  s.messages.insert(pos, m);
  if (index < s.acked_count) s.acked_count = index;  // rescanned by the next ACK
  open_.push_back(Ref{m, m->rec.id});
  idle_.push_back(Ref{m, m->rec.id});
  ++open_count_;
  ++stats_.messages;
  return m;
}

void MessagesPlugin::absorb(EngineContext& ctx, Message& into, Message& from) {
  MessageRecord& a = into.rec;
  const MessageRecord& b = from.rec;
  a.first_ns = std::min(a.first_ns, b.first_ns);
  a.last_ns = std::max(a.last_ns, b.last_ns);
  a.first_frame = std::min(a.first_frame, b.first_frame);
  a.last_frame = std::max(a.last_frame, b.last_frame);
  a.packets += b.packets;
  a.retrans_packets += b.retrans_packets;
  a.bytes += b.bytes;
  a.retrans_bytes += b.retrans_bytes;
  a.naks += b.naks;
  a.with_immediate |= b.with_immediate;
  into.has_last = from.has_last;
  if (psn::newer(b.last_psn, a.last_psn)) a.last_psn = b.last_psn;
  from.seen.for_each([&](uint32_t psn) { into.seen.mark(psn); });
  if (from.acked && !into.acked) {
    into.acked = true;
    into.acked_at = from.acked_at;
    acked_.push_back(Ref{&into, a.id});
  }
  // `from` disappears without a record of its own; annotating front ends learn where it went.
  if (cfg_.frame_notes) {
    MessageRecord gone = from.rec;
    gone.merged_into = a.id;
    ctx.sink.on_message(gone);
  }
  Stream& s = *from.stream;
  auto it = std::find(s.messages.begin(), s.messages.end(), &from);
  if (it != s.messages.end()) {
    if (size_t(it - s.messages.begin()) < s.acked_count) --s.acked_count;
    s.messages.erase(it);
  }
  from.done = true;
  --open_count_;
  --stats_.messages;
  free_.push_back(&from);
  claim_pending_naks(s, into);
}

void MessagesPlugin::claim_pending_naks(Stream& s, Message& m) {
  auto& pend = s.pending_naks;
  for (size_t i = 0; i < pend.size();) {
    if (contains(m, pend[i])) {
      ++m.rec.naks;
      pend.erase(pend.begin() + long(i));
    } else {
      ++i;
    }
  }
}

void MessagesPlugin::on_packet(EngineContext& ctx, const PacketContext& p) {
  IbTransport t = p.pkt.op->transport;
  if (t != IbTransport::kRC && t != IbTransport::kXRC && t != IbTransport::kUC) return;
  switch (p.pkt.op->op_class) {
    case IbOpClass::kSend:
    case IbOpClass::kWrite: on_data(ctx, p, Space::kRequest); break;
    case IbOpClass::kReadResponse: on_data(ctx, p, Space::kResponse); break;
    case IbOpClass::kReadRequest: on_read_request(ctx, p); break;
    case IbOpClass::kAcknowledge:
    case IbOpClass::kAtomicAcknowledge: on_aeth(ctx, p); break;
    default: break;
  }
}

void MessagesPlugin::on_read_request(EngineContext&, const PacketContext& p) {
  // A READ REQUEST takes one request PSN per response packet it asks for: the requester's next
  // PSN is psn + ceil(length / path MTU). Without the MTU, allow the next request to jump.
  Stream& s = stream(p.flow.id, p.point, Space::kRequest);
  const uint32_t psn = p.pkt.bth.psn;
  const uint32_t len = p.pkt.reth.dma_len;
  const uint32_t mtu = mtu_of(p.flow);
  auto responses = [&](uint32_t length) { return mtu && length ? (length + mtu - 1) / mtu : 1; };
  // Remember the READ unless it lies inside one already known: then it is a copy, or a READ
  // re-issued for the rest after lost responses. (A copy of a READ this point first missed,
  // seen after later requests, is still new here.)
  bool known = false;
  for (const auto& [first, length] : s.reads)
    if (psn::in_range(psn, first, psn::add(first, int64_t(responses(length)) - 1))) known = true;
  if (!known) {
    s.reads.emplace_back(psn, len);
    if (s.reads.size() > kReadRanges) s.reads.pop_front();
  }
  uint32_t last = psn::add(psn, int64_t(responses(len)) - 1);
  if (s.has_newest && !psn::newer(last, s.newest)) return;
  s.newest = last;
  s.has_newest = true;
  s.gap_allowed = mtu == 0;
}

std::optional<std::pair<uint32_t, uint32_t>> MessagesPlugin::read_range(EngineContext& ctx,
                                                                        const PacketContext& p) const {
  // READ RESPONSEs answer READ REQUESTs that went the other way, on the peer flow. The number
  // of responses is known once the path MTU is: compute it now, not when the READ was seen.
  if (p.flow.peer == kNoFlow) return std::nullopt;
  FlowPoint* fp = find_flow_point(p.flow.peer, p.point);
  Stream* req = fp ? fp->streams[int(Space::kRequest)] : nullptr;
  if (!req) return std::nullopt;
  uint32_t mtu = mtu_of(p.flow);
  if (!mtu) return std::nullopt;
  const uint32_t psn = p.pkt.bth.psn;
  (void)ctx;
  for (auto r = req->reads.rbegin(); r != req->reads.rend(); ++r) {
    uint32_t n = r->second ? (r->second + mtu - 1) / mtu : 1;
    uint32_t last = psn::add(r->first, int64_t(n) - 1);
    if (psn::in_range(psn, r->first, last)) return std::make_pair(r->first, last);
  }
  return std::nullopt;
}

uint32_t MessagesPlugin::mtu_of(const Flow& f) const {
  // FIRST and MIDDLE packets are exactly one path MTU long, in either direction of the QP;
  // before this QP showed one, the fabric's (the largest seen anywhere) is the best guess.
  uint32_t m = f.id < flows_.size() ? flows_[f.id].mtu : 0;
  if (f.peer != kNoFlow && f.peer < flows_.size()) m = std::max(m, flows_[f.peer].mtu);
  return m ? m : fabric_mtu_;
}

void MessagesPlugin::on_data(EngineContext& ctx, const PacketContext& p, Space space) {
  ++stats_.data_packets;
  if (!unpaired_naks_.empty() && p.flow.peer != kNoFlow) drain_unpaired_naks(ctx, ctx.flows[p.flow.peer]);
  Stream& s = stream(p.flow.id, p.point, space);
  const uint32_t psn = p.pkt.bth.psn;
  const uint64_t len = p.pkt.payload_len;
  MsgPosition pos = p.pkt.op->position;
  bool starts = pos == MsgPosition::kFirst || pos == MsgPosition::kOnly;
  if (pos == MsgPosition::kFirst || pos == MsgPosition::kMiddle) {
    if (p.flow.id >= flows_.size()) flows_.resize(size_t(p.flow.id) + 1);
    uint32_t& mtu = flows_[p.flow.id].mtu;
    if (len > mtu && len <= kMaxMtu) mtu = uint32_t(len);
    if (len > fabric_mtu_ && len <= kMaxMtu) fabric_mtu_ = uint32_t(len);
  }
  bool retrans = s.has_newest && !psn::newer(psn, s.newest);
  // READ RESPONSE PSNs jump from one READ to the next (the requester's other requests sit in
  // between): a new response message skipping PSNs is not a loss.
  bool jump_ok = s.gap_allowed || (space == Space::kResponse && starts);
  bool oos = s.has_newest && psn::newer(psn, s.newest) && psn != psn::add(s.newest, 1) && !jump_ok;
  if (!s.has_newest || psn::newer(psn, s.newest)) {
    s.newest = psn;
    s.has_newest = true;
    s.gap_allowed = false;
  }
  FlowPeriodRecord& fp = period(p.flow.id, p.point, p.ts, ctx);
  ++fp.packets;
  fp.bytes += len;
  if (retrans) {
    ++fp.retrans_packets;
    fp.retrans_bytes += len;
  }
  if (oos) ++fp.oos_packets;

  // A FIRST/ONLY newer than anything seen starts a new message; an older one is a copy or
  // the answer to a re-issued READ REQUEST, and belongs to the message holding its PSN. So
  // does a response starting inside a READ's range (the rest of a READ re-issued after loss).
  std::optional<std::pair<uint32_t, uint32_t>> read;
  if (space == Space::kResponse) read = read_range(ctx, p);
  bool continuation = read && psn != read->first;
  Message* m = starts && !retrans && !continuation ? nullptr : find(s, psn);
  // A request FIRST/ONLY always starts its own message (a message open before it, whose LAST
  // this point missed, ends just before it).
  if (starts && space == Space::kRequest && m && m->rec.first_psn != psn) m = nullptr;
  // SENDs and WRITEs do not interleave: a packet of the other kind is not part of an open
  // message whose LAST this point missed.
  if (m && m->rec.kind != kind_of(p.pkt.op->op_class)) m = nullptr;
  if (!m && retrans) {
    for (const auto& [first, last] : s.finished)
      if (psn::in_range(psn, first, last)) {
        ++stats_.late_packets;  // a copy after its message was reported: flow counters only
        if (cfg_.frame_notes)
          ctx.sink.on_frame_note(FrameNote{p.frame, NoteKind::kMessage, 0, kMsgRetransmission});
        return;
      }
  }
  if (m && !m->has_first) {
    // A message seen without its FIRST (lost before this point) whose head has now been
    // resent as a message of its own: the two are one message.
    auto it = std::find(s.messages.begin(), s.messages.end(), m);
    if (it != s.messages.begin()) {
      Message* prev = *std::prev(it);
      if (prev->has_first && !prev->has_last && prev->rec.kind == m->rec.kind) {
        absorb(ctx, *prev, *m);
        m = prev;
      }
    }
  }
  if (!m) {
    m = open_message(ctx, s, p, psn, starts);
    claim_pending_naks(s, *m);
  }
  if ((pos == MsgPosition::kLast || pos == MsgPosition::kOnly) && !m->has_last &&
      (pos == MsgPosition::kLast || m->rec.first_psn == psn || (read && psn == read->second))) {
    m->rec.last_psn = psn;
    m->has_last = true;
    claim_pending_naks(s, *m);
  }
  if (p.pkt.has(kExtImmDt)) m->rec.with_immediate = true;

  MessageRecord& r = m->rec;
  bool dup = m->seen.mark(psn);
  if (r.packets == 0) {
    r.first_ns = r.last_ns = p.ts;
    r.first_frame = p.frame;
  } else {
    r.first_ns = std::min(r.first_ns, p.ts);
    r.last_ns = std::max(r.last_ns, p.ts);
  }
  r.last_frame = p.frame;
  ++r.packets;
  r.bytes += len;
  if (retrans) {
    ++r.retrans_packets;
    r.retrans_bytes += len;
  }
  if (!m->has_last && psn::newer(psn, r.last_psn)) r.last_psn = psn;  // an open message's extent so far

  if (cfg_.frame_notes) {
    uint32_t flags = (retrans ? kMsgRetransmission : 0) | (dup ? kMsgDuplicate : 0) | (oos ? kMsgOutOfSequence : 0);
    if (flags || pos == MsgPosition::kLast || pos == MsgPosition::kOnly) {
      ctx.sink.on_frame_note(FrameNote{p.frame, NoteKind::kMessage, r.id, flags});
      MessageRecord snap = r;
      snap.provisional = true;
      snap.complete = m->has_first && m->has_last &&
                      m->seen.distinct() == uint32_t(psn::distance(r.first_psn, r.last_psn)) + 1;
      ctx.sink.on_message(snap);
    }
  }
}

void MessagesPlugin::on_aeth(EngineContext& ctx, const PacketContext& p) {
  AethKind k = aeth_kind(p.pkt.aeth.syndrome);
  if (k != AethKind::kAck && k != AethKind::kNak) return;
  bool nak = k == AethKind::kNak;
  if (nak) ++stats_.naks;
  if (p.flow.peer == kNoFlow) {
    // Not paired yet (e.g. the first packets of the flow were the lost ones): keep the NAK
    // until an ACK or a response pairs the two directions.
    if (nak) {
      auto& list = unpaired_naks_[p.flow.id];
      if (list.size() < kUnpairedNaksPerFlow && unpaired_naks_.size() <= kUnpairedNakFlows)
        list.push_back({p.point, p.pkt.bth.psn, p.ts, p.frame, p.pkt.aeth.syndrome});
      else
        ++stats_.naks_unattributed;
    }
    return;
  }
  if (!unpaired_naks_.empty()) drain_unpaired_naks(ctx, p.flow);
  if (nak) {
    count_nak(ctx, p.flow.peer, p.point, p.pkt.bth.psn, p.ts, p.frame, p.pkt.aeth.syndrome);
    return;
  }
  // The ACK names a PSN of the requests flowing the other way.
  Stream& s = stream(p.flow.peer, p.point, Space::kRequest);
  const uint32_t psn = p.pkt.bth.psn;
  if (!s.has_acked || psn::newer(psn, s.acked)) {
    s.acked = psn;
    s.has_acked = true;
  }
  // ACKs cover a prefix of the PSN-ordered messages: only the unacked front is examined.
  TimeNs now = ctx.points[p.point].watermark;
  while (s.acked_count < s.messages.size()) {
    Message* m = s.messages[s.acked_count];
    if (!m->has_last || psn::newer(m->rec.last_psn, s.acked)) break;
    if (!m->acked) {
      m->acked = true;
      m->acked_at = now;
      acked_.push_back(Ref{m, m->rec.id});
    }
    ++s.acked_count;
  }
}

void MessagesPlugin::drain_unpaired_naks(EngineContext& ctx, const Flow& nak_flow) {
  if (nak_flow.peer == kNoFlow) return;
  auto it = unpaired_naks_.find(nak_flow.id);
  if (it == unpaired_naks_.end()) return;
  std::vector<UnpairedNak> list = std::move(it->second);
  unpaired_naks_.erase(it);
  for (const UnpairedNak& n : list) count_nak(ctx, nak_flow.peer, n.point, n.psn, n.ts, n.frame, n.syndrome);
}

void MessagesPlugin::count_nak(EngineContext& ctx, FlowId forward, PointId point, uint32_t psn, TimeNs ts,
                               uint64_t frame, uint8_t syndrome) {
  Stream& s = stream(forward, point, Space::kRequest);
  ++period(forward, point, ts, ctx).naks;
  Message* m = find(s, psn);
  if (m) {
    ++m->rec.naks;
  } else {
    if (s.pending_naks.size() >= kMaxPendingNaks) s.pending_naks.erase(s.pending_naks.begin());
    s.pending_naks.push_back(psn);
  }
  if (cfg_.frame_notes) {
    ctx.sink.on_frame_note(FrameNote{frame, NoteKind::kNak, m ? m->rec.id : 0, syndrome});
    if (m) {
      MessageRecord snap = m->rec;
      snap.provisional = true;
      ctx.sink.on_message(snap);
    }
  }
}

void MessagesPlugin::finalize(EngineContext& ctx, Message& m) {
  if (m.done) return;
  m.done = true;
  MessageRecord& r = m.rec;
  r.provisional = false;
  r.complete = m.has_first && m.has_last &&
               m.seen.distinct() == uint32_t(psn::distance(r.first_psn, r.last_psn)) + 1;
  ctx.sink.on_message(r);
  Stream& s = *m.stream;
  auto it = std::find(s.messages.begin(), s.messages.end(), &m);
  if (it != s.messages.end()) {
    if (size_t(it - s.messages.begin()) < s.acked_count) --s.acked_count;
    s.messages.erase(it);
  }
  if (m.has_first && m.has_last) {
    s.finished.emplace_back(r.first_psn, r.last_psn);
    if (s.finished.size() > kFinishedRanges) s.finished.pop_front();
  }
  --open_count_;
  free_.push_back(&m);
}

void MessagesPlugin::emit_periods(EngineContext& ctx, bool all) {
  while (!period_queue_.empty()) {
    auto [fp, idx] = period_queue_.front();
    auto it = fp->periods.find(idx);
    if (it == fp->periods.end()) {
      period_queue_.pop_front();
      continue;
    }
    TimeNs end = (idx + 1) * cfg_.period_ns;
    if (!all && ctx.points[fp->point].watermark < end + cfg_.reorder_window_ns) break;
    ctx.sink.on_flow_period(it->second);
    if (fp->last_record == &it->second) fp->last_record = nullptr;
    fp->periods.erase(it);
    period_queue_.pop_front();
  }
}

void MessagesPlugin::on_housekeeping(EngineContext& ctx) {
  // Acknowledged: nothing more can come once the reorder window has passed.
  while (!acked_.empty()) {
    Ref r = acked_.front();
    if (!r.live()) {
      acked_.pop_front();
      continue;
    }
    if (ctx.points[r.m->rec.point].watermark <= r.m->acked_at + cfg_.reorder_window_ns) break;
    acked_.pop_front();
    finalize(ctx, *r.m);
  }
  // Idle: no packet for the message timeout. A message touched since it was queued goes back
  // in the queue with its new deadline, so one busy message never holds the others back.
  for (size_t budget = idle_.size(); budget > 0 && !idle_.empty(); --budget) {
    Ref r = idle_.front();
    if (!r.live()) {
      idle_.pop_front();
      continue;
    }
    Message& m = *r.m;
    TimeNs wm = ctx.points[m.rec.point].watermark;
    if (wm > m.rec.last_ns + cfg_.message_timeout_ns) {
      idle_.pop_front();
      finalize(ctx, m);
      continue;
    }
    if (m.rec.last_ns != m.queued_last) {
      idle_.pop_front();
      m.queued_last = m.rec.last_ns;
      idle_.push_back(r);
      continue;
    }
    break;
  }
  while (!open_.empty() && !open_.front().live()) open_.pop_front();
  emit_periods(ctx, false);
}

void MessagesPlugin::finish(EngineContext& ctx) {
  // NAKs whose flows never got paired: noted on their frames, counted nowhere else.
  for (auto& [flow, list] : unpaired_naks_) {
    stats_.naks_unattributed += list.size();
    if (cfg_.frame_notes)
      for (const UnpairedNak& n : list) ctx.sink.on_frame_note(FrameNote{n.frame, NoteKind::kNak, 0, n.syndrome});
  }
  unpaired_naks_.clear();
  for (Ref r : open_)
    if (r.live()) finalize(ctx, *r.m);
  open_.clear();
  idle_.clear();
  acked_.clear();
  // Remaining periods in a stable order: flow, point, period.
  std::vector<std::pair<FlowPoint*, int64_t>> rest(period_queue_.begin(), period_queue_.end());
  std::sort(rest.begin(), rest.end(), [](const auto& a, const auto& b) {
    return std::tie(a.first->flow, a.first->point, a.second) < std::tie(b.first->flow, b.first->point, b.second);
  });
  period_queue_.assign(rest.begin(), rest.end());
  emit_periods(ctx, true);
}

}  // namespace rdmatel::messages
