// SPDX-License-Identifier: GPL-2.0-or-later
// io_quality: matching each point's packets to I/Os (see io_quality.h).
#include "engine/metrics/io_quality/io_quality.h"

#include <algorithm>
#include <memory>

namespace rdmatel::io_quality {
namespace {

// Packets a point saw before another point matched them to an I/O are kept this many at most.
constexpr size_t kMaxPending = 4096;
// At the limit on I/Os, how many of the oldest are looked through for one that never completed.
constexpr size_t kEvictionScan = 256;
// The General Services Interface QP: RDMA CM's connection datagrams, never an NVMe queue.
constexpr uint32_t kGsiQpn = 1;

bool reliable(const Packet& p) {
  return p.roce.op()->transport == IbTransport::kRC || p.roce.op()->transport == IbTransport::kXRC;
}

const SettingSpec kSettings[] = {
    {"io_timeout", SettingType::kDuration, "s", "10", 0.000001, 86400, "SECONDS",
     "An NVMe I/O whose completion has not come this long after its command is reported incomplete"},
    {"max_ios", SettingType::kCount, "", "1048576", 1, 1e9, "N",
     "Most NVMe I/Os tracked at once; beyond it the oldest are reported early"},
    {"point_local", SettingType::kFlag, "", "off", 0, 1, "",
     "Also report what each observation point saw of each I/O (records io_points, for joining agents' "
     "observations at scale)", true, false},
};
const RecordSchema* const kOutputs[] = {&kIoSchema, &kIoPointSchema};
const char* const kNotes[] = {"io.command",    "io.data",        "io.read_request", "io.read_response",
                              "io.completion", "io.unparseable", "io.orphan"};

}  // namespace

const ComponentSpec kSpec = {"io_quality", kPacketSend | kPacketWrite | kPacketReadRequest | kPacketReadResponse,
                             kOutputs,   kSettings,
                             kNotes,     {},
                             Sampled::kIo};

IoQuality::IoQuality(Ctx& ctx)
    : io_timeout_(ctx.settings.duration("io_timeout")),
      max_ios_(std::max<uint64_t>(1, ctx.settings.count("max_ios"))),
      point_local_(ctx.settings.flag("point_local")) {
  for (int s = 0; s < kStages; ++s) note_stage_[s] = note_kind(kNotes[s]);
  note_unparseable_ = note_kind("io.unparseable");
  note_orphan_ = note_kind("io.orphan");
}

void IoQuality::on_packet(const Packet& p, Ctx& ctx) {
  if (!reliable(p)) return;
  if (!held_.empty()) [[unlikely]]
    return on_packet_holding(p, ctx);
  dispatch(p, ctx);
}

void IoQuality::on_packet_holding(const Packet& p, Ctx& ctx) {
  // Held completions are tried at every packet that comes here (middles of messages too), as
  // soon as it is worth it: when they are tried is part of what they are matched to.
  if (held_worth_retrying(ctx)) retry_held(ctx, false);
  dispatch(p, ctx);
}

inline void IoQuality::dispatch(const Packet& p, Ctx& ctx) {
  const MsgPosition pos = p.roce.op()->position;
  const bool starts = pos == MsgPosition::kFirst || pos == MsgPosition::kOnly;
  switch (p.roce.op()->op_class) {
    case IbOpClass::kSend:
      if (p.capsule.kind == CapsuleKind::kCommand) on_command(p, ctx);
      else if (p.capsule.kind == CapsuleKind::kCompletion) on_completion(p, ctx);
      else if (p.capsule.kind == CapsuleKind::kOther) on_other_send(p, ctx);
      break;
    case IbOpClass::kWrite:
      if (starts && !by_key_.empty()) on_keyed(p, kData, ctx);
      break;
    case IbOpClass::kReadRequest:
      if (!by_key_.empty()) on_keyed(p, kReadRequest, ctx);
      break;
    case IbOpClass::kReadResponse:
      if (starts && !by_packet_.empty()) on_read_response(p, ctx);
      break;
    default:
      break;
  }
}

uint32_t IoQuality::pair_toward_host(FlowId flow, const Ctx& ctx) {
  if (flow >= pair_toward_host_.size()) pair_toward_host_.resize(size_t(flow) + 1);
  FlowPair& fp = pair_toward_host_[flow];
  // Pairs are never forgotten: a flow that had none is looked up again only once there are more.
  if (fp.pair == kNoPair && fp.pairs_known != pair_ids_.size()) {
    const FlowKey& key = ctx.flows[flow].key;
    if (const uint32_t* id = pair_ids_.find(IpPair{key.dst, key.src})) fp.pair = *id;
    fp.pairs_known = uint32_t(pair_ids_.size());
  }
  return fp.pair;
}

uint32_t IoQuality::add_queue(const Flow& flow) {
  Queue& q = queues_.emplace_back();
  q.cmd_flow = flow.id;
  q.host = flow.key.src;
  q.storage = flow.key.dst;
  q.qpn = flow.key.dst_qpn;
  const IpPair pair{q.host, q.storage};
  if (const uint32_t* known = pair_ids_.find(pair)) {
    q.pair = *known;
  } else {
    q.pair = uint32_t(pair_ids_.size());
    pair_ids_[pair] = q.pair;
  }
  if (flow.id >= queue_of_flow_.size()) queue_of_flow_.resize(size_t(flow.id) + 1, 0);
  queue_of_flow_[flow.id] = uint32_t(queues_.size());
  return uint32_t(queues_.size() - 1);
}

void IoQuality::on_other_send(const Packet& p, Ctx& ctx) {
  // A SEND on an NVMe queue pair that is neither an SQE nor a CQE.
  const Flow& flow = ctx.flows[p.flow];
  bool cmd_side = has_queue(p.flow);
  bool cpl_side = flow.peer != kNoFlow && has_queue(flow.peer);
  if (!cmd_side && !cpl_side) return;
  ++stats_.unparseable_capsules;
  ctx.note(p.frame, note_unparseable_, 0, cmd_side ? 0 : 1);
}

EntryRef IoQuality::create(const Packet& p, uint32_t queue, Ctx& ctx) {
  if (live_ >= max_ios_) {
    // Bounded state: the oldest I/O still in flight is reported now, as far as it got. One that
    // has completed (waiting for other points' copies) is spared while a nearby older one has
    // not: those are the ones that never end.
    while (!all_created_.empty() && !get(all_created_.front())) all_created_.pop_front();
    if (!all_created_.empty()) {
      ctx.warn("max_outstanding_ios", [&] {
        return "more than " + std::to_string(max_ios_) +
               " NVMe I/Os in flight: the oldest are reported early (limit max_ios)";
      });
      ++stats_.evicted;
      size_t pick = 0;
      for (size_t i = 0; i < all_created_.size() && i < kEvictionScan; ++i)
        if (Entry* e = get(all_created_[i]); e && !e->completed) {
          pick = i;
          break;
        }
      EntryRef victim = all_created_[pick];
      all_created_.erase(all_created_.begin() + long(pick));
      if (const Entry* v = get(victim)) mark_changed(v->home);  // its place in the queues frees
      finalize(victim, IoEnd::kEvicted, ctx);
    }
  }
  uint32_t slot;
  if (!free_.empty()) {
    slot = free_.back();
    free_.pop_back();
  } else {
    slot = uint32_t(entries_.size());
    entries_.emplace_back();
  }
  Entry& e = entries_[slot];
  std::destroy_at(&e);  // made anew in place (no blank entry built aside and copied in)
  std::construct_at(&e);
  e.id = next_id_++;
  e.slot = slot;
  const CapsuleSummary& sqe = p.capsule;
  e.queue = queue;
  e.cid = sqe.cid;
  e.cmd_psn = p.roce.bth.psn;
  e.opcode = sqe.opcode;
  e.fctype = sqe.fctype;
  e.in_capsule = sqe.in_capsule;
  e.length = sqe.sgl_len;
  e.key_count = p.capsule.key_count;
  std::copy(p.capsule.keys, p.capsule.keys + e.key_count, e.keys.begin());
  e.home = p.point;
  e.home_command = p.ts;
  ++live_;
  ++stats_.commands;
  EntryRef ref{slot, e.id};
  by_command_[CommandKey{queue, e.cid, e.cmd_psn}] = ref;
  const Queue& q = queues_[queue];
  for (uint8_t i = 0; i < e.key_count; ++i)
    if (e.key_index(e.keys[i]) == i)
      list_append(by_key_[buffer_key(q.pair, e.keys[i])], slot, key_link(e.keys[i]));
  if (p.point >= homes_.size()) homes_.resize(size_t(p.point) + 1);
  homes_[p.point].created.push_back(ref);
  mark_changed(p.point);
  all_created_.push_back(ref);
  return ref;
}

void IoQuality::note_stage(Entry& e, Stage stage, const Packet& p, bool copy, Ctx& ctx) {
  ctx.note(p.frame, note_stage_[stage], e.id, copy ? 1 : 0);
  // The Wireshark plugin's first pass shows each frame with what is known at that frame: a
  // snapshot at each stage's first packet, or at a copy if the I/O has none yet. Only where the
  // frame is shown as it is pushed (Ctx::packet_shown_now): otherwise the final record is there
  // before anything shows the frame.
  if (ctx.packet_shown_now && (!copy || !e.snapshot_made)) {
    IoRecord r = build(e, IoEnd::kCaptureEnd, true, false, ctx);
    ctx.emit(kIoSchema, &r, true);
    e.snapshot_made = true;
  }
}

inline bool IoQuality::stamp(Entry& e, Stage stage, const Packet& p, Ctx& ctx) {
  Observation& o = e.observe(p.point, p.ts);
  if (e.obs.size() > Entry::kUnindexedObservations && e.latest_version == ctx.clock.version())
    e.latest_related = std::max(e.latest_related, in_home_clock(e, p.point, p.ts, ctx));
  const bool first = !o.has(stage);
  if (first) {
    o.mask |= uint8_t(1u << stage);
    o.ts[stage] = p.ts;
    o.frame[stage] = p.frame;
    o.psn[stage] = p.roce.bth.psn;
    if (stage == kCommand) {
      o.ttl_command = p.roce.ttl;
      SmallVector<PointId, 4>& seen = queues_[e.queue].command_points;
      if (seen.size() < Queue::kMaxCommandPoints && std::find(seen.begin(), seen.end(), p.point) == seen.end())
        seen.push_back(p.point);
    }
    if (stage == kCompletion) o.ttl_completion = p.roce.ttl;
  }
  if (ctx.frame_notes) [[unlikely]]
    note_stage(e, stage, p, !first, ctx);
  return first;
}

void IoQuality::remember_stage(Entry& e, Stage stage, FlowId flow, uint32_t psn, Ctx& ctx) {
  if (e.stage_psn_mask & (1u << stage)) return;
  e.stage_psn[stage] = psn;
  e.stage_flow[stage] = flow;
  e.stage_psn_mask |= uint8_t(1u << stage);
  uint64_t key = packet_key(flow, psn, stage);
  by_packet_[key] = ref_of(e);
  // Copies seen earlier at points that missed the command.
  if (pending_.empty()) return;
  auto it = pending_.find(key);
  if (it == pending_.end()) return;
  std::vector<Pending> waiting = std::move(it->second);
  pending_.erase(it);
  for (const Pending& w : waiting) {
    Packet p;
    p.point = w.point;
    p.ts = w.ts;
    p.frame = w.frame;
    p.roce.bth.psn = w.psn;
    p.roce.ttl = uint8_t(w.ttl);
    ++stats_.attached;
    stamp(e, w.stage, p, ctx);
  }
}

bool IoQuality::seen_unmatched_here(const Packet& p, Stage stage) const {
  if (pending_.empty()) return false;
  auto it = pending_.find(packet_key(p.flow, p.roce.bth.psn, stage));
  if (it == pending_.end()) return false;
  for (const Pending& w : it->second)
    if (w.point == p.point) return true;
  return false;
}

bool IoQuality::attach_by_identity(const Packet& p, Stage stage, Ctx& ctx) {
  uint64_t key = packet_key(p.flow, p.roce.bth.psn, stage);
  if (const EntryRef* r = by_packet_.find(key)) {
    if (Entry* e = get(*r)) {
      ++stats_.attached;
      stamp(*e, stage, p, ctx);
      return true;
    }
  }
  // Not matched anywhere yet: wait (bounded) for another point to match it.
  auto& list = pending_[key];
  if (list.empty()) pending_order_.push_back(key);
  if (list.size() < 8) list.push_back(Pending{p.point, stage, p.ts, p.frame, p.roce.bth.psn, p.roce.ttl});
  while (pending_order_.size() > kMaxPending) {
    pending_.erase(pending_order_.front());
    pending_order_.pop_front();
  }
  return false;
}

void IoQuality::join_cid_list(Entry& e, Observation& o) {
  o.in_cid_list = true;
  o.cid_order = ++cid_order_;
  if (e.cid_lists++ == 0) list_append(queues_[e.queue].open[e.cid], e.slot, open_link());
}

Entry* IoQuality::answered_command(const SlotList& open, const Packet& p) {
  // This point's list of the CID (its I/Os there whose command the point saw and whose completion
  // it has not): NVMe reuses a CID only once its command has completed, so the completion answers
  // the newest command the point saw before it. An older one still listed had its completion
  // missed here (a capture's drop, a mirror's): taken for the oldest, every later completion of
  // the CID ended its predecessor's I/O (IOL1 in milliseconds for microseconds, a network
  // blamed). None before it (stamps that step back): the oldest.
  Entry* newest = nullptr;
  Entry* oldest = nullptr;
  uint64_t newest_order = 0, oldest_order = 0;
  for (uint32_t slot = open.head; slot != kNoSlot; slot = entry_in(slot).open_link.next) {
    Entry& e = entry_in(slot);
    const Observation* o = e.at(p.point);
    if (!o || !o->in_cid_list) continue;
    if (!oldest || o->cid_order < oldest_order) {
      oldest = &e;
      oldest_order = o->cid_order;
    }
    if (o->ts[kCommand] <= p.ts && (!newest || o->cid_order > newest_order)) {
      newest = &e;
      newest_order = o->cid_order;
    }
  }
  return newest ? newest : oldest;
}

void IoQuality::leave_missed_completions(Queue& q, const Entry& answered, PointId point) {
  const SlotList* open = q.open.find(answered.cid);
  if (!open) return;
  const uint64_t order = answered.at(point)->cid_order;
  SmallVector<uint32_t, 4> missed;
  for (uint32_t slot = open->head; slot != kNoSlot; slot = entry_in(slot).open_link.next)
    if (const Observation* o = entry_in(slot).at(point); o && o->in_cid_list && o->cid_order < order)
      missed.push_back(slot);
  for (uint32_t slot : missed) leave_cid_list(entry_in(slot), point);
  stats_.missed_completions += missed.size();
}

void IoQuality::leave_cid_list(Entry& e, PointId point) {
  Observation* o = e.at(point);
  if (!o || !o->in_cid_list) return;
  o->in_cid_list = false;
  if (--e.cid_lists == 0)
    queues_[e.queue].open.erase_if(
        e.cid, [&](SlotList& l) { return list_remove(l, e.slot, open_link()); });
}

void IoQuality::on_command(const Packet& p, Ctx& ctx) {
  const uint32_t qi = has_queue(p.flow) ? queue_of_flow_[p.flow] - 1 : add_queue(ctx.flows[p.flow]);
  Queue& q = queues_[qi];
  const CapsuleSummary& sqe = p.capsule;
  if (sqe.is_connect() && sqe.connect_qid_captured) q.kind = sqe.connect_qid == 0 ? NvmeQueueKind::kAdmin : NvmeQueueKind::kIo;
  else if (q.kind == NvmeQueueKind::kUnknown && nvme_admin_only_opcode(sqe.opcode)) q.kind = NvmeQueueKind::kAdmin;
  // Opcode 0x02 is a Get Log Page on the admin queue and a read on an I/O queue: a capture that
  // starts after the Connects tells them apart by the namespace (a read names one; a log page
  // none, or all of them). Taken for a read, a host's log page read counted among its I/Os.
  else if (q.kind == NvmeQueueKind::kUnknown && sqe.opcode == 0x02 && sqe.no_namespace) q.kind = NvmeQueueKind::kAdmin;

  const CommandKey key{qi, sqe.cid, p.roce.bth.psn};
  EntryRef ref;
  if (const EntryRef* found = by_command_.find(key)) {
    if (found->slot == kEnded) {
      ++stats_.late_copies;  // a copy of an I/O already reported (its timeout, the limit)
      return;
    }
    ref = *found;  // the same command at another point, or a resend here
  } else {
    ref = create(p, qi, ctx);
  }
  Entry& e = *get(ref);
  if (stamp(e, kCommand, p, ctx)) join_cid_list(e, *e.at(p.point));
}

void IoQuality::on_keyed(const Packet& p, Stage stage, Ctx& ctx) {
  if (!p.roce.has(kExtReth)) return;
  // Data for a read and READ REQUESTs for a write travel storage → host.
  const uint32_t pair = pair_toward_host(p.flow, ctx);
  if (pair == kNoPair) return;
  const SlotList* list = by_key_.find(buffer_key(pair, p.roce.reth.rkey));
  if (!list) return;
  const uint32_t psn = p.roce.bth.psn;
  Entry* pick = nullptr;
  auto link = key_link(p.roce.reth.rkey);
  for (uint32_t slot = list->head; slot != kNoSlot; slot = link(slot).next) {
    Entry* e = &entry_in(slot);
    const Observation* o = e->at(p.point);
    if (o && o->has(stage) && o->psn[stage] == psn) {
      stamp(*e, stage, p, ctx);  // a copy at this point
      return;
    }
    // A new packet: the oldest I/O this point has seen the command of and not this stage.
    if (!pick && o && o->has(kCommand) && !o->has(stage)) pick = e;
  }
  if (!pick) {
    // This point missed the command (or it is a READ re-issued after lost responses, which
    // defines no stage): attach by the packet's identity if another point matched it.
    attach_by_identity(p, stage, ctx);
    return;
  }
  stamp(*pick, stage, p, ctx);
  remember_stage(*pick, stage, p.flow, psn, ctx);
  if (stage == kReadRequest) {
    // The READ RESPONSEs answer on the queue's command flow with the READ REQUEST's PSN.
    remember_stage(*pick, kReadResponse, queues_[pick->queue].cmd_flow, psn, ctx);
  }
}

void IoQuality::on_read_response(const Packet& p, Ctx& ctx) {
  const EntryRef* r = by_packet_.find(packet_key(p.flow, p.roce.bth.psn, kReadResponse));
  if (!r) return;
  Entry* e = get(*r);
  if (!e) return;
  stamp(*e, kReadResponse, p, ctx);
}

bool IoQuality::held_worth_retrying(const Ctx& ctx) const {
  if (ctx.flows.stats().pairs_learned != held_pairs_seen_) return true;
  for (const Held& h : held_)
    if (ctx.points[h.p.point].horizon >= h.until) return true;
  return false;
}

void IoQuality::retry_held(Ctx& ctx, bool all) {
  held_pairs_seen_ = ctx.flows.stats().pairs_learned;
  std::vector<Held> held;
  held.swap(held_);
  for (const Held& h : held) {
    // Its time is up once its point has handled everything stamped before the hold's end.
    const bool due = all || ctx.points[h.p.point].horizon >= h.until;
    on_completion(h.p, ctx, h.until, !due);
  }
}

void IoQuality::retry_held_on(FlowId flow, PointId point, Ctx& ctx) {
  std::vector<Held> mine;
  for (size_t i = 0; i < held_.size();)
    if (held_[i].p.flow == flow && held_[i].p.point == point) {
      mine.push_back(held_[i]);
      held_.erase(held_.begin() + ptrdiff_t(i));
    } else {
      ++i;
    }
  for (const Held& h : mine) on_completion(h.p, ctx, h.until, true);
}

IoQuality::Evidence IoQuality::corroborated(const Flow& cpl_flow, const Queue& q, const Entry* e, const Packet& p,
                                            const Ctx& ctx) const {
  // Doubted while another unpaired flow towards the storage server has carried packets but no
  // command yet (ACKs, say): it may be a queue whose commands all came before the capture (a
  // queue whose commands this point saw has its CIDs listed, and a completion of another of its
  // CIDs is not this one's). Not RDMA CM's datagrams to QP 1, nor a flow known only by name.
  bool unknown_queue = false;
  for (FlowId f : ctx.flows.between(cpl_flow.key.dst, cpl_flow.key.src)) {
    const Flow& other = ctx.flows[f];
    unknown_queue |= f != q.cmd_flow && other.peer == kNoFlow && !has_queue(f) && other.packets > 0 &&
                     other.key.dst_qpn != kGsiQpn;
  }
  if (p.roce.has(kExtIeth) && e->has_key(p.roce.invalidate_rkey)) return Evidence::kShown;
  if (ctx.flows.echoes_point_to(cpl_flow.id, q.cmd_flow) || ctx.flows.echoes_point_to(q.cmd_flow, cpl_flow.id))
    return Evidence::kShown;
  return unknown_queue ? Evidence::kDoubted : Evidence::kUncontested;
}

void IoQuality::on_completion(const Packet& p, Ctx& ctx, TimeNs until, bool may_hold) {
  // Candidate queues: the paired one, or every queue between these hosts not yet paired.
  Queue* candidates[64];
  size_t n = 0;
  const Flow* unpaired = nullptr;  // the completion's flow while it has no peer
  if (Queue* q = queue_of_return_flow(p.flow)) {
    candidates[n++] = q;
  } else if (const Flow& cpl_flow = ctx.flows[p.flow]; cpl_flow.peer != kNoFlow) {
    if (Queue* q = queue_of_flow(cpl_flow.peer)) {
      candidates[n++] = q;
      // Pairs are never undone: the flow's queue is found without its Flow from now on.
      if (p.flow >= queue_of_return_flow_.size())
        queue_of_return_flow_.resize(size_t(p.flow) + 1, 0);
      queue_of_return_flow_[p.flow] = queue_of_flow_[cpl_flow.peer];
    }
  } else {
    unpaired = &cpl_flow;
    for (FlowId f : ctx.flows.between(cpl_flow.key.dst, cpl_flow.key.src)) {
      if (ctx.flows[f].peer != kNoFlow) continue;
      if (Queue* q = queue_of_flow(f); q && n < 64) candidates[n++] = q;
    }
  }
  if (n == 0) {
    // Not an NVMe queue (yet): a 16-byte SEND of another protocol, or the completion of a command
    // before the capture. Remembered as seen here, so that a resent copy of it answers no command
    // seen since (below).
    attach_by_identity(p, kCompletion, ctx);
    return;
  }

  const uint16_t cid = p.capsule.cid;
  const uint32_t psn = p.roce.bth.psn;
  // Completions held on this flow at this point come first: what shows whose this one is (an
  // echo) shows theirs too, and they came before it. Taken first, a target's resend of a held
  // completion (the host's ACK lost) answered the newest command of the CID, one the host sent
  // once it had the first copy, and took the first copy along: probe seed 480 (IPv6, 12 % loss),
  // a Connect's T4 and T5 400 us late and the next I/O's latencies negative.
  if (until == kTimeMin && !held_.empty()) retry_held_on(p.flow, p.point, ctx);
  // This very packet matched already (here: a resent copy; at another point: the same
  // completion on its way): it is that I/O's, whatever CID lists say.
  if (const EntryRef* r = by_packet_.find(packet_key(p.flow, psn, kCompletion)))
    if (Entry* e = get(*r)) {
      if (!e->at(p.point) || !e->at(p.point)->has(kCommand)) ++stats_.attached;
      stamp(*e, kCompletion, p, ctx);
      if (Observation* o = e->at(p.point); o && o->has(kCommand)) leave_cid_list(*e, p.point);
      return;
    }
  // A resent copy of a completion this point already saw and tied to no command (one sent before
  // the capture): its host took the first copy and may have reused the CID since. The copy does
  // not answer that newer command (probe seed 20112: resent after lost ACKs, it ended the new
  // command's I/O 125 us early, IOL2 -71 us).
  if (seen_unmatched_here(p, kCompletion)) {
    ++stats_.orphan_completions;
    ctx.note(p.frame, note_orphan_, 0);
    return;
  }
  struct Match {
    Queue* q;
    Entry* e;
  };
  Match matches[64];
  size_t m = 0;
  for (size_t i = 0; i < n; ++i) {
    const SlotList* open = candidates[i]->open.find(cid);
    if (!open) continue;
    if (Entry* pick = answered_command(*open, p)) matches[m++] = {candidates[i], pick};
  }
  if (m > 1 && p.roce.has(kExtIeth)) {
    // Several unpaired queues have this CID outstanding: the IETH key names the I/O's buffer.
    size_t k = 0;
    for (size_t i = 0; i < m; ++i)
      if (matches[i].e->has_key(p.roce.invalidate_rkey)) matches[k++] = matches[i];
    if (k) m = k;
  }
  // One queue with the CID outstanding is not yet its queue while other flows between these
  // hosts are unpaired too: the completion may be of a command this point never saw (a capture
  // that starts while I/Os are in flight, a command lost before the point) on one of those.
  // Taken for this one, it pairs the wrong directions, and every later I/O of both queues is
  // measured against the other's completions (negative RTTs). Echoes or the IETH key decide.
  // Nothing contests the guess yet, but nothing shows it either: held for the echoes of its
  // queue's own return flow (held_), once per completion, then taken. Several queues with the
  // CID outstanding wait for the pairing the same way: left unmatched at once, the I/O it ends
  // stayed oldest in its CID list, and every later completion of that CID ended the I/O before
  // its own (probe seed 18348). A doubted one (another flow towards the storage server may be a
  // queue of its own) waits too, and is left unmatched only if no echo pairs its flow within the
  // hold: dropped at once, a Connect's completion whose ACK was lost lost its I/O's completion to
  // the target's resend of it (probe seed 21279: IOL1 508 us for 108).
  const Evidence evidence = m == 1 && unpaired
                                ? corroborated(*unpaired, *matches[0].q, matches[0].e, p, ctx)
                                : Evidence::kShown;
  if ((evidence != Evidence::kShown || m > 1) && may_hold && (until != kTimeMin || held_.size() < kMaxHeld)) {
    // Whichever queue it turns out to be, a completion answered a CID of these hosts' queues:
    // they carry NVMe (an unconfirmed queue's I/Os evicted meanwhile would be dropped).
    if (m == 1 && evidence == Evidence::kUncontested) matches[0].q->confirmed = true;
    held_.push_back(Held{p, until == kTimeMin ? p.ts + kHoldForEchoes : until});
    return;
  }
  const bool lone_guess = evidence == Evidence::kDoubted;
  if (m != 1 || lone_guess) {
    if (m == 0) {
      // This point saw no command for it: another point may have matched this packet.
      if (!attach_by_identity(p, kCompletion, ctx)) {
        ++stats_.orphan_completions;
        ctx.note(p.frame, note_orphan_, 0);
      }
    } else {
      ++stats_.ambiguous_completions;
      ctx.warn("ambiguous_completion", [] {
        return std::string(
            "some NVMe completions could not be tied to one queue pair (their directions not paired yet, and "
            "other queues between the same hosts unpaired too, or the same CID outstanding on several); they are "
            "left unmatched");
      });
    }
    return;
  }
  Queue& q = *matches[0].q;
  Entry& e = *matches[0].e;
  if (unpaired) ctx.flows.propose_pair(q.cmd_flow, p.flow);
  q.confirmed = true;
  ++stats_.completions_matched;
  if (p.capsule.status_captured && !e.status_known) {
    e.status = p.capsule.status;
    e.status_known = true;
  }
  stamp(e, kCompletion, p, ctx);
  remember_stage(e, kCompletion, p.flow, psn, ctx);
  leave_missed_completions(q, e, p.point);
  leave_cid_list(e, p.point);
  if (!e.completed) {
    e.completed = true;
    if (!e.in_completed_queue) {
      e.in_completed_queue = true;
      homes_[e.home].completed.push_back(ref_of(e));
      mark_changed(e.home);
    }
  }
}

}  // namespace rdmatel::io_quality
