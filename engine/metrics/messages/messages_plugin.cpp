// SPDX-License-Identifier: GPL-2.0-or-later
#include "engine/metrics/messages/messages_plugin.h"

#include <algorithm>

#include "engine/util/psn.h"

namespace rdmatel::messages {
namespace {

constexpr size_t kMaxPendingNaks = 256;  // per stream; older ones are dropped
constexpr size_t kFinishedRanges = 64;   // per stream
constexpr uint64_t kMaxMtu = 4096;       // the largest InfiniBand path MTU

uint64_t stream_key(FlowId flow, PointId point, Space space) {
  return uint64_t(flow) << 32 | uint64_t(point) << 1 | uint64_t(space);
}
uint64_t flow_point_key(FlowId flow, PointId point) { return uint64_t(flow) << 32 | point; }

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
  if (off < 0) {
    // An older PSN than any seen: rebase (rare: the FIRST of a message seen after its middle).
    uint32_t shift = uint32_t(-off);
    if (shift >= kMaxSpan) return false;
    std::vector<uint64_t> moved((bits_.size() * 64 + shift + 63) / 64);
    for (size_t i = 0; i < bits_.size() * 64; ++i)
      if (bits_[i / 64] >> (i % 64) & 1) moved[(i + shift) / 64] |= uint64_t(1) << ((i + shift) % 64);
    bits_.swap(moved);
    base_ = psn;
    off = 0;
  }
  if (uint32_t(off) >= kMaxSpan) {
    ++distinct_;  // too long a message to track: count, never call it a duplicate
    return false;
  }
  size_t word = size_t(off) / 64;
  if (word >= bits_.size()) bits_.resize(word + 1);
  uint64_t bit = uint64_t(1) << (off % 64);
  if (bits_[word] & bit) return true;
  bits_[word] |= bit;
  ++distinct_;
  return false;
}

Stream& MessagesPlugin::stream(FlowId flow, PointId point, Space space) {
  auto& slot = streams_[stream_key(flow, point, space)];
  if (!slot) {
    slot = std::make_unique<Stream>();
    slot->flow = flow;
    slot->point = point;
    slot->space = space;
  }
  return *slot;
}

FlowPeriodRecord& MessagesPlugin::period(FlowId flow, PointId point, TimeNs ts, EngineContext& ctx) {
  uint64_t key = flow_point_key(flow, point);
  FlowPoint& fp = flow_points_[key];
  fp.flow = flow;
  fp.point = point;
  int64_t idx = period_index(ts, cfg_.period_ns);
  auto it = fp.periods.find(idx);
  if (it != fp.periods.end()) return it->second;
  FlowPeriodRecord& r = fp.periods[idx];
  const Flow& f = ctx.flows[flow];
  r.src = f.key.src;
  r.dst = f.key.dst;
  r.dst_qpn = f.key.dst_qpn;
  r.point = point;
  r.period_start_ns = idx * cfg_.period_ns;
  r.period_ns = cfg_.period_ns;
  period_queue_.emplace_back(key, idx);
  return r;
}

Message* MessagesPlugin::find(Stream& s, uint32_t psn) const {
  // The latest message starting at or before psn holds it, unless that one ended earlier.
  for (auto it = s.messages.rbegin(); it != s.messages.rend(); ++it) {
    Message* m = *it;
    if (psn::distance(m->rec.first_psn, psn) < 0) continue;
    return contains(*m, psn) ? m : nullptr;
  }
  return nullptr;
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
  Message* m;
  if (!free_.empty()) {
    m = free_.back();
    free_.pop_back();
    *m = Message{};
  } else {
    pool_.push_back(std::make_unique<Message>());
    m = pool_.back().get();
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
  uint32_t psn = p.pkt.bth.psn;
  if (s.has_newest && !psn::newer(psn, s.newest)) return;  // a re-issued READ REQUEST
  uint32_t mtu = mtu_of(p.flow);
  uint32_t len = p.pkt.reth.dma_len;
  uint32_t npsn = mtu && len ? (len + mtu - 1) / mtu : 1;
  s.newest = psn::add(psn, int64_t(npsn) - 1);
  s.has_newest = true;
  s.gap_allowed = mtu == 0;
}

uint32_t MessagesPlugin::mtu_of(const Flow& f) const {
  // FIRST and MIDDLE packets are exactly one path MTU long, in either direction of the QP;
  // before this QP showed one, the fabric's (the largest seen anywhere) is the best guess.
  uint32_t m = 0;
  if (f.peer != kNoFlow) {
    auto it = mtu_.find(f.peer);
    if (it != mtu_.end()) m = std::max(m, it->second);
  }
  auto it = mtu_.find(f.id);
  if (it != mtu_.end()) m = std::max(m, it->second);
  return m ? m : fabric_mtu_;
}

void MessagesPlugin::on_data(EngineContext& ctx, const PacketContext& p, Space space) {
  ++stats_.data_packets;
  Stream& s = stream(p.flow.id, p.point, space);
  const uint32_t psn = p.pkt.bth.psn;
  const uint64_t len = p.pkt.payload_len;
  MsgPosition pos = p.pkt.op->position;
  bool starts = pos == MsgPosition::kFirst || pos == MsgPosition::kOnly;
  if (pos == MsgPosition::kFirst || pos == MsgPosition::kMiddle) {
    uint32_t& mtu = mtu_[p.flow.id];
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
  // the answer to a re-issued READ REQUEST, and belongs to the message holding its PSN.
  Message* m = starts && !retrans ? nullptr : find(s, psn);
  if (!m && retrans) {
    for (const auto& [first, last] : s.finished)
      if (psn::in_range(psn, first, last)) {
        ++stats_.late_packets;  // a copy after its message was reported: flow counters only
        if (cfg_.frame_notes)
          ctx.sink.on_frame_note(FrameNote{p.frame, NoteKind::kMessage, 0, kMsgRetransmission});
        return;
      }
  }
  if (!m && starts && retrans) {
    // A FIRST just before a message seen without its start: that message's missing head.
    for (Message* next : s.messages) {
      if (psn::distance(psn, next->rec.first_psn) <= 0) continue;
      if (!next->has_first) {
        m = next;
        m->rec.first_psn = psn;
        m->has_first = true;
        claim_pending_naks(s, *m);
      }
      break;
    }
  }
  if (!m) {
    m = open_message(ctx, s, p, psn, starts);
    claim_pending_naks(s, *m);
  }
  if ((pos == MsgPosition::kLast || pos == MsgPosition::kOnly) && !m->has_last &&
      (pos == MsgPosition::kLast || m->rec.first_psn == psn)) {
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
    if (nak) {
      ++stats_.naks_unattributed;
      if (cfg_.frame_notes)
        ctx.sink.on_frame_note(FrameNote{p.frame, NoteKind::kNak, 0, p.pkt.aeth.syndrome});
    }
    return;
  }
  // The NAK/ACK names a PSN of the requests flowing the other way.
  Stream& s = stream(p.flow.peer, p.point, Space::kRequest);
  const uint32_t psn = p.pkt.bth.psn;
  if (!nak) {
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
    return;
  }
  ++period(p.flow.peer, p.point, p.ts, ctx).naks;
  Message* m = find(s, psn);
  if (m) {
    ++m->rec.naks;
  } else {
    if (s.pending_naks.size() >= kMaxPendingNaks) s.pending_naks.erase(s.pending_naks.begin());
    s.pending_naks.push_back(psn);
  }
  if (cfg_.frame_notes) {
    ctx.sink.on_frame_note(FrameNote{p.frame, NoteKind::kNak, m ? m->rec.id : 0, p.pkt.aeth.syndrome});
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
    auto [key, idx] = period_queue_.front();
    auto fpi = flow_points_.find(key);
    if (fpi == flow_points_.end() || !fpi->second.periods.count(idx)) {
      period_queue_.pop_front();
      continue;
    }
    FlowPoint& fp = fpi->second;
    TimeNs end = (idx + 1) * cfg_.period_ns;
    if (!all) {
      const Point& pt = ctx.points[fp.point];
      if (pt.watermark < end + cfg_.reorder_window_ns) break;
    }
    auto it = fp.periods.find(idx);
    ctx.sink.on_flow_period(it->second);
    fp.periods.erase(it);
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
  for (Ref r : open_)
    if (r.live()) finalize(ctx, *r.m);
  open_.clear();
  idle_.clear();
  acked_.clear();
  // Remaining periods in a stable order: flow, point, period.
  std::vector<std::pair<uint64_t, int64_t>> rest(period_queue_.begin(), period_queue_.end());
  std::sort(rest.begin(), rest.end());
  period_queue_.assign(rest.begin(), rest.end());
  emit_periods(ctx, true);
}

}  // namespace rdmatel::messages
