// SPDX-License-Identifier: GPL-2.0-or-later
#include "engine/metrics/messages/messages.h"

#include <algorithm>
#include <limits>
#include <tuple>

#include "engine/src/util/psn.h"

namespace rdmatel::messages {
namespace {

constexpr size_t kMaxPendingNaks = 256;  // per stream; older ones are dropped
constexpr uint64_t kMaxMtu = 4096;       // the largest InfiniBand path MTU
// NAKs and CNPs waiting for their queue pair to be paired, in all. Two queue pairs between the
// same hosts whose PSNs run side by side (NCCL starts every QP at PSN 0) stay unpaired while
// their echoes fit both: under heavy loss that is hundreds of NAKs (a probe: 813 NAKs, 3 points,
// 12 % loss; a limit of 64 per flow then lost 443 of them).
constexpr size_t kMaxUnpairedNaks = size_t(1) << 18;  // 32 bytes each
// Flows whose NAKs wait, up to which a flow period looks for its own before it is emitted.
constexpr size_t kScannedWaitingFlows = 64;
// Bounds against hostile or broken traffic: a flow and point keeps at most this many open
// periods (stamps jumping around) and open messages (SENDs nobody acknowledges); beyond them
// the oldest are reported early. Real queue pairs stay far below (send queues of a few
// thousand work requests at most).
constexpr size_t kMaxOpenPeriods = 64;
constexpr size_t kMaxOpenMessagesPerStream = 4096;
// Packets past a PSN gap remembered per open message, for moving them to the next message.
constexpr size_t kMaxBeyondGap = 256;

const SettingSpec kSettings[] = {
    {"message_timeout", SettingType::kDuration, "s", "1", 0.000001, 86400, "SECONDS",
     "An RDMA message no ACK covers is final after this long without packets at its point"},
    {"max_messages", SettingType::kCount, "", "1048576", 1, 1e9, "N",
     "Most RDMA messages open at once; beyond it the oldest are reported early"},
};
const RecordSchema* const kOutputs[] = {&kMessageSchema, &kFlowSchema};
const char* const kNotes[] = {"msg.packet", "msg.nak", "msg.nak_read"};

}  // namespace

const ComponentSpec kSpec = {"messages",
                             kPacketSend | kPacketWrite | kPacketReadRequest | kPacketReadResponse | kPacketAck |
                                 kPacketAtomicAck | kPacketCnp | kPacketPfc,
                             kOutputs,
                             kSettings,
                             kNotes,
                             {},
                             Sampled::kThroughput,
                             /*pair_local=*/true};

Messages::Messages(Ctx& ctx)
    : window_(ctx.reorder_window),
      message_timeout_(ctx.settings.duration("message_timeout")),
      period_ns_(std::max<DurationNs>(1, ctx.settings.duration("period"))),
      max_open_(std::max<uint64_t>(1, ctx.settings.count("max_messages"))),
      frame_notes_(ctx.frame_notes),
      note_packet_(note_kind("msg.packet")),
      note_nak_(note_kind("msg.nak")),
      note_nak_read_(note_kind("msg.nak_read")) {}

[[gnu::always_inline]] inline MessageRecord& Messages::record_of(const Ctx& ctx, const Message& m) {
  const MessageCounts& c = m.rec;
  MessageRecord& r = record_;
  if (const FlowPoint* fp = m.stream->owner; fp != record_owner_) [[unlikely]] {
    record_owner_ = fp;
    const FlowKey& key = ctx.flows[fp->flow].key;
    r.src = key.src;
    r.dst = key.dst;
    r.dst_qpn = key.dst_qpn;
    r.point = fp->point;
    r.gpu = GpuEnds{};
    bind_gpus(ctx.gpus, r.src, r.dst, r.gpu);
    r.key_flow = ctx.sampling.key_flow(r.src, r.dst);
  }
  r.id = c.id;
  r.kind = c.kind;
  r.with_immediate = c.with_immediate;
  r.complete = c.complete;
  r.provisional = c.provisional;
  r.merged_into = c.merged_into;
  r.first_psn = c.first_psn;
  r.last_psn = c.last_psn;
  r.first_ns = c.first_ns;
  r.last_ns = c.last_ns;
  r.first_frame = c.first_frame;
  r.last_frame = c.last_frame;
  r.packets = c.packets;
  r.retrans_packets = c.retrans_packets;
  r.bytes = c.bytes;
  r.retrans_bytes = c.retrans_bytes;
  r.naks = c.naks;
  r.poll_period_ns.reset();
  return r;
}

void Messages::emit_snapshot(Ctx& ctx, const Message& m) {
  MessageRecord& snap = record_of(ctx, m);
  snap.provisional = true;
  snap.complete = m.has_first && m.has_last &&
                  m.seen.distinct() == uint32_t(psn::distance(snap.first_psn, snap.last_psn)) + 1;
  ctx.emit(kMessageSchema, &snap, true);
}

FlowPoint& Messages::new_flow_point(FlowId flow, PointId point) {
  if (flow >= by_flow_.size()) by_flow_.resize(size_t(flow) + 1);
  queues(point);  // hot paths take them as queues_at()
  FlowPoint& fp = flow_points_.emplace_back();
  fp.flow = flow;
  fp.point = point;
  FlowPoints& f = by_flow_[flow];
  auto free = std::find(f.point.begin(), f.point.end(), kNoPoint);
  if (free != f.point.end()) {
    *free = point;
    f.at[size_t(free - f.point.begin())] = &fp;
  } else {
    ++f.more;
    more_[more_key(flow, point)] = &fp;
  }
  return fp;
}

Stream& Messages::new_stream(FlowPoint& fp, Space space) {
  Stream& s = streams_.emplace_back();
  s.flow = fp.flow;
  s.point = fp.point;
  s.owner = &fp;
  s.space = space;
  fp.streams[int(space)] = &s;
  return s;
}

FlowPeriodRecord& Messages::open_period(FlowPoint& fp, int64_t idx, Ctx& ctx) {
  // The period's stamps [idx, idx + 1) * period_ns_ for period(), when they fit in a TimeNs
  // (the end saturated: a stamp at the very end takes this way).
  TimeNs from, to;
  if (__builtin_mul_overflow(idx, period_ns_, &from)) {
    fp.last_from = 1, fp.last_to = 0;  // holds no stamp
  } else {
    fp.last_from = from;
    fp.last_to = __builtin_add_overflow(from, period_ns_, &to) ? std::numeric_limits<TimeNs>::max() : to;
  }
  auto it = fp.periods.find(idx);
  if (it != fp.periods.end()) return *(fp.last_record = &it->second);
  const FlowId flow = fp.flow;
  const PointId point = fp.point;
  if (fp.periods.size() >= kMaxOpenPeriods) {
    ctx.warn("open_periods", [] {
      return "timestamps jump between more than " + std::to_string(kMaxOpenPeriods) +
             " periods on one flow: the oldest periods are reported early";
    });
    auto oldest = fp.periods.begin();
    ctx.emit(kFlowSchema, &oldest->second);
    fp.periods.erase(oldest);
  }
  FlowPeriodRecord& r = fp.periods[idx];
  fp.last_record = &r;
  const Flow& f = ctx.flows[flow];
  r.src = f.key.src;
  r.dst = f.key.dst;
  bind_gpus(ctx.gpus, r.src, r.dst, r.gpu);
  r.key_flow = ctx.sampling.key_flow(r.src, r.dst);
  r.dst_qpn = f.key.dst_qpn;
  r.point = point;
  r.period_start_ns = idx * period_ns_;
  r.period_ns = period_ns_;
  queues_at(point).periods.push_back({&fp, idx});
  return r;
}

size_t Messages::locate_inside(const Stream& s, const Message* m) {
  const auto& v = s.messages;
  const size_t n = v.size();
  const uint32_t first = m->rec.first_psn;
  size_t lo = 0, hi = n;  // the first that does not start before `first`
  while (lo < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    if (psn::distance(v[mid].first_psn, first) > 0) lo = mid + 1;
    else hi = mid;
  }
  for (; lo < n && v[lo].first_psn == first; ++lo)
    if (v[lo].m == m) return lo;
  // Never expected: the order was broken somewhere.
  for (size_t i = 0; i < n; ++i)
    if (v[i].m == m) return i;
  return n;
}

Message* Messages::find_older(Stream& s, uint32_t psn) const {
  // The latest message starting at or before psn holds it, unless that one ended earlier (the
  // newest starts after psn). Resent packets: most often in the message the previous resend
  // went to.
  // (Closed ranges only: they are disjoint, so holding psn is proof.)
  if (s.hint && !s.hint->done && s.hint->stream == &s && s.hint->has_last && holds(*s.hint, psn)) return s.hint;
  // Messages are in PSN order, so "starts at or before psn" holds for a prefix of them: binary
  // search (go-back-N resends walk back over many messages).
  size_t lo = 0, hi = s.messages.size();
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (psn::distance(s.messages[mid].first_psn, psn) >= 0) lo = mid + 1;
    else hi = mid;
  }
  if (lo == 0) return nullptr;
  Message* m = s.messages[lo - 1].m;
  if (!holds(*m, psn)) return nullptr;
  s.hint = m;
  return m;
}

Message* Messages::open_message(Ctx& ctx, Stream& s, MessageKind kind, uint32_t first_psn, bool has_first) {
  if (open_count_ >= max_open_) {
    if (Message* oldest = oldest_open()) {
      ctx.warn("max_open_messages", [&] {
        return "more than " + std::to_string(max_open_) +
               " RDMA messages open at once: the oldest are reported early (limit max_messages)";
      });
      ++stats_.evicted;
      finalize(ctx, *oldest);
    }
  }
  if (s.messages.size() >= kMaxOpenMessagesPerStream) {
    ctx.warn("open_messages_per_flow", [] {
      return "more than " + std::to_string(kMaxOpenMessagesPerStream) +
             " RDMA messages open on one flow (never acknowledged): the oldest are reported early";
    });
    ++stats_.evicted;
    finalize(ctx, *s.messages.front().m);
  }
  Message* m;
  if (!free_.empty()) {
    m = free_.back();
    free_.pop_back();
    m->reset();
  } else {
    m = &pool_.emplace_back();
    m->slot = uint32_t(slots_.size());
    slots_.push_back(Slot{0, m});
  }
  m->rec.id = next_id_++;
  m->rec.kind = kind;
  m->rec.first_psn = first_psn;
  m->rec.last_psn = first_psn;
  m->contig_end = first_psn;
  m->has_first = has_first;
  m->stream = &s;
  // Keep the stream's messages in PSN order (a resent FIRST can come after later messages).
  size_t index = s.messages.size();
  while (index > 0 && psn::distance(first_psn, s.messages[index - 1].first_psn) > 0) --index;
  if (index == s.messages.size()) s.messages.push_back(OpenMessage{first_psn, m});
  else s.messages.insert(index, OpenMessage{first_psn, m});
  if (index < s.acked_count) s.acked_count = index;  // rescanned by the next ACK
  slots_[m->slot].open_id = m->rec.id;
  push_ref(queues_at(s.point).idle, ref(*m));
  ++open_count_;
  ++stats_.messages;
  return m;
}

// Counts `copies` of one PSN into a message (one packet as it arrives, or the copies another
// message kept past its gap): their earliest stamp and frame and their latest. In scalars, so
// that the packet's path builds a DataPacket only when it keeps one past the gap.
[[gnu::always_inline]] inline bool Messages::count_copies(Message& m, uint32_t psn, uint32_t len, TimeNs ts,
                                                          uint64_t frame, TimeNs last_ts, uint64_t last_frame,
                                                          uint32_t copies, uint32_t retrans_copies, bool last,
                                                          bool first) {
  MessageCounts& r = m.rec;
  bool dup = m.seen.mark(psn);
  if (r.packets == 0) {
    r.first_ns = ts;
    r.first_frame = frame;
    r.last_ns = last_ts;
    r.last_frame = last_frame;
  } else {
    if (ts < r.first_ns) {
      r.first_ns = ts;
      r.first_frame = frame;
    }
    if (last_ts >= r.last_ns) {
      r.last_ns = last_ts;
      r.last_frame = last_frame;
    }
  }
  r.packets += copies;
  r.bytes += uint64_t(len) * copies;
  if (retrans_copies) {
    r.retrans_packets += retrans_copies;
    r.retrans_bytes += uint64_t(len) * retrans_copies;
  }
  if (!m.has_last && psn::newer(psn, r.last_psn)) r.last_psn = psn;  // an open message's extent so far
  // Past a gap in its PSNs the packet may be the next message's (a LAST taken past a gap may
  // be the next message's too).
  bool beyond = false;
  if (!m.gapped) {
    if (psn == psn::add(m.contig_end, 1)) m.contig_end = psn;
    else if (psn::newer(psn, psn::add(m.contig_end, 1))) m.gapped = beyond = true;
  } else if (psn == psn::add(m.contig_end, 1)) {
    close_gap(m, psn);
  } else {
    beyond = psn::newer(psn, m.contig_end);
  }
  if (beyond) {
    const DataPacket d{psn, len, ts, frame, last_ts, last_frame, copies, retrans_copies, last, first};
    if (!m.beyond_folded && m.beyond.size() < kMaxBeyondGap) m.beyond.push_back(d);
    else keep_beyond(m, d);
  } else {
    m.widen_contig(ts, frame, last_ts, last_frame);
  }
  return dup;
}

namespace {
// Adds `d`'s copies to `into`, a kept entry of the same PSN and length: its earliest and latest
// copies by stamp as a message takes them (an equal stamp: the first kept stays first, the last
// given becomes last).
bool fold_copies(DataPacket& into, const DataPacket& d) {
  if (into.psn != d.psn || into.len != d.len || into.copies > std::numeric_limits<uint32_t>::max() - d.copies)
    return false;
  if (d.ts < into.ts) {
    into.ts = d.ts;
    into.frame = d.frame;
  }
  if (d.last_ts >= into.last_ts) {
    into.last_ts = d.last_ts;
    into.last_frame = d.last_frame;
  }
  into.copies += d.copies;
  into.retrans_copies += d.retrans_copies;
  into.last |= d.last;
  into.first |= d.first;
  return true;
}
}  // namespace

// Out of line: only a message whose gap stays open through hundreds of packets gets here.
// Its list is full, most often of the same PSNs resent by go-back-N round after round (seed
// 3669: 16 k copies of one message): folded, one entry per PSN, the packets of the next message
// that come past the gap still fit, and its FIRST takes them along. Without it they stayed
// counted in this one (a packet and its bytes too many here, too few there, and the next message
// incomplete). What a folded entry forgets is which frames its middle copies were: a front end
// annotating frames learns where its earliest and latest went.
[[gnu::noinline]] void Messages::keep_beyond(Message& m, const DataPacket& d) {
  if (!m.beyond_folded && m.beyond.size() < kMaxBeyondGap) {
    m.beyond.push_back(d);
    return;
  }
  if (!m.beyond_folded) {
    std::vector<DataPacket> folded;
    folded.reserve(m.beyond.size());
    for (const DataPacket& b : m.beyond) {
      bool joined = false;
      for (DataPacket& f : folded)
        if ((joined = fold_copies(f, b))) break;
      if (!joined) folded.push_back(b);
    }
    m.beyond.swap(folded);
    m.beyond_folded = true;
  }
  for (DataPacket& f : m.beyond)
    if (fold_copies(f, d)) return;
  if (m.beyond.size() < kMaxBeyondGap) m.beyond.push_back(d);
  else m.beyond_full = true;
}

// The packet at `psn` filled the gap after contig_end: the PSNs seen in a run from it are the
// message's own now, whoever's they seemed (stamp noise puts a message's MIDDLEs out of order by
// dozens: kept as past the gap until it closes, a long message's would overflow `beyond`, and
// the ones left out would stay counted in it when its LAST splits the next message's off).
void Messages::close_gap(Message& m, uint32_t psn) {
  const uint32_t end = m.seen.run_end(psn);
  m.contig_end = end;
  std::erase_if(m.beyond, [&](const DataPacket& b) {
    if (psn::newer(b.psn, end)) return false;
    m.widen_contig(b.ts, b.frame, b.last_ts, b.last_frame);
    return true;
  });
  m.gapped = !m.beyond.empty() || m.beyond_full;
}

void Messages::split_beyond(Ctx& ctx, Stream& s, Message& m, uint32_t from) {
  if (!m.gapped) return;
  bool any = false;
  uint32_t lowest = 0;
  for (const DataPacket& b : m.beyond)
    if (psn::distance(from, b.psn) >= 0 && (!any || psn::distance(b.psn, lowest) > 0)) {
      lowest = b.psn;
      any = true;
    }
  if (!any) return;
  Message* tail = open_message(ctx, s, m.rec.kind, lowest, false);
  move_beyond(ctx, m, *tail, from);
}

void Messages::move_beyond(Ctx& ctx, Message& from, Message& to, uint32_t boundary) {
  std::vector<DataPacket> keep;
  bool gave_first = false;  // the packet it gave away was its earliest
  for (const DataPacket& b : from.beyond) {
    if (psn::distance(boundary, b.psn) < 0) {
      keep.push_back(b);
      continue;
    }
    MessageCounts& r = from.rec;
    r.packets -= b.copies;
    r.bytes -= uint64_t(b.len) * b.copies;
    r.retrans_packets -= b.retrans_copies;
    r.retrans_bytes -= uint64_t(b.len) * b.retrans_copies;
    from.seen.unmark(b.psn);
    gave_first |= b.ts == r.first_ns && b.frame == r.first_frame;
    // The LAST it ended at, taken past its gap, was another message's (it has none of its own yet).
    if (b.last && from.has_last && from.rec.last_psn == b.psn) from.has_last = false;
    count_copies(to, b);
    if (b.last && !to.has_last) {  // the LAST it took closes the message it moves to
      to.has_last = true;
      to.rec.last_psn = b.psn;
    }
    // And the FIRST it took opens it: the next READ's first response, stamped before the LAST of
    // the READ before it, went past that one's gap; without this the message is never complete.
    if (b.first && b.psn == to.rec.first_psn) to.has_first = true;
    ctx.note(b.frame, note_packet_, to.rec.id, 0);  // where the packet went, for annotating front ends
    if (b.copies > 1) ctx.note(b.last_frame, note_packet_, to.rec.id, 0);
  }
  from.beyond = std::move(keep);
  // Its latest packet and extent without the packets it gave away.
  MessageCounts& r = from.rec;
  r.last_ns = from.contig_last_ns;
  r.last_frame = from.contig_last_frame;
  if (!from.has_last) r.last_psn = from.contig_end;
  for (const DataPacket& b : from.beyond) {
    if (b.last_ts >= r.last_ns) {
      r.last_ns = b.last_ts;
      r.last_frame = b.last_frame;
    }
    if (!from.has_last && psn::newer(b.psn, r.last_psn)) r.last_psn = b.psn;
  }
  if (gave_first) earliest_again(from);
}

// Under stamp noise the packet a message took past its gap, the next one's, may be stamped
// before the message's own FIRST (probe seed 126: the next message's MIDDLE, 34 ns before it);
// given away, it is not the message's first packet any more: the earliest of those it keeps is.
// (Those past its gap that did not fit in `beyond` are not known: as for its latest packet.)
void Messages::earliest_again(Message& m) {
  MessageCounts& r = m.rec;
  TimeNs first_ns = m.contig_first_ns;
  uint64_t first_frame = m.contig_first_frame;
  for (const DataPacket& b : m.beyond)
    if (b.ts < first_ns || (b.ts == first_ns && b.frame < first_frame)) {  // equal: as they passed
      first_ns = b.ts;
      first_frame = b.frame;
    }
  if (first_ns == kNoStamp) return;  // it gave every packet away
  r.first_ns = first_ns;
  r.first_frame = first_frame;
}

void Messages::absorb(Ctx& ctx, Message& into, Message& from) {
  MessageCounts& a = into.rec;
  const MessageCounts& b = from.rec;
  // The first and last packets by stamp (a message just opened has none yet).
  if (a.packets == 0 || b.first_ns < a.first_ns) {
    a.first_ns = b.first_ns;
    a.first_frame = b.first_frame;
  }
  if (a.packets == 0 || b.last_ns >= a.last_ns) {
    a.last_ns = b.last_ns;
    a.last_frame = b.last_frame;
  }
  a.packets += b.packets;
  a.retrans_packets += b.retrans_packets;
  a.bytes += b.bytes;
  a.retrans_bytes += b.retrans_bytes;
  a.naks += b.naks;
  a.with_immediate |= b.with_immediate;
  if (!into.gapped && !from.gapped && b.first_psn == psn::add(into.contig_end, 1)) into.contig_end = from.contig_end;
  else if (!into.gapped) into.gapped = true;
  for (const DataPacket& g : from.beyond) keep_beyond(into, g);
  into.beyond_full |= from.beyond_full;
  into.widen_contig(from.contig_first_ns, from.contig_first_frame, from.contig_last_ns, from.contig_last_frame);
  into.has_last = from.has_last;
  if (psn::newer(b.last_psn, a.last_psn)) a.last_psn = b.last_psn;
  from.seen.for_each([&](uint32_t psn) { into.seen.mark(psn); });
  if (from.acked && !into.acked) {
    into.acked = true;
    into.acked_at = from.acked_at;
    push_ref(queues_at(into.stream->point).acked, acked_ref(into));
  }
  // `from` disappears without a record of its own; annotating front ends learn where it went.
  if (frame_notes_) {
    MessageRecord& gone = record_of(ctx, from);
    gone.merged_into = a.id;
    ctx.emit(kMessageSchema, &gone, true);
  }
  Stream& s = *from.stream;
  if (const size_t at = locate(s, &from); at < s.messages.size()) {
    if (at < s.acked_count) --s.acked_count;
    s.messages.erase(at);
  }
  close(from);
  --open_count_;
  --stats_.messages;
  free_.push_back(&from);
  claim_pending_naks(s, into);
}

// Packets of a message stamped before the ones leading up to them at this point (reordered, or
// its FIRST resent after a loss before the point) opened messages without a FIRST just after it
// in PSN order. Such a message is the rest of `m` once `m` holds every PSN from its first up to
// that message's and no LAST among them (SENDs and WRITEs do not interleave, nor do one READ's
// responses): proof, where taking it earlier, across a gap, would be a guess (the message
// after the gap may be the next one's LAST, stamped before this one's LAST and both FIRSTs).
void Messages::absorb_following(Ctx& ctx, Stream& s, Message& m) {
  while (!m.has_last && s.messages.size() > 1 && s.messages.back().m != &m) {
    const size_t at = locate(s, &m);
    if (at + 1 >= s.messages.size()) return;
    Message* next = s.messages[at + 1].m;
    if (next->has_first || next->rec.kind != m.rec.kind ||
        m.seen.distinct() != uint32_t(psn::distance(m.rec.first_psn, next->rec.first_psn)))
      return;
    absorb(ctx, m, *next);
  }
}

void Messages::claim_waiting_naks(Stream& s, Message& m) {
  auto& pend = s.pending_naks;
  for (size_t i = 0; i < pend.size();) {
    if (holds(m, pend[i])) {
      ++m.rec.naks;
      pend.erase(pend.begin() + long(i));
    } else {
      ++i;
    }
  }
}

void Messages::on_packet(const Packet& p, Ctx& ctx) {
  if (p.is_pfc()) return on_pfc(p);
  const IbOpcodeInfo& op = *p.roce.op();
  if (op.op_class == IbOpClass::kCnp) return on_cnp(p, ctx);
  IbTransport t = op.transport;
  if (t != IbTransport::kRC && t != IbTransport::kXRC && t != IbTransport::kUC) return;
  switch (op.op_class) {
    case IbOpClass::kSend: on_data(p, ctx, op.position, MessageKind::kSend, Space::kRequest); break;
    case IbOpClass::kWrite: on_data(p, ctx, op.position, MessageKind::kWrite, Space::kRequest); break;
    case IbOpClass::kReadResponse:
      on_data(p, ctx, op.position, MessageKind::kReadResponse, Space::kResponse);
      break;
    case IbOpClass::kReadRequest: on_read_request(p, ctx); break;
    case IbOpClass::kAcknowledge:
    case IbOpClass::kAtomicAcknowledge: on_aeth(p, ctx); break;
    default: break;
  }
}

void Messages::on_pfc(const Packet& p) {
  uint8_t paused = 0;
  for (uint8_t prio = 0; prio < 8; ++prio)
    if ((p.roce.pfc.enabled >> prio & 1u) && p.roce.pfc.quanta[prio]) paused |= uint8_t(1u << prio);
  if (paused) queues(p.point).pauses.add(period_index(p.ts), paused);
}

void Messages::on_cnp(const Packet& p, Ctx& ctx) {
  // A CNP goes from the notification point (the data's receiver) to the sender's QP: it
  // travels on the reverse direction of the data flow's queue pair.
  if (p.flow == kNoFlow) return;
  const FlowId forward = ctx.flows[p.flow].peer;
  if (forward == kNoFlow) {
    keep_unpaired(p.flow, {p.point, 0, p.ts, p.frame, 0, true}, ctx);
    return;
  }
  ++period(forward, p.point, p.ts, ctx).cnps;
}

void Messages::on_read_request(const Packet& p, Ctx& ctx) {
  // A READ REQUEST takes one request PSN per response packet it asks for: the requester's next
  // PSN is psn + ceil(length / path MTU). Without the MTU, allow the next request to jump.
  FlowPoint& fp = flow_point(p.flow, p.point);
  Stream& s = stream(fp, Space::kRequest);
  const uint32_t psn = p.roce.bth.psn;
  const uint32_t len = p.roce.reth.dma_len;
  const uint32_t mtu = mtu_of(p.flow, peer_of(fp, ctx));
  const uint32_t last = ReadLog::last_psn(psn, len, mtu);
  // Remember the READ unless it lies inside one already known: then it is a copy, or a READ
  // re-issued for the rest after lost responses. (A copy of a READ this point first missed,
  // seen after later requests, is still new here.)
  s.reads.ranges_for(mtu);
  if (!s.reads.any_holds(psn)) s.reads.add(psn, len, p.frame);
  if (s.has_newest && !psn::newer(last, s.newest)) return;
  s.newest = last;
  s.has_newest = true;
  s.read_unsized = mtu == 0;
  s.unsized_psn = psn;
  s.unsized_len = len;
}

void Messages::size_unsized_read(Stream& s, FlowId flow, FlowId peer, uint32_t psn) {
  // The first FIRST or MIDDLE packet of a capture that starts mid-stream often comes just after
  // a READ REQUEST (an NVMe write's data is read, then the next read's data written): sized
  // now, the READ's PSNs are not a gap, and a jump beyond them is one, as with the MTU known.
  uint32_t mtu = mtu_of(flow, peer);
  if (!mtu) {
    // No packet has shown the MTU yet (single-packet messages only, so far). It is one of IB's
    // five, so the READ ends at one of five PSNs: the next request PSN after one of them is no
    // gap (and tells the MTU), one beyond the shortest span is a gap whatever the MTU.
    bool inside = true;
    for (uint32_t m = kMaxMtu; m >= 256 && !mtu; m /= 2) {
      const uint32_t last = ReadLog::last_psn(s.unsized_psn, s.unsized_len, m);
      if (psn == psn::add(last, 1)) mtu = m;
      if (m == kMaxMtu) inside = !psn::newer(psn, last);
    }
    if (!mtu && inside) return;  // within every span: not a request after the READ
    if (!mtu) mtu = kMaxMtu;
  }
  s.read_unsized = false;
  const uint32_t last = ReadLog::last_psn(s.unsized_psn, s.unsized_len, mtu);
  if (psn::newer(last, s.newest)) s.newest = last;
}

Stream* Messages::read_requests(FlowId flow, FlowId peer, PointId point) const {
  // READ RESPONSEs answer READ REQUESTs that went the other way, on the peer flow. The number
  // of responses is known once the path MTU is: compute it now, not when the READ was seen.
  if (peer == kNoFlow) return nullptr;
  FlowPoint* fp = find_flow_point(peer, point);
  Stream* req = fp ? fp->streams[int(Space::kRequest)] : nullptr;
  if (!req) return nullptr;
  uint32_t mtu = mtu_of(flow, peer);
  if (!mtu) return nullptr;
  req->reads.ranges_for(mtu);
  return req;
}

bool Messages::other_read(FlowId peer, const Packet& p, std::pair<uint32_t, uint32_t> read,
                          const Message& m) const {
  // No READ holds both the message's first PSN and the response's. (A READ re-issued for the
  // rest holds only the rest; the one it re-issues holds both.)
  const uint32_t first = m.rec.first_psn;
  if (psn::in_range(first, read.first, read.second)) return false;
  Stream* req = read_requests(p.flow, peer, p.point);
  if (!req || req->reads.one_holds_both(first, p.roce.bth.psn)) return false;
  // The message's own READ unseen (sent before the capture began): a READ whose first PSN lies
  // among the message's asks again for its rest, since a new READ's PSNs come after all of an
  // earlier one's.
  return req->reads.any_holds(first) || !m.has_last || !psn::in_range(read.first, first, m.rec.last_psn);
}

std::optional<std::pair<uint32_t, uint32_t>> Messages::read_range(FlowId peer, const Packet& p) const {
  Stream* req = read_requests(p.flow, peer, p.point);
  if (!req) return std::nullopt;
  const long r = req->reads.newest_holding(p.roce.bth.psn);
  if (r < 0) return std::nullopt;
  return std::make_pair(req->reads.first(r), req->reads.last(r));
}

uint32_t Messages::mtu_of(FlowId flow, FlowId peer) const {
  // FIRST and MIDDLE packets are exactly one path MTU long, in either direction of the QP;
  // before this QP showed one, the fabric's (the largest seen anywhere) is the best guess.
  uint32_t m = flow < mtu_.size() ? mtu_[flow] : 0;
  if (peer != kNoFlow && peer < mtu_.size()) m = std::max(m, mtu_[peer]);
  return m ? m : fabric_mtu_;
}

void Messages::on_data(const Packet& p, Ctx& ctx, MsgPosition pos, MessageKind kind, Space space) {
  ++stats_.data_packets;
  FlowPoint& owner = flow_point(p.flow, p.point);
  const FlowId peer = peer_of(owner, ctx);
  if (!unpaired_naks_.empty() && peer != kNoFlow) drain_unpaired_naks(ctx, ctx.flows[peer]);
  Stream& s = stream(owner, space);
  if (!owner.class_known) {
    // Its class at the point, from its first data packet (as congestion records it).
    owner.class_known = true;
    if (p.roce.vlan_tagged) owner.priority = p.roce.vlan_pcp;
  }
  const uint32_t psn = p.roce.bth.psn;
  const uint64_t len = p.roce.payload_len;
  bool starts = pos == MsgPosition::kFirst || pos == MsgPosition::kOnly;
  if (pos == MsgPosition::kFirst || pos == MsgPosition::kMiddle) {
    if (p.flow >= mtu_.size()) mtu_.resize(size_t(p.flow) + 1);
    uint32_t& mtu = mtu_[p.flow];
    if (len > mtu && len <= kMaxMtu) mtu = uint32_t(len);
    if (len > fabric_mtu_ && len <= kMaxMtu) fabric_mtu_ = uint32_t(len);
  }
  if (s.read_unsized) size_unsized_read(s, p.flow, peer, psn);
  bool retrans = s.has_newest && !psn::newer(psn, s.newest);
  // READ RESPONSE PSNs jump from one READ to the next (the requester's other requests sit in
  // between): a new response message skipping PSNs is not a loss.
  bool jump_ok = s.read_unsized || (space == Space::kResponse && starts);
  bool oos = s.has_newest && psn::newer(psn, s.newest) && psn != psn::add(s.newest, 1) && !jump_ok;
  if (!s.has_newest || psn::newer(psn, s.newest)) {
    s.newest = psn;
    s.has_newest = true;
    s.read_unsized = false;
  }
  FlowPeriodRecord& fp = period(owner, p.ts, ctx);
  ++fp.packets;
  fp.bytes += len;
  if (p.roce.ecn_ce()) ++fp.ce_packets;
  if (retrans) {
    ++fp.retrans_packets;
    fp.retrans_bytes += len;
  }
  if (oos) ++fp.oos_packets;

  // A FIRST/ONLY newer than anything seen starts a new message; an older one is a copy or
  // the answer to a re-issued READ REQUEST, and belongs to the message holding its PSN. So
  // does a response starting inside a READ's range (the rest of a READ re-issued after loss).
  std::optional<std::pair<uint32_t, uint32_t>> read;
  if (space == Space::kResponse) read = read_range(peer, p);
  bool continuation = read && psn != read->first;
  Message* m = starts && !retrans && !continuation ? nullptr : find(s, psn);
  // A request FIRST/ONLY always starts its own message (a message open before it, whose LAST
  // this point missed, ends just before it).
  Message* truncated = nullptr;
  if (starts && space == Space::kRequest && m && m->rec.first_psn != psn) {
    truncated = m;
    m = nullptr;
  }
  // SENDs and WRITEs do not interleave: a packet of the other kind is not part of an open
  // message whose LAST this point missed.
  if (m && m->rec.kind != kind) m = nullptr;
  // Nor is a response of another READ (the next READ's LAST, its FIRST and this one's LAST lost
  // before the point).
  if (m && read && other_read(peer, p, *read, *m)) m = nullptr;
  if (!m && retrans && s.finished.holds(psn)) {
    ++stats_.late_packets;  // a copy after its message was reported: flow counters only
    ctx.note(p.frame, note_packet_, 0, kMsgRetransmission);
    return;
  }
  if (m && !m->has_first) {
    // A message seen without its FIRST (lost before this point) whose head has now been
    // resent as a message of its own: the two are one message. (Not responses of two READs;
    // nor where a PSN between them is still unseen: it may be the FIRST of a message between,
    // as when a SEND's LAST and the next SEND's FIRST were lost and the LAST after them was
    // stamped first.)
    if (const size_t at = locate(s, m); at != 0) {
      Message* prev = s.messages[at - 1].m;
      if (prev->has_first && !prev->has_last && prev->rec.kind == m->rec.kind &&
          psn::add(prev->contig_end, 1) == m->rec.first_psn &&
          (!read || !other_read(peer, p, *read, *prev))) {
        absorb(ctx, *prev, *m);
        m = prev;
      }
    }
  }
  if (!m) {
    m = open_message(ctx, s, kind, psn, starts);
    claim_pending_naks(s, *m);
    // Packets the message before took past a gap in its PSNs, from this FIRST on, are this one's;
    // or, after an ONLY or when of the other kind (a SEND after a WRITE), a later message's:
    // moved into this one they would make an ONLY end at their LAST, or leave a tail of the
    // wrong kind, which the rest of their message (its FIRST, its MIDDLEs) never joins.
    if (truncated && truncated->gapped) {
      if (truncated->rec.kind == m->rec.kind && pos != MsgPosition::kOnly) move_beyond(ctx, *truncated, *m, psn);
      else split_beyond(ctx, s, *truncated, psn);
    }
  }
  if ((pos == MsgPosition::kLast || pos == MsgPosition::kOnly) && !m->has_last &&
      (pos == MsgPosition::kLast || m->rec.first_psn == psn || (read && psn == read->second))) {
    m->rec.last_psn = psn;
    m->has_last = true;
    claim_pending_naks(s, *m);
    split_after_last(ctx, s, *m);
  } else if (pos == MsgPosition::kLast && m->has_last && m->gapped && psn::newer(m->rec.last_psn, psn)) {
    // A second LAST before the one it took past a gap: the message ends here, and that other
    // LAST closes the next message.
    m->rec.last_psn = psn;
    split_after_last(ctx, s, *m);
  }
  if (p.roce.has(kExtImmDt)) m->rec.with_immediate = true;

  MessageCounts& r = m->rec;
  bool dup = count_packet(*m, psn, uint32_t(len), p.ts, p.frame, retrans, pos == MsgPosition::kLast, starts);
  absorb_covered(ctx, s, *m);

  if (frame_notes_) {
    uint32_t flags = (retrans ? kMsgRetransmission : 0) | (dup ? kMsgDuplicate : 0) | (oos ? kMsgOutOfSequence : 0);
    if (flags || pos == MsgPosition::kLast || pos == MsgPosition::kOnly) {
      ctx.note(p.frame, note_packet_, r.id, flags);
      if (ctx.packet_shown_now) emit_snapshot(ctx, *m);
    }
  }
}

void Messages::on_aeth(const Packet& p, Ctx& ctx) {
  AethKind k = aeth_kind(p.roce.aeth.syndrome);
  if (k != AethKind::kAck && k != AethKind::kNak) return;
  bool nak = k == AethKind::kNak;
  if (nak) ++stats_.naks;
  FlowPoint& own = flow_point(p.flow, p.point);
  const FlowId peer = peer_of(own, ctx);
  if (peer == kNoFlow) {
    // Not paired yet (e.g. the first packets of the flow were the lost ones): keep the NAK
    // until an ACK or a response pairs the two directions.
    if (nak) keep_unpaired(p.flow, {p.point, p.roce.bth.psn, p.ts, p.frame, p.roce.aeth.syndrome}, ctx);
    return;
  }
  if (!unpaired_naks_.empty()) drain_unpaired_naks(ctx, ctx.flows[p.flow]);
  if (nak) {
    count_nak(ctx, peer, p.point, p.roce.bth.psn, p.ts, p.frame, p.roce.aeth.syndrome);
    return;
  }
  // The ACK names a PSN of the requests flowing the other way.
  if (!own.acked_stream) own.acked_stream = &stream(peer, p.point, Space::kRequest);
  Stream& s = *own.acked_stream;
  const uint32_t psn = p.roce.bth.psn;
  if (!s.has_acked || psn::newer(psn, s.acked)) {
    s.acked = psn;
    s.has_acked = true;
  }
  // ACKs cover a prefix of the PSN-ordered messages: only the unacked front is examined.
  while (s.acked_count < s.messages.size()) {
    Message* m = s.messages[s.acked_count].m;
    if (!m->has_last || psn::newer(m->rec.last_psn, s.acked)) break;
    if (!m->acked) {
      m->acked = true;
      m->acked_at = p.ts;
      push_ref(queues_at(p.point).acked, acked_ref(*m));
    }
    ++s.acked_count;
  }
}

void Messages::keep_unpaired(FlowId flow, const UnpairedNak& n, Ctx& ctx) {
  if (unpaired_count_ >= kMaxUnpairedNaks) {
    if (!n.cnp) {
      ++stats_.naks_unattributed;
      ctx.note(n.frame, note_nak_, 0, n.syndrome);
    }
    ctx.warn("unpaired_naks", [] {
      return "more than " + std::to_string(kMaxUnpairedNaks) +
             " NAKs and CNPs wait for the two directions of their queue pairs to be told apart: further ones "
             "are not counted in their flows' periods and messages";
    });
    return;
  }
  Waiting& w = unpaired_naks_[flow];
  if (w.naks.empty() || n.ts < w.oldest) w.oldest = n.ts;
  w.naks.push_back(n);
  ++unpaired_count_;
}

void Messages::drain_unpaired_naks(Ctx& ctx, const Flow& nak_flow) {
  if (nak_flow.peer == kNoFlow) return;
  auto it = unpaired_naks_.find(nak_flow.id);
  if (it == unpaired_naks_.end()) return;
  std::vector<UnpairedNak> list = std::move(it->second.naks);
  unpaired_naks_.erase(it);
  unpaired_count_ -= list.size();
  for (const UnpairedNak& n : list) {
    if (n.cnp) ++period(nak_flow.peer, n.point, n.ts, ctx).cnps;
    else count_nak(ctx, nak_flow.peer, n.point, n.psn, n.ts, n.frame, n.syndrome);
  }
}

void Messages::count_nak(Ctx& ctx, FlowId forward, PointId point, uint32_t psn, TimeNs ts, uint64_t frame,
                         uint8_t syndrome) {
  Stream& s = stream(forward, point, Space::kRequest);
  ++period(forward, point, ts, ctx).naks;
  Message* m = find(s, psn);
  if (m) {
    ++m->rec.naks;
    ctx.note(frame, note_nak_, m->rec.id, syndrome);
    if (ctx.packet_shown_now) emit_snapshot(ctx, *m);
    return;
  }
  // A READ REQUEST takes request PSNs too: a NAK naming one (the responder refused the READ,
  // or expected an earlier PSN) belongs to no message but to that READ REQUEST.
  s.reads.ranges_for(mtu_of(forward, ctx.flows[forward].peer));
  if (const long r = s.reads.newest_holding(psn); r >= 0) {
    ++stats_.naks_on_reads;
    ctx.note(frame, note_nak_read_, s.reads.frame(r), syndrome);
    return;
  }
  if (s.pending_naks.size() >= kMaxPendingNaks) s.pending_naks.erase(s.pending_naks.begin());
  s.pending_naks.push_back(psn);
  ctx.note(frame, note_nak_, 0, syndrome);
}

Message* Messages::oldest_open() {
  while (by_age_next_ < by_age_.size() && !live(by_age_[by_age_next_])) ++by_age_next_;
  if (by_age_next_ == by_age_.size()) {
    by_age_ = open_by_age();
    by_age_next_ = 0;
    if (by_age_.empty()) return nullptr;
  }
  return &message(by_age_[by_age_next_++]);
}

std::vector<Messages::Ref> Messages::open_by_age() const {
  std::vector<Ref> open;
  open.reserve(open_count_);
  for (size_t i = 0; i < slots_.size(); ++i)
    if (const uint64_t id = slots_[i].open_id) open.push_back(Ref{uint32_t(i), uint32_t(id), uint32_t(id >> 32)});
  std::sort(open.begin(), open.end(), [](const Ref& a, const Ref& b) { return a.id() < b.id(); });
  return open;
}

void Messages::finalize(Ctx& ctx, Message& m) {
  if (m.done) return;
  close(m);
  MessageCounts& r = m.rec;
  r.provisional = false;
  r.complete = m.has_first && m.has_last &&
               m.seen.distinct() == uint32_t(psn::distance(r.first_psn, r.last_psn)) + 1;
  MessageRecord& out = record_of(ctx, m);
  if (ctx.sampling.polling()) out.poll_period_ns = ctx.sampling.period_start(r.first_ns);
  ctx.emit(kMessageSchema, &out);
  Stream& s = *m.stream;
  if (const size_t at = locate(s, &m); at < s.messages.size()) {
    if (at < s.acked_count) --s.acked_count;
    s.messages.erase(at);
  }
  // (Not when the capture ended: no packet comes to be told late, and finishing every open
  // message of a million flows would give each stream its 512 bytes of ranges only then.)
  if (m.has_first && m.has_last && !capture_ended_) s.finished.add(r.first_psn, r.last_psn);
  --open_count_;
  free_.push_back(&m);
}

void Messages::emit_periods(Ctx& ctx, PointId point, bool all) {
  auto& q = queues(point).periods;
  const TimeNs horizon = ctx.points[point].horizon;
  while (!q.empty()) {
    auto [fp, idx] = q.front();
    auto it = fp->periods.find(idx);
    if (it == fp->periods.end()) {
      q.pop_front();
      continue;
    }
    TimeNs end = (idx + 1) * period_ns_;
    if (!all && horizon < end) break;  // every packet of the period handled at its point
    if (!all && !unpaired_naks_.empty() && awaits_unpaired_naks(*fp, end, horizon, ctx)) break;
    it->second.pfc_pauses = queues(point).pauses.in(idx, fp->priority);
    ctx.emit(kFlowSchema, &it->second);
    if (fp->last_record == &it->second) fp->last_record = nullptr;
    fp->periods.erase(it);
    q.pop_front();
  }
}

bool Messages::awaits_unpaired_naks(const FlowPoint& fp, TimeNs end, TimeNs horizon, Ctx& ctx) {
  const Flow& forward = ctx.flows[fp.flow];
  if (forward.peer != kNoFlow) {
    // Paired since, with no packet to count them on yet (on_data, on_aeth): counted now.
    drain_unpaired_naks(ctx, ctx.flows[forward.peer]);
    return false;
  }
  // Not forever: NAKs still unpaired a message timeout after the period may never be.
  if (horizon > end + message_timeout_) return false;
  // Many waiting: held without looking (a scan per period would be quadratic on hostile input).
  if (unpaired_naks_.size() > kScannedWaitingFlows) return true;
  for (const auto& [flow, w] : unpaired_naks_) {
    const Flow& back = ctx.flows[flow];
    if (back.peer == kNoFlow && back.key.src == forward.key.dst && back.key.dst == forward.key.src &&
        w.oldest < end)
      return true;  // at this point or another: held a little longer at worst
  }
  return false;
}

void Messages::on_advance(PointId point, Ctx& ctx) {
  if (point >= points_.size()) return;
  PointQueues& q = points_[point];
  const TimeNs horizon = ctx.points[point].horizon;
  // Acknowledged: nothing more can come once the reorder window has passed the ACK.
  while (!q.acked.empty()) {
    const AckedRef a = q.acked.front();
    if (!live(a.ref)) {
      q.acked.pop_front();
      continue;
    }
    if (horizon <= a.acked_at() + window_) break;
    if (q.acked.size() > kPrefetchAhead) prefetch(q.acked[kPrefetchAhead].ref);
    q.acked.pop_front();
    finalize(ctx, message(a.ref));
  }
  // Idle: no packet for the message timeout. A message touched since it was queued goes back
  // in the queue with its new deadline, so one busy message never holds the others back.
  for (size_t budget = q.idle.size(); budget > 0 && !q.idle.empty(); --budget) {
    Ref r = q.idle.front();
    if (!live(r)) {
      q.idle.pop_front();
      continue;
    }
    Message& m = message(r);
    if (horizon > m.rec.last_ns + message_timeout_) {
      if (q.idle.size() > kPrefetchAhead) prefetch(q.idle[kPrefetchAhead]);
      q.idle.pop_front();
      finalize(ctx, m);
      continue;
    }
    if (m.rec.last_ns != m.queued_last) {
      q.idle.pop_front();
      m.queued_last = m.rec.last_ns;
      q.idle.push_back(r);
      continue;
    }
    break;
  }
  emit_periods(ctx, point, false);
}

void Messages::finish(Ctx& ctx) {
  // NAKs and CNPs whose flows got paired after them, with no packet since to count them on (a
  // CNP at the start of the capture, its flow's last packet before the ACK that paired it).
  std::vector<FlowId> paired;
  for (const auto& [flow, w] : unpaired_naks_)
    if (ctx.flows[flow].peer != kNoFlow) paired.push_back(flow);
  std::sort(paired.begin(), paired.end());  // the map's order is not stable
  for (FlowId f : paired) drain_unpaired_naks(ctx, ctx.flows[f]);
  // NAKs whose flows never got paired: noted on their frames, counted nowhere else.
  // (CNPs of such flows are counted by the congestion component only.)
  for (auto& [flow, w] : unpaired_naks_)
    for (const UnpairedNak& n : w.naks) {
      if (n.cnp) continue;
      ++stats_.naks_unattributed;
      ctx.note(n.frame, note_nak_, 0, n.syndrome);
    }
  unpaired_naks_.clear();
  unpaired_count_ = 0;
  capture_ended_ = true;
  for (const Ref& r : open_by_age()) finalize(ctx, message(r));
  by_age_.clear();
  // Remaining periods in a stable order: flow, point, period.
  std::vector<OpenPeriod> rest;
  for (PointQueues& q : points_)
    for (size_t i = 0; i < q.periods.size(); ++i) rest.push_back(q.periods[i]);
  std::sort(rest.begin(), rest.end(), [](const OpenPeriod& a, const OpenPeriod& b) {
    return std::tie(a.fp->flow, a.fp->point, a.idx) < std::tie(b.fp->flow, b.fp->point, b.idx);
  });
  for (auto [fp, idx] : rest) {
    auto it = fp->periods.find(idx);
    if (it == fp->periods.end()) continue;
    it->second.pfc_pauses = points_[fp->point].pauses.in(idx, fp->priority);
    ctx.emit(kFlowSchema, &it->second);
    fp->periods.erase(it);
  }
  points_.clear();
}

}  // namespace rdmatel::messages
