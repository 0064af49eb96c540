// SPDX-License-Identifier: GPL-2.0-or-later
#include "engine/metrics/io_quality/io_quality_plugin.h"

#include <algorithm>

#include "engine/metrics/io_quality/role_inference.h"

namespace rdmatel::io_quality {
namespace {

bool reliable(const RoceFrame& pkt) {
  return pkt.op->transport == IbTransport::kRC || pkt.op->transport == IbTransport::kXRC;
}

uint64_t read_key(FlowId cmd_flow, uint32_t psn) { return uint64_t(cmd_flow) << 32 | psn; }

template <typename T>
void erase_value(std::vector<T>& v, const T& x) {
  auto it = std::find(v.begin(), v.end(), x);
  if (it != v.end()) v.erase(it);
}

}  // namespace

void IoQualityPlugin::note(EngineContext& ctx, uint64_t frame, NoteKind kind, uint64_t ref, uint32_t detail) {
  if (cfg_.frame_notes) ctx.sink.on_frame_note(FrameNote{frame, kind, ref, detail});
}

void IoQualityPlugin::on_packet(EngineContext& ctx, const PacketContext& p) {
  const RoceFrame& pkt = p.pkt;
  if (!reliable(pkt)) return;
  MsgPosition pos = pkt.op->position;
  switch (pkt.op->op_class) {
    case IbOpClass::kSend:
      if (pos == MsgPosition::kFirst || pos == MsgPosition::kOnly) on_send(ctx, p);
      break;
    case IbOpClass::kWrite:
      if ((pos == MsgPosition::kFirst || pos == MsgPosition::kOnly) && !by_key_.empty())
        on_keyed_event(ctx, p, kData);
      break;
    case IbOpClass::kReadRequest:
      if (!by_key_.empty()) on_keyed_event(ctx, p, kReadRequest);
      break;
    case IbOpClass::kReadResponse:
      if ((pos == MsgPosition::kFirst || pos == MsgPosition::kOnly) && !by_read_psn_.empty())
        on_read_response(ctx, p);
      break;
    default:
      break;
  }
}

Queue* IoQualityPlugin::queue_of_command_flow(Flow& flow) const {
  uint32_t s = flow.slot[kSlotIoQueue];
  return s ? const_cast<Queue*>(&queues_[s - 1]) : nullptr;
}

Queue& IoQualityPlugin::ensure_queue(EngineContext&, Flow& flow) {
  if (Queue* q = queue_of_command_flow(flow)) return *q;
  Queue& q = queues_.emplace_back();
  q.cmd_flow = flow.id;
  q.host = flow.key.src;
  q.storage = flow.key.dst;
  q.qpn = flow.key.dst_qpn;
  flow.slot[kSlotIoQueue] = uint32_t(queues_.size());
  return q;
}

void IoQualityPlugin::on_send(EngineContext& ctx, const PacketContext& p) {
  const RoceFrame& pkt = p.pkt;
  const uint8_t* payload = p.payload();
  uint32_t len = pkt.payload_len, have = pkt.payload_captured;
  bool only = pkt.op->position == MsgPosition::kOnly;
  Queue* cmd_queue = queue_of_command_flow(p.flow);
  // A completion travels on the reverse direction of a queue's command flow.
  bool on_completion_flow = p.flow.peer != kNoFlow && ctx.flows[p.flow.peer].slot[kSlotIoQueue] != 0;

  if (len >= kNvmeSqeSize) {
    NvmeSqe sqe;
    // More than the SQE in a single-packet capsule must be in-capsule data or the descriptor
    // list the SQE points to.
    if (have >= kNvmeSqeSize && parse_nvme_sqe(payload, have, sqe) &&
        (len == kNvmeSqeSize || !only || sqe.in_capsule() || sqe.capsule_list())) {
      on_command(ctx, p, sqe);
      return;
    }
    if (cmd_queue) {
      ++stats_.unparseable_capsules;
      note(ctx, p.frame, NoteKind::kCapsuleUnparseable, 0, 0);
    }
    return;
  }
  if (only && len == kNvmeCqeSize && have >= kNvmeCqeSize) {
    NvmeCqe cqe;
    parse_nvme_cqe(payload, have, cqe);
    on_completion(ctx, p, cqe);
    return;
  }
  if (cmd_queue || on_completion_flow) {
    ++stats_.unparseable_capsules;
    note(ctx, p.frame, NoteKind::kCapsuleUnparseable, 0, cmd_queue ? 0 : 1);
  }
}

Io* IoQualityPlugin::new_io() {
  Io* io;
  if (!free_.empty()) {
    io = free_.back();
    free_.pop_back();
    std::vector<PointObs> keep = std::move(io->obs);
    *io = Io{};
    keep.clear();
    io->obs = std::move(keep);
  } else {
    io = &pool_.emplace_back();
  }
  io->id = next_id_++;
  return io;
}

bool IoQualityPlugin::observe(EngineContext& ctx, Io& io, Stage stage, const PacketContext& p, bool copy_note) {
  static constexpr NoteKind kinds[kStages] = {NoteKind::kIoCommand, NoteKind::kIoData, NoteKind::kIoReadRequest,
                                              NoteKind::kIoReadResponse, NoteKind::kIoCompletion};
  PointObs* o = nullptr;
  for (auto& x : io.obs)
    if (x.point == p.point) o = &x;
  if (!o) {
    o = &io.obs.emplace_back();
    o->point = p.point;
  }
  if (o->has(stage)) {
    if (copy_note) note(ctx, p.frame, kinds[stage], io.id, 1);
    return false;
  }
  o->mask |= uint8_t(1u << stage);
  o->ts[stage] = p.ts;
  o->frame[stage] = p.frame;
  if (io.obs.size() == 1 && o->mask == (1u << stage)) {
    io.first_ts = io.last_ts = p.ts;
  } else {
    io.first_ts = std::min(io.first_ts, p.ts);
    io.last_ts = std::max(io.last_ts, p.ts);
  }
  note(ctx, p.frame, kinds[stage], io.id, 0);
  // The Wireshark plugin's first pass shows each frame with what is known at that frame.
  if (cfg_.frame_notes) ctx.sink.on_io(build_record(ctx, io, true, IoEnd::kCaptureEnd));
  return true;
}

void IoQualityPlugin::on_command(EngineContext& ctx, const PacketContext& p, const NvmeSqe& sqe) {
  Queue& q = ensure_queue(ctx, p.flow);
  uint32_t qi = uint32_t(p.flow.slot[kSlotIoQueue] - 1);
  if (sqe.is_connect()) q.kind = sqe.connect_qid == 0 ? NvmeQueueKind::kAdmin : NvmeQueueKind::kIo;
  else if (q.kind == NvmeQueueKind::kUnknown && nvme_admin_only_opcode(sqe.opcode)) q.kind = NvmeQueueKind::kAdmin;

  auto& list = q.by_cid[sqe.cid];
  for (Io* io : list) {
    if (io->has_psn(kCommand) && io->psn[kCommand] == p.pkt.bth.psn) {
      observe(ctx, *io, kCommand, p);  // the same command seen again: another point, or a resend
      return;
    }
  }
  if (live_count_ >= cfg_.max_outstanding_ios) {
    // Bounded state: the oldest outstanding I/O is reported now, as far as it got.
    while (!live_.empty() && !live_.front().valid()) live_.pop_front();
    if (!live_.empty()) {
      ctx.warn_once(ctx, "max_outstanding_ios",
                    "more than " + std::to_string(cfg_.max_outstanding_ios) +
                        " NVMe I/Os in flight: the oldest are reported early (limit max_outstanding_ios)");
      ++stats_.evicted;
      finalize(ctx, *live_.front().io, IoEnd::kEvicted);
      live_.pop_front();
    }
  }
  ++stats_.commands;
  Io* io = new_io();
  io->queue = qi;
  io->cid = sqe.cid;
  io->opcode = sqe.opcode;
  io->fctype = sqe.fctype;
  io->in_capsule = sqe.in_capsule();
  io->key_count = uint8_t(nvme_sgl_keys(sqe, p.payload(), p.pkt.payload_captured, io->keys.data(), Io::kMaxKeys));
  io->length = sqe.sgl_len;
  io->set_psn(kCommand, p.pkt.bth.psn);
  queues_[qi].by_cid[sqe.cid].push_back(io);
  for (uint8_t i = 0; i < io->key_count; ++i) by_key_[PairValueKey{q.host, q.storage, io->keys[i]}].push_back(io);
  live_.push_back(IoRef{io, io->id});
  ++live_count_;
  observe(ctx, *io, kCommand, p);
}

void IoQualityPlugin::on_keyed_event(EngineContext& ctx, const PacketContext& p, Stage stage) {
  if (!p.pkt.has(kExtReth)) return;
  // Data for a read and READ REQUESTs for a write travel storage → host.
  auto it = by_key_.find(PairValueKey{p.pkt.dst, p.pkt.src, p.pkt.reth.rkey});
  if (it == by_key_.end()) return;
  uint32_t psn = p.pkt.bth.psn;
  for (Io* io : it->second)
    if (io->has_psn(stage) && io->psn[stage] == psn) {
      observe(ctx, *io, stage, p);
      return;
    }
  // A new packet: the oldest I/O this point has seen the command of and not this stage.
  Io* pick = nullptr;
  for (Io* io : it->second) {
    if (io->has_psn(stage)) continue;
    if (io->seen_at(p.point, kCommand)) {
      pick = io;
      break;
    }
    if (!pick) pick = io;
  }
  if (!pick) return;  // e.g. a READ REQUEST re-issued after lost responses: not a first copy
  pick->set_psn(stage, psn);
  if (stage == kReadRequest) by_read_psn_[read_key(queues_[pick->queue].cmd_flow, psn)] = pick;
  observe(ctx, *pick, stage, p);
}

void IoQualityPlugin::on_read_response(EngineContext& ctx, const PacketContext& p) {
  // READ RESPONSE host → storage, on the queue's command flow, carries the PSN of the READ
  // REQUEST it answers.
  auto it = by_read_psn_.find(read_key(p.flow.id, p.pkt.bth.psn));
  if (it == by_read_psn_.end()) return;
  Io& io = *it->second;
  if (!io.has_psn(kReadResponse)) io.set_psn(kReadResponse, p.pkt.bth.psn);
  observe(ctx, io, kReadResponse, p);
}

void IoQualityPlugin::on_completion(EngineContext& ctx, const PacketContext& p, const NvmeCqe& cqe) {
  // Candidate queues: the paired one, or every queue between these hosts not yet paired.
  Flow& cpl_flow = p.flow;
  std::vector<Queue*> candidates;
  if (cpl_flow.peer != kNoFlow) {
    if (Queue* q = queue_of_command_flow(ctx.flows[cpl_flow.peer])) candidates.push_back(q);
  } else {
    for (FlowId f : ctx.flows.between(p.pkt.dst, p.pkt.src)) {
      Flow& cmd_flow = ctx.flows[f];
      if (cmd_flow.peer != kNoFlow) continue;
      if (Queue* q = queue_of_command_flow(cmd_flow)) candidates.push_back(q);
    }
  }
  if (candidates.empty()) return;  // not an NVMe queue (yet): a 16-byte SEND of another protocol

  uint32_t psn = p.pkt.bth.psn;
  // The same completion seen again (another point or a resend)?
  for (Queue* q : candidates) {
    auto it = q->by_cid.find(cqe.cid);
    if (it == q->by_cid.end()) continue;
    for (Io* io : it->second)
      if (io->has_psn(kCompletion) && io->psn[kCompletion] == psn) {
        observe(ctx, *io, kCompletion, p);
        return;
      }
  }
  // A new completion: per queue, the oldest I/O with this CID this point saw the command of and
  // no completion yet (else the oldest without a completion).
  struct Match {
    Queue* q;
    Io* io;
    bool seen_here;
  };
  std::vector<Match> matches;
  for (Queue* q : candidates) {
    auto it = q->by_cid.find(cqe.cid);
    if (it == q->by_cid.end()) continue;
    Io* pick = nullptr;
    bool here = false;
    for (Io* io : it->second) {
      if (io->has_psn(kCompletion)) continue;
      if (io->seen_at(p.point, kCommand)) {
        pick = io;
        here = true;
        break;
      }
      if (!pick) pick = io;
    }
    if (pick) matches.push_back({q, pick, here});
  }
  if (matches.size() > 1) {
    // Several unpaired queues have this CID outstanding: the IETH key names the I/O's buffer;
    // then prefer I/Os whose command this point saw.
    auto keep = [&](auto pred) {
      std::vector<Match> m;
      for (auto& x : matches)
        if (pred(x)) m.push_back(x);
      if (!m.empty()) matches.swap(m);
    };
    if (p.pkt.has(kExtIeth))
      keep([&](const Match& x) { return x.io->has_key(p.pkt.invalidate_rkey); });
    if (matches.size() > 1) keep([](const Match& x) { return x.seen_here; });
  }
  if (matches.size() != 1) {
    if (matches.empty()) {
      ++stats_.orphan_completions;
      note(ctx, p.frame, NoteKind::kOrphanCompletion, 0);
    } else {
      ++stats_.ambiguous_completions;
      ctx.warn_once(ctx, "ambiguous_completion",
                    "some NVMe completions could not be tied to one queue pair (same CID outstanding on "
                    "several queues whose directions are not paired yet); they are left unmatched");
    }
    return;
  }
  Queue& q = *matches[0].q;
  Io& io = *matches[0].io;
  if (cpl_flow.peer == kNoFlow) ctx.flows.pair(ctx.flows[q.cmd_flow], cpl_flow);
  q.confirmed = true;
  ++stats_.completions_matched;
  io.set_psn(kCompletion, psn);
  io.status = cqe.status;
  observe(ctx, io, kCompletion, p);
  if (!io.completion_seen) {
    io.completion_seen = true;
    completed_.push_back(IoRef{&io, io.id});
  }
}

bool IoQualityPlugin::ready(EngineContext& ctx, const Io& io) const {
  // Complete where the command was seen, and every point has moved past the last event.
  bool everywhere = true;
  for (const PointObs& o : io.obs)
    if (o.has(kCommand) && !o.has(kCompletion)) everywhere = false;
  TimeNs wait = everywhere ? cfg_.reorder_window_ns : cfg_.io_timeout_ns;
  return ctx.points.all_points_past(io.last_ts + wait);
}

bool IoQualityPlugin::timed_out(EngineContext& ctx, const Io& io) const {
  PointId cmd_points[8];
  size_t n = 0;
  for (const PointObs& o : io.obs)
    if (o.has(kCommand) && n < 8) cmd_points[n++] = o.point;
  return ctx.points.points_past(cmd_points, n, io.first_ts + cfg_.io_timeout_ns);
}

void IoQualityPlugin::on_housekeeping(EngineContext& ctx) {
  while (!completed_.empty()) {
    IoRef r = completed_.front();
    if (!r.valid()) {
      completed_.pop_front();
      continue;
    }
    if (!ready(ctx, *r.io)) break;
    completed_.pop_front();
    finalize(ctx, *r.io, IoEnd::kTimeout);  // kCompleted when the compute side saw the completion
  }
  while (!live_.empty()) {
    IoRef r = live_.front();
    if (!r.valid()) {
      live_.pop_front();
      continue;
    }
    if (r.io->completion_seen) {  // the completed_ queue finalizes it
      live_.pop_front();
      continue;
    }
    if (!timed_out(ctx, *r.io)) break;
    live_.pop_front();
    finalize(ctx, *r.io, IoEnd::kTimeout);
  }
}

void IoQualityPlugin::finish(EngineContext& ctx) {
  // Finalize in creation order so records come out in command order.
  for (IoRef r : live_)
    if (r.valid()) finalize(ctx, *r.io, IoEnd::kCaptureEnd);
  for (IoRef r : completed_)
    if (r.valid()) finalize(ctx, *r.io, IoEnd::kCaptureEnd);
  live_.clear();
  completed_.clear();
}

void IoQualityPlugin::finalize(EngineContext& ctx, Io& io, IoEnd end) {
  const Queue& q = queues_[io.queue];
  if (q.confirmed) {
    IoRecord rec = build_record(ctx, io, false, end);
    IoRoles roles = infer_roles(io, ctx.points);
    if (roles.inferred) {
      if (roles.compute != kNoPoint) ++ctx.points[roles.compute].inferred_compute;
      if (roles.storage != kNoPoint) ++ctx.points[roles.storage].inferred_storage;
    }
    ctx.sink.on_io(rec);
  } else {
    ++stats_.unconfirmed_dropped;
  }
  release(io);
}

void IoQualityPlugin::release(Io& io) {
  Queue& q = queues_[io.queue];
  auto it = q.by_cid.find(io.cid);
  if (it != q.by_cid.end()) {
    erase_value(it->second, &io);
    if (it->second.empty()) q.by_cid.erase(it);
  }
  for (uint8_t i = 0; i < io.key_count; ++i) {
    auto k = by_key_.find(PairValueKey{q.host, q.storage, io.keys[i]});
    if (k != by_key_.end()) {
      erase_value(k->second, &io);
      if (k->second.empty()) by_key_.erase(k);
    }
  }
  if (io.has_psn(kReadRequest)) {
    auto r = by_read_psn_.find(read_key(q.cmd_flow, io.psn[kReadRequest]));
    if (r != by_read_psn_.end() && r->second == &io) by_read_psn_.erase(r);
  }
  io.done = true;
  --live_count_;
  free_.push_back(&io);
}

IoRecord IoQualityPlugin::build_record(EngineContext& ctx, const Io& io, bool provisional, IoEnd end) const {
  const Queue& q = queues_[io.queue];
  IoRecord r;
  r.id = io.id;
  r.opcode = io.opcode;
  r.fctype = io.fctype;
  r.admin = q.kind == NvmeQueueKind::kAdmin;
  r.op = nvme_op_name(io.opcode, io.fctype, q.kind);
  r.host = q.host;
  r.storage = q.storage;
  r.qpn = q.qpn;
  const Flow& cmd_flow = ctx.flows[q.cmd_flow];
  if (cmd_flow.peer != kNoFlow) r.host_qpn = ctx.flows[cmd_flow.peer].key.dst_qpn;
  r.cid = io.cid;
  r.status = io.status;
  r.in_capsule = io.in_capsule;
  r.length = io.length;
  r.provisional = provisional;

  IoRoles roles = infer_roles(io, ctx.points);
  r.compute_point = roles.compute;
  r.storage_point = roles.storage;
  r.iol_point = roles.iol_point;
  const PointObs* c = roles.compute != kNoPoint ? io.at(roles.compute) : nullptr;
  const PointObs* s = roles.storage != kNoPoint ? io.at(roles.storage) : nullptr;
  auto put = [&](int ti, const PointObs* o, Stage st) {
    if (o && o->has(st)) r.t.set(ti, o->ts[st]);
  };
  put(1, c, kCommand);
  put(2, s, kCommand);
  if (r.is_write()) {
    put(3, s, kReadRequest);
    put(4, c, kReadRequest);
    put(5, c, kReadResponse);
    put(6, s, kCompletion);
    put(7, c, kCompletion);
  } else {
    if (r.is_read()) put(3, s, kData);
    put(4, s, kCompletion);
    put(5, c, kCompletion);
  }
  if (const PointObs* o = roles.iol_point != kNoPoint ? io.at(roles.iol_point) : nullptr) {
    if (o->has(kCommand)) r.cmd_frame = o->frame[kCommand];
    if (o->has(kCompletion)) r.rsp_frame = o->frame[kCompletion];
    if (o->has(kCommand) && o->has(kCompletion)) r.iol_ns = o->ts[kCompletion] - o->ts[kCommand];
    r.complete = o->has(kCompletion);
  }
  r.end = r.complete ? IoEnd::kCompleted : end;
  return r;
}

}  // namespace rdmatel::io_quality
