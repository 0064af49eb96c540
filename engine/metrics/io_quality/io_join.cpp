// SPDX-License-Identifier: GPL-2.0-or-later
// io_quality: joining each point's observations of an I/O into one record, and deciding when
// nothing more can come (see io_quality.h).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <limits>

#include "engine/metrics/io_quality/io_quality.h"

namespace rdmatel::io_quality {
namespace {

// Final I/Os waiting for role evidence: at most this many, each at most the I/O timeout of
// capture progress; then they are reported with what is known.
constexpr size_t kMaxDeferred = 1 << 16;

}  // namespace

void IoQuality::compute_horizons(Ctx& ctx) {
  const PointTable& pts = ctx.points;
  // A declared point with no packet yet: its copies may all be still to come.
  horizons_blocked_ = pts.any_awaited();
  if (horizons_blocked_) return;
  // Every point not awaited carried a packet; a quiet one carries nothing more: everything it
  // will ever add is in already. The others by horizon, on their component's root clock.
  horizons_.sync(pts, ctx.clock, ctx.reorder_window, [&](PointId q) {
    return TimeNs(uint64_t(pts[q].horizon) + uint64_t(ctx.clock.to_root(q)));  // (as the sum wraps)
  });
}

TimeNs IoQuality::bound_for(PointId home, Ctx& ctx) const {
  if (horizons_blocked_) return kTimeMin;
  const PointId root = ctx.clock.root(home);
  // A point that carries packets but shares none with this one yet may be on its path with a
  // clock seconds behind: while either of them is new, wait for it.
  if (horizons_.any_new_outside(root)) return kTimeMin;
  if (ctx.points.is_new(home, ctx.reorder_window) && horizons_.any_active_outside(root)) return kTimeMin;
  if (!horizons_.any_active(root)) return kTimeMax;  // every related point is quiet
  return horizons_.least(root) - ctx.clock.to_root(home);
}

void IoQuality::map_to_home(PointId home, const Ctx& ctx) {
  mapping_home_ = home;
  home_to_root_ = ctx.clock.to_root(home);
}

TimeNs IoQuality::in_home_clock(const Entry& e, PointId point, TimeNs ts, const Ctx& ctx) const {
  if (point == e.home) return ts;  // its own clock: nothing to map
  if (!ctx.clock.related(point, e.home)) return kTimeMin;
  // ctx.clock.map(ts, point, e.home), the home's offset taken once per drain.
  return ts + ctx.clock.to_root(point) - (e.home == mapping_home_ ? home_to_root_ : ctx.clock.to_root(e.home));
}

TimeNs IoQuality::latest_related(const Entry& e, const Ctx& ctx) const {
  const bool kept = e.obs.size() > Entry::kUnindexedObservations;
  if (kept && e.latest_version == ctx.clock.version()) return e.latest_related;
  TimeNs latest = kTimeMin;
  for (const Observation& o : e.obs) latest = std::max(latest, in_home_clock(e, o.point, o.last, ctx));
  if (kept) {
    e.latest_related = latest;
    e.latest_version = ctx.clock.version();
  }
  return latest;
}

bool IoQuality::settled(const Entry& e, bool timeout, TimeNs bound, Ctx& ctx) const {
  // What every related point must have passed, in the home point's clock: the I/O's latest
  // packet anywhere and the reorder window (copies still to come), or its timeout.
  const TimeNs need = timeout ? e.home_command + io_timeout_ : latest_related(e, ctx) + ctx.reorder_window;
  return need <= bound;
}

void IoQuality::on_advance(PointId, Ctx& ctx) {
  if (!held_.empty() && held_worth_retrying(ctx)) retry_held(ctx, false);
  drain(ctx);
}

void IoQuality::mark_changed(PointId home) {
  HomeQueues& hq = homes_[home];
  if (!hq.busy) {
    hq.busy = true;
    busy_homes_.insert(std::upper_bound(busy_homes_.begin(), busy_homes_.end(), home), home);
  }
  if (!hq.dirty) {
    hq.dirty = true;
    dirty_homes_.push_back(home);
  }
}

void IoQuality::visit_home(PointId home, Ctx& ctx, bool compacting) {
  HomeQueues& hq = homes_[home];
  const TimeNs bound = bound_for(home, ctx);
  if (!hq.completed.empty()) map_to_home(home, ctx);
  while (!hq.completed.empty()) {
    Entry* e = get(hq.completed.front());
    if (e && !settled(*e, false, bound, ctx)) break;
    EntryRef r = hq.completed.front();
    hq.completed.pop_front();
    if (e) finalize(r, IoEnd::kTimeout, ctx);  // kCompleted when its iol point saw the completion
  }
  mapping_home_ = kNoPoint;  // taken for this drain only
  while (!hq.created.empty()) {
    Entry* e = get(hq.created.front());
    if (e && !e->completed && !settled(*e, true, bound, ctx)) break;
    EntryRef r = hq.created.front();
    hq.created.pop_front();
    if (e && !e->completed) finalize(r, IoEnd::kTimeout, ctx);
  }
  if (!hq.completed.empty() || !hq.created.empty()) {
    schedule(home, ctx);
    return;
  }
  due_.erase(home);
  hq.busy = false;
  if (!compacting) busy_homes_.erase(std::lower_bound(busy_homes_.begin(), busy_homes_.end(), home));
}

void IoQuality::schedule(PointId home, const Ctx& ctx) {
  // Both heads are live and unsettled (visit_home took the rest): the oldest completed I/O needs
  // every related point past its latest packet, the oldest open one its timeout.
  const HomeQueues& hq = homes_[home];
  TimeNs need = kTimeMax;
  if (!hq.completed.empty()) {
    const Entry* e = get(hq.completed.front());
    need = e ? latest_related(*e, ctx) + ctx.reorder_window : kTimeMin;
  }
  if (!hq.created.empty()) {
    const Entry* e = get(hq.created.front());
    need = std::min(need, e && !e->completed ? e->home_command + io_timeout_ : kTimeMin);
  }
  // bound_for() is the component's least horizon less home's offset: due once that horizon
  // reaches need + offset. Far out (stamps or offsets beyond 2^61 ns, where the sums might wrap
  // unlike bound_for's) it is looked at whenever its component moves.
  const __int128 key = __int128(need) + ctx.clock.to_root(home);
  const bool near = key > -(__int128(1) << 61) && key < (__int128(1) << 61);
  due_.set(home, ctx.clock.root(home), near ? int64_t(key) : std::numeric_limits<int64_t>::min());
}

void IoQuality::check_unvisited(Ctx& ctx) {
  for (const PointId home : busy_homes_) {
    if (std::binary_search(visiting_.begin(), visiting_.end(), home)) continue;
    const HomeQueues& hq = homes_[home];
    const TimeNs bound = bound_for(home, ctx);
    const Entry* done = nullptr;
    for (const EntryRef r : hq.completed)
      if ((done = get(r))) break;
    const Entry* open = nullptr;
    for (const EntryRef r : hq.created)
      if ((open = get(r)) && !open->completed) break;
    if ((done && settled(*done, false, bound, ctx)) || (open && !open->completed && settled(*open, true, bound, ctx))) {
      std::fprintf(stderr, "io_quality: home %u not visited, and an I/O of it settles\n", unsigned(home));
      std::abort();
    }
  }
}

void IoQuality::drain(Ctx& ctx) {
  if (live_ == 0 && deferred_.empty()) return;
  compute_horizons(ctx);
  if (!horizons_blocked_) {
    const bool all = drained_blocked_ || horizons_.all_moved() || horizons_.counts_version() != drained_counts_ ||
                     ctx.clock.version() != drained_clock_;
    drained_counts_ = horizons_.counts_version();
    drained_clock_ = ctx.clock.version();
    for (const PointId home : dirty_homes_) homes_[home].dirty = false;
    if (all) {
      // Homes by number, as before they were scheduled: records come out in the same order.
      // Nothing a visit does adds an I/O (only packets do), so busy_homes_ only shrinks here.
      size_t still_busy = 0;
      for (const PointId home : busy_homes_) {
        visit_home(home, ctx, true);
        if (homes_[home].busy) busy_homes_[still_busy++] = home;
      }
      busy_homes_.resize(still_busy);
    } else {
      visiting_.assign(dirty_homes_.begin(), dirty_homes_.end());
      for (const uint32_t root : horizons_.moved_groups()) {
        // (It has an active point: else the counts moved, and every home was visited.)
        const bool active = horizons_.any_active(root);
        const int64_t least = active ? horizons_.least(root) : 0;
        const bool near = active && least > -(int64_t(1) << 61) && least < (int64_t(1) << 61);
        while (due_.size(root) && (!near || due_.top_key(root) <= least)) {
          visiting_.push_back(due_.top(root));
          due_.erase(visiting_.back());
        }
      }
      // By number, each once: the order a visit of every home would have finalised them in.
      std::sort(visiting_.begin(), visiting_.end());
      visiting_.erase(std::unique(visiting_.begin(), visiting_.end()), visiting_.end());
      for (const PointId home : visiting_)
        if (homes_[home].busy) visit_home(home, ctx, false);
      if (check_schedule_) check_unvisited(ctx);
    }
    dirty_homes_.clear();
  }
  drained_blocked_ = horizons_blocked_;
  while (!all_created_.empty() && !get(all_created_.front())) all_created_.pop_front();
  if (!deferred_.empty()) flush_deferred(ctx, false);
}

void IoQuality::finish(Ctx& ctx) {
  retry_held(ctx, true);
  // Everything left, in creation order so that records come out in command order.
  for (EntryRef r : all_created_)
    if (get(r)) finalize(r, IoEnd::kCaptureEnd, ctx);
  all_created_.clear();
  homes_.clear();
  busy_homes_.clear();
  dirty_homes_.clear();
  due_.clear();
  flush_deferred(ctx, true);
  if (stats_.unconfirmed_dropped)
    ctx.warn("unconfirmed_commands", [&] {
      return "SENDs that read as NVMe commands on queue pairs where no completion answered any: " +
             std::to_string(stats_.unconfirmed_dropped) +
             ", not counted as I/Os (another protocol over SEND, or a queue whose completions the capture "
             "does not hold: it ends or starts mid-I/O, or misses one direction)";
    });
  if (stats_.missed_completions)
    ctx.warn("missed_completions", [&] {
      return std::to_string(stats_.missed_completions) +
             " NVMe commands had their CID reused before a point saw their completion: that point missed "
             "the completions (a capture's or a mirror's drop, a ring file missing) or handled packets out of order "
             "(a reorder limit reached), and those I/Os lack its metrics there";
    });
  if (stats_.late_copies)
    ctx.warn("late_io_copies", [&] {
      return std::to_string(stats_.late_copies) +
             " copies of NVMe commands came after their I/O was reported (at its timeout or the I/O limit): "
             "they were not counted again";
    });
}

void IoQuality::release(Entry& e) {
  Queue& q = queues_[e.queue];
  const CommandKey key{e.queue, e.cid, e.cmd_psn};
  // The key stays, as a tombstone, so that late copies of the command start no new I/O.
  by_command_.find(key)->slot = kEnded;
  const uint64_t id = e.id;
  if (e.cid_lists)
    q.open.erase_if(e.cid, [&](SlotList& l) { return list_remove(l, e.slot, open_link()); });
  for (uint8_t i = 0; i < e.key_count; ++i)
    if (e.key_index(e.keys[i]) == i)
      by_key_.erase_if(buffer_key(q.pair, e.keys[i]),
                       [&](SlotList& l) { return list_remove(l, e.slot, key_link(e.keys[i])); });
  for (int s = 0; s < kStages; ++s)
    if (e.stage_psn_mask & (1u << s))
      by_packet_.erase_if(packet_key(e.stage_flow[s], e.stage_psn[s], Stage(s)),
                          [&](const EntryRef& r) { return r.id == id; });
  // The oldest of kMaxEnded tombstones goes.
  if (ended_order_.size() < kMaxEnded) {
    ended_order_.push_back(key);
  } else {
    CommandKey& oldest = ended_order_[oldest_ended_];
    by_command_.erase_if(oldest, [](const EntryRef& r) { return r.slot == kEnded; });
    oldest = key;
    oldest_ended_ = (oldest_ended_ + 1) % kMaxEnded;
  }
  e.id = 0;
  free_.push_back(e.slot);
  --live_;
}

void IoQuality::finalize(EntryRef r, IoEnd end, Ctx& ctx) {
  Entry* e = get(r);
  if (!e) return;
  // Reported from its slot (copied only when it waits for roles), then the slot is freed.
  if (!queues_[e->queue].confirmed) {
    ++stats_.unconfirmed_dropped;  // never confirmed as NVMe: a SEND that only looked like an SQE
    // Its frames' notes name it: with frame notes it stays as what was known (provisional), as
    // a snapshot made at its last stage would have, for the frames shown after the capture's pass.
    if (ctx.frame_notes) {
      IoRecord snapshot = build(*e, IoEnd::kCaptureEnd, true, false, ctx);
      ctx.emit(kIoSchema, &snapshot, true);
    }
  } else {
    if (point_local_) emit_points(*e, end, ctx);
    emit_or_defer(*e, end, ctx);
  }
  release(*e);
}

// The fields an I/O record and a point-local observation share: the command, its queue and
// its key (host, storage, storage QPN, CID, command PSN).
template <typename Record, typename Entry, typename Queue>
void fill_io_keys(Record& r, const Entry& e, const Queue& q, const Ctx& ctx) {
  r.opcode = e.opcode;
  r.admin = q.kind == NvmeQueueKind::kAdmin;
  r.op = nvme_op_name(e.opcode, e.fctype, q.kind);
  r.host = q.host;
  r.storage = q.storage;
  r.qpn = q.qpn;
  r.key_flow = ctx.sampling.has_key_flows() && ctx.sampling.key_flow(q.host, q.storage);
  if (!q.host_qpn) {
    // Once its flows are paired (never undone), the host's QPN is the queue's.
    const Flow& cmd_flow = ctx.flows[q.cmd_flow];
    if (cmd_flow.peer != kNoFlow) q.host_qpn = ctx.flows[cmd_flow.peer].key.dst_qpn;
  }
  r.host_qpn = q.host_qpn;
  r.cid = e.cid;
  r.cmd_psn = e.cmd_psn;
  r.status = e.status;
  r.status_known = e.status_known;
  r.in_capsule = e.in_capsule;
  r.length = e.length;
}

void IoQuality::emit_points(const Entry& e, IoEnd end, Ctx& ctx) const {
  const Queue& q = queues_[e.queue];
  IoPointRecord r;
  fill_io_keys(r, e, q, ctx);
  for (const Observation& o : e.obs) {
    r.point = o.point;
    auto at = [&](Stage s) { return o.has(s) ? std::optional<TimeNs>(o.ts[s]) : std::nullopt; };
    r.command_ns = at(kCommand);
    r.data_ns = at(kData);
    r.read_request_ns = at(kReadRequest);
    r.read_response_ns = at(kReadResponse);
    r.completion_ns = at(kCompletion);
    r.cmd_frame = o.has(kCommand) ? o.frame[kCommand] : 0;
    r.rsp_frame = o.has(kCompletion) ? o.frame[kCompletion] : 0;
    r.end = o.has(kCompletion) ? IoEnd::kCompleted : end;
    r.ttl_command = o.has(kCommand) ? o.ttl_command : -1;
    r.ttl_completion = o.has(kCompletion) ? o.ttl_completion : -1;
    ctx.emit(kIoPointSchema, &r);
  }
}

void IoQuality::add_role_evidence(const Entry& e, Ctx& ctx) const {
  if (e.obs.size() < 2) return;
  // The votes compare every two sightings: at most kVotingPoints of them. Beyond, those that
  // decide the sides come first, whatever their place: the longest and the shortest span and
  // the highest TTLs (the first 16 in arrival order left a path's storage end out, and the
  // 16th point was taken for the storage side: DAL 58 µs for 10 on a 40-point path).
  SmallVector<size_t, 4> order;
  if (e.obs.size() > kVotingPoints) {
    const size_t none = e.obs.size();
    auto span = [&](size_t i) { return e.obs[i].ts[kCompletion] - e.obs[i].ts[kCommand]; };
    size_t longest = none, shortest = none, ttl_cmd = none, ttl_cpl = none;
    for (size_t i = 0; i < e.obs.size(); ++i) {
      const Observation& o = e.obs[i];
      if (o.has(kCommand) && o.has(kCompletion)) {
        if (longest == none || span(i) > span(longest)) longest = i;
        if (shortest == none || span(i) < span(shortest)) shortest = i;
      }
      if (o.has(kCommand) && (ttl_cmd == none || o.ttl_command > e.obs[ttl_cmd].ttl_command)) ttl_cmd = i;
      if (o.has(kCompletion) && (ttl_cpl == none || o.ttl_completion > e.obs[ttl_cpl].ttl_completion)) ttl_cpl = i;
    }
    for (size_t i : {longest, shortest, ttl_cmd, ttl_cpl})
      if (i != none && std::find(order.begin(), order.end(), i) == order.end()) order.push_back(i);
    for (size_t i = 0; i < e.obs.size() && order.size() < kVotingPoints; ++i)
      if (std::find(order.begin(), order.end(), i) == order.end()) order.push_back(i);
  } else {
    for (size_t i = 0; i < e.obs.size(); ++i) order.push_back(i);
  }
  SmallVector<Roles::Sighting, 4> s;  // most I/Os are seen at 2 or 3 points
  for (const size_t i : order) {
    const Observation& o = e.obs[i];
    Roles::Sighting& x = s.emplace_back();
    x.point = o.point;
    x.has_span = o.has(kCommand) && o.has(kCompletion);
    if (x.has_span) x.span = o.ts[kCompletion] - o.ts[kCommand];
    if (o.has(kCommand)) x.ttl_command = o.ttl_command;
    if (o.has(kCompletion)) x.ttl_completion = o.ttl_completion;
  }
  const Queue& q = queues_[e.queue];
  ctx.roles.add_evidence(q.host, q.storage, std::span(s.begin(), s.size()), &q.roles);
}

bool IoQuality::awaits_ranking(const Entry& e, const Ctx& ctx) const {
  const Queue& q = queues_[e.queue];
  // The points on the I/O's path that missed its command: those that saw a later packet of it,
  // and those that saw other commands of the queue but nothing of this I/O (a capture there that
  // began after it). Nearly always none: no evidence looked up.
  SmallVector<PointId, 8> missed;
  for (const Observation& o : e.obs)
    if (!o.has(kCommand)) missed.push_back(o.point);
  for (PointId point : q.command_points)
    if (!e.at(point)) missed.push_back(point);
  if (missed.empty()) return false;
  const std::span<const PointId> points(missed.begin(), missed.size());
  return !ctx.roles.ranks_all(q.host, true, points) || !ctx.roles.ranks_all(q.storage, false, points);
}

void IoQuality::emit_or_defer(const Entry& e, IoEnd end, Ctx& ctx) {
  add_role_evidence(e, ctx);
  Roles::Sides sides;
  IoRecord r = build(e, end, false, false, ctx, &sides);
  // Roles can only be learned with several points; an I/O whose endpoints have no evidence
  // yet waits for some (its host's other I/Os), so that the same capture always gives the same
  // roles whatever the order its I/Os end in. So does one seen at a point not compared yet.
  if (ctx.points.size() >= 2 && !sides_final(sides, e, ctx)) {
    deferred_.push_back(Deferred{e, end, ctx.points.progress()});
    if (deferred_.size() > kMaxDeferred) {
      Deferred d = std::move(deferred_.front());
      deferred_.pop_front();
      emit_final(build(d.entry, d.end, false, true, ctx), ctx);
    }
    return;
  }
  emit_final(r, ctx);
}

void IoQuality::emit_final(const IoRecord& r, Ctx& ctx) {
  // Each metric is a difference of two stamps of one point, in the order the packets must pass
  // it: none can be negative. One that is says the I/O was put together wrongly (a completion
  // tied to the wrong command, or roles the capture contradicts): never silently.
  const IoMetrics m = io_metrics(r);
  auto negative = [](const std::optional<DurationNs>& v) { return v && *v < 0; };
  if (negative(m.dal) || negative(m.dpl) || negative(m.iol1) || negative(m.iol2) ||
      negative(m.rtt) || negative(m.iol)) {
    ++stats_.impossible;
    ctx.warn("impossible_io", [&] {
      return "some NVMe I/Os have a negative latency, which no I/O can have (first: host " +
             r.host.to_string() + ", storage " + r.storage.to_string() + ", CID " +
             std::to_string(r.cid) + ", command frame " + std::to_string(r.cmd_frame) +
             "): a completion tied to the wrong command, a packet one point's capture missed (its "
             "resend then stands for it there, later: see the capture's own drops), or point roles the "
             "traffic contradicts (--point); their records are kept as measured";
    });
  }
  ctx.emit(kIoSchema, &r);
}

void IoQuality::flush_deferred(Ctx& ctx, bool all) {
  const uint64_t version = ctx.roles.evidence_version();
  const DurationNs now = ctx.points.progress();
  if (!all && version == deferred_version_) {
    // The roles' evidence is as it was when each waiting I/O was last looked at, and none was
    // ready then: only the time waited has changed, and those deferred first have waited longest.
    // (Each step rebuilt every waiting record once the oldest had waited its time: 400,000
    // packets of I/Os each seen at one of 4 points took 95 s.)
    while (!deferred_.empty() && now - deferred_.front().progress > io_timeout_) {
      emit_final(build(deferred_.front().entry, deferred_.front().end, false, true, ctx), ctx);
      deferred_.pop_front();
    }
    return;
  }
  deferred_version_ = version;
  // In place and in order: only what is emitted is built (a record each), the others are asked
  // their sides alone.
  size_t kept = 0;
  for (size_t i = 0; i < deferred_.size(); ++i) {
    Deferred& d = deferred_[i];
    if (all || now - d.progress > io_timeout_ || sides_decided(d.entry, ctx)) {
      emit_final(build(d.entry, d.end, false, true, ctx), ctx);
      continue;
    }
    if (kept != i) deferred_[kept] = std::move(d);
    ++kept;
  }
  deferred_.resize(kept);
}

bool IoQuality::sides_final(const Roles::Sides& sides, const Entry& e, const Ctx& ctx) const {
  return sides.compute_known && sides.storage_known && !awaits_ranking(e, ctx);
}

bool IoQuality::sides_decided(const Entry& e, Ctx& ctx) const {
  // The sides build() works out (fallback off), from the same points.
  const Queue& q = queues_[e.queue];
  const SmallVector<PointId, 8> seen = command_points(e);
  return sides_final(
      ctx.roles.sides(q.host, q.storage, std::span(seen.begin(), seen.size()), ctx.points, false, &q.roles), e, ctx);
}

SmallVector<PointId, 8> IoQuality::command_points(const Entry& e) {
  SmallVector<PointId, 8> seen;
  for (const Observation& o : e.obs)
    if (o.has(kCommand)) seen.push_back(o.point);
  return seen;
}

IoRecord IoQuality::build(const Entry& e, IoEnd end, bool provisional, bool fallback, Ctx& ctx,
                          Roles::Sides* sides_out) const {
  const Queue& q = queues_[e.queue];
  IoRecord r;
  r.id = e.id;
  r.fctype = e.fctype;
  fill_io_keys(r, e, q, ctx);
  if (const GpuBinding* g = ctx.gpus.find(q.host)) {
    r.host_gpu = g->gpu;
    r.host_node = g->node;
    r.job = g->job;
  }
  r.provisional = provisional;

  // Every point that saw the command is a candidate side (the first 64 left a longer path's
  // storage end out: no storage side, no DAL).
  const SmallVector<PointId, 8> seen = command_points(e);
  r.points = uint16_t(std::min<size_t>(seen.size(), UINT16_MAX));
  Roles::Sides sides =
      ctx.roles.sides(q.host, q.storage, std::span(seen.begin(), seen.size()), ctx.points, fallback, &q.roles);
  if (sides_out) *sides_out = sides;
  r.compute_point = sides.compute;
  r.storage_point = sides.storage;
  const Observation* c = sides.compute != kNoPoint ? e.at(sides.compute) : nullptr;
  const Observation* s = sides.storage != kNoPoint ? e.at(sides.storage) : nullptr;
  auto put = [&](int ti, const Observation* o, Stage st) {
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
  // Where `iol` is measured: the compute side; without roles the only point that saw the
  // command, else the one with the longest command-to-completion span (nearest the host).
  const Observation* iol = c;
  if (!iol && seen.size() == 1) iol = e.at(seen[0]);
  if (!iol) {
    for (const Observation& o : e.obs)
      if (o.has(kCommand) && o.has(kCompletion) &&
          (!iol || o.ts[kCompletion] - o.ts[kCommand] > iol->ts[kCompletion] - iol->ts[kCommand]))
        iol = &o;
  }
  if (!iol && !seen.empty()) iol = e.at(seen[0]);
  if (iol) {
    r.iol_point = iol->point;
    if (iol->has(kCommand)) r.cmd_frame = iol->frame[kCommand];
    if (iol->has(kCompletion)) r.rsp_frame = iol->frame[kCompletion];
    if (iol->has(kCommand) && iol->has(kCompletion)) r.iol_ns = iol->ts[kCompletion] - iol->ts[kCommand];
    r.complete = iol->has(kCompletion);
  }
  r.end = r.complete ? IoEnd::kCompleted : end;
  // The polling period of its first stamp (an I/O seen only where roles are unknown: its command there).
  if (ctx.sampling.polling()) {
    for (int i = 1; i <= 7 && !r.poll_period_ns; ++i)
      if (r.t.has(i)) r.poll_period_ns = ctx.sampling.period_start(r.t[i]);
    if (!r.poll_period_ns && iol && iol->has(kCommand)) r.poll_period_ns = ctx.sampling.period_start(iol->ts[kCommand]);
  }
  return r;
}

}  // namespace rdmatel::io_quality
