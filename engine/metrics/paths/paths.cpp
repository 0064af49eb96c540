// SPDX-License-Identifier: GPL-2.0-or-later
#include "engine/metrics/paths/paths.h"

#include <algorithm>
#include <bit>
#include <limits>
#include <string>

#include "engine/src/util/hash.h"
#include "rdmatel/clock_offset.h"
#include "rdmatel/notes.h"

namespace rdmatel::paths {
namespace {

// A sum of offsets or slacks taken back within +-kTimeMax (2^61 ns, 73 years: more than any two
// clocks are apart), where a hostile file's chain of them would leave 64 bits.
DurationNs within_span(__int128 v) { return DurationNs(std::clamp<__int128>(v, kTimeMin, kTimeMax)); }

// A data packet's first copy at a point stamped before the packet one PSN behind it, by less
// than this: their stamps strayed. A RoCE flow's packets keep their order on the wire, and a
// packet lost before the point comes again only a round trip after its successor passed (a
// resent copy of one the point saw, which may follow at once, is not a first copy).
constexpr DurationNs kStampInversionSpan = 1000;

const SettingSpec kSettings[] = {
    {"path_timeout", SettingType::kDuration, "ms", "10", 0.001, 3600000, "MS",
     "How long every other observation point has (on its own clock, after the reorder window) to show a "
     "packet's copy before the packet counts as lost on the hop after the last point that saw it"},
    {"max_path_packets", SettingType::kCount, "", "262144", 1, 1e9, "N",
     "Most packets waiting for their copies at other points; beyond it the oldest is settled at once (its "
     "missing copies count as lost)"},
    {"clock_offset", SettingType::kList, "", "", 0, 0, "NAME=NS",
     "Clock offset of observation point NAME (name or numeric interface id): what to add to its stamps to get "
     "the reference clock, ns (export offsets' offset_ns). Hop delays between points with an offset are "
     "corrected; without one for either point they are raw stamp differences, flagged raw",
     true, false},
    {"estimate_offsets", SettingType::kFlag, "", "off", 0, 1, "",
     "Correct hop delays by clock offsets estimated from the packets themselves: per hop, the copies that "
     "crossed it both ways (half the difference of the smallest delays each way); hops seen one way only, or "
     "with a --clock-offset for either point, are not estimated"},
};
const RecordSchema* const kOutputs[] = {&kPathSchema};
// path.hop: on a packet's frame at B: ref = the hop delay in ns (a signed value in the 64 bits),
// detail = whether it is raw and the same packet's frame at the previous point A
// (rdmatel/notes.h, path_hop_detail). path.lost: on the last frame that saw a packet lost after it
// (detail: the point it never reached). path.record: on a hop record's first frame at A (ref: the
// record's number, 1, 2, ... in emission order), for tables that show each record once.
const char* const kNotes[] = {"path.hop", "path.lost", "path.late", "path.record"};

// Whether a sighting of [first, last) is at point q. A plain loop: std::any_of's search, unrolled
// by four, costs more than the one or two sightings of a packet that it looks through.
template <typename S>
bool any_at(const S* first, const S* last, PointId q) {
  for (; first != last; ++first)
    if (first->point == q) return true;
  return false;
}

bool parse_offset(const std::string& spec, std::string& name, DurationNs& ns) {
  int64_t v = 0;
  if (!parse_clock_offset(spec, name, v)) return false;
  ns = v;
  return true;
}

}  // namespace

const ComponentSpec kSpec = {"paths", kPacketAllRoce, kOutputs, kSettings, kNotes};

Paths::Paths(Ctx& ctx)
    : note_hop_(note_kind("path.hop")),
      note_lost_(note_kind("path.lost")),
      note_late_(note_kind("path.late")),
      note_record_(note_kind("path.record")),
      timeout_(ctx.settings.duration("path_timeout")),
      max_pending_(ctx.settings.count("max_path_packets")),
      offset_specs_(ctx.settings.list("clock_offset")),
      estimate_offsets_(ctx.settings.flag("estimate_offsets")) {
  any_offset_ = !offset_specs_.empty();
  for (const std::string& s : offset_specs_) {
    std::string name;
    DurationNs ns;
    if (!parse_offset(s, name, ns))
      ctx.warn("clock_offset_syntax", [&] { return "--clock-offset " + s + " is not NAME=NS: ignored"; });
  }
}

std::optional<DurationNs> Paths::explicit_offset(PointId point, const Ctx& ctx) {
  if (point >= offsets_.size()) {
    offsets_.resize(size_t(point) + 1);
    offset_resolved_.resize(size_t(point) + 1, 0);
  }
  if (!offset_resolved_[point]) {
    offset_resolved_[point] = 1;
    const PointState& ps = ctx.points[point];
    for (const std::string& s : offset_specs_) {
      std::string name;
      DurationNs ns;
      // Given as what to add to the point's stamps; kept as how far its clock runs ahead.
      if (parse_offset(s, name, ns) && ps.named(name))
        offsets_[point] = -ns;
    }
  }
  return offsets_[point];
}

TimeNs Paths::on_clock_of(PointId home, PointId q, TimeNs ts, const Ctx& ctx) {
  if (any_offset_) return ts - explicit_offset(q, ctx).value_or(0) + explicit_offset(home, ctx).value_or(0);
  return ctx.clock.map(ts, q, home);
}

void Paths::on_packet(const Packet& p, Ctx& ctx) {
  // With one observation point there is no hop: keep nothing. A packet reaches this point a
  // reorder window after it arrived, by when every point whose packets lie near it has been
  // declared, in the CLI (all interfaces up front) as in the plugin (each on its first frame).
  if (p.flow == kNoFlow || ctx.points.size() < 2) return;
  if (p.point >= handled_.size()) handled_.resize(size_t(p.point) + 1, kTimeMin);
  if (p.ts > handled_[p.point]) {
    handled_[p.point] = p.ts;
    progress_.touch(p.point);
  }
  const uint32_t aeth = p.roce.has(kExtAeth) ? uint32_t(p.roce.aeth.syndrome) << 24 | (p.roce.aeth.msn & 0xFFFFFF) : 0;
  if (aeth && p.roce.op_known) {
    // A positive ACK or a READ response: the requests of its queue pair's other direction got
    // through (infer never takes that direction for lost).
    const IbOpClass c = p.roce.op()->op_class;
    if (c == IbOpClass::kReadResponse || (c == IbOpClass::kAcknowledge && aeth_kind(p.roce.aeth.syndrome) == AethKind::kAck)) {
      if (p.flow >= acknowledges_.size()) acknowledges_.resize(size_t(p.flow) + 1, 0);
      acknowledges_[p.flow] = 1;
    }
  }
  FlowState& fs = flow_state(p.flow);  // (no later flow_state of this call grows flows_ again)
  const Identity id{p.flow, p.roce.bth.psn, p.roce.payload_len, aeth, p.roce.ip_id, p.roce.bth.opcode};
  const uint32_t tag = SeqIndex::tag(hash(id));
  bool added;
  const uint32_t seq = index_.find_or_add(tag, queue_.end_seq(), [&](uint32_t s) { return queue_[s].id == id; }, added);
  Entry& e = added ? queue_.push_back() : queue_[seq];
  // Whether the packet was seen at this point already (a resend or a duplicate here).
  bool here = false;
  if (added) {
    if (watched_.may_hold(tag)) found_late(id, tag, p, ctx);
    e.id = id;
    e.tag = tag;
    e.due = p.ts + timeout_;
    e.seen.clear();
    e.points = 1;
  } else {
    here = any_at(e.seen.begin(), e.seen.end(), p.point);
    if (!here) {
      const bool beyond = e.points >= kMaxPathPoints;
      if (beyond) [[unlikely]]
        ctx.warn("path_points", [] {
          return "packets seen at more than " + std::to_string(kMaxPathPoints) +
                 " observation points: their sightings at further points are not laid on their paths (no hop to or "
                 "from those points)";
        });
      // A point beyond the path's points still has its clock related to those of the points
      // before (a sample with each of the first few): unrelated, what waits for every point
      // that may see a packet did not wait for it, an I/O seen along 1,500 points was reported
      // before its storage end saw it, and the 64th point was taken for its storage side (DAL
      // 58 us for 1).
      if (names_one_packet(p)) relate_clocks(fs, e, p, ctx);
      if (beyond) [[unlikely]] {
        if ((++since_drain_ & 1023) == 0) drain(ctx);
        return;
      }
      ++e.points;
    }
    // Settled a timeout after its first sighting, a packet resent for longer would have its
    // copies then in flight split from their sightings before (lost at one hop, first seen at
    // the next): it waits a timeout after its latest (at the first one's point, whose clock
    // `due` is on). Entries behind it in the queue wait for it (bounded by kMaxWaits and
    // --max-path-packets).
    // The same holds for a copy seen again at another point (identities that repeat within a
    // flow, as CNPs on IPv6 do: PSN 0 and no IP ID): its own copy at the first point may come
    // after `due`. Its stamp is taken to the first point's clock; a first sighting at a point
    // needs no more wait than the timeout gave it.
    if (here) {
      const Seen& first = e.seen[0];
      const TimeNs latest = p.point == first.point ? p.ts : on_clock_of(first.point, p.point, p.ts, ctx);
      e.due = std::min(first.ts + kMaxWaits * timeout_, std::max(e.due, latest + timeout_));
    }
  }
  if (p.roce.op_known && !here) note_stamp_order(fs, p, ctx);  // its first copy here
  e.seen.push_back(Seen{p.point, p.ts, p.frame});
  if (queue_.size() > max_pending_) {
    ctx.warn("max_path_packets", [&] {
      std::string why;
      for (PointId q = 0; q < ctx.points.size() && why.empty(); ++q)
        if (ctx.points.awaited(q))
          why = " (point " + ctx.points[q].name + " has carried no packet yet: its clock may run behind the others')";
      return "more than " + std::to_string(max_pending_) + " packets waiting for their copies at other points" + why +
             " (--max-path-packets): the oldest are settled early, copies still to come count as lost";
    });
    while (queue_.size() > max_pending_) settle_oldest(ctx);
  }
  // A point whose reorder buffer overflowed hands packets on before its horizon passes them:
  // settle by what the points handled too, not only at horizon advances.
  if ((++since_drain_ & 1023) == 0) drain(ctx);
}

// The clock relations' name of a flow's pair of endpoints and its direction within the pair.
static std::pair<uint64_t, int> endpoint_pair(const FlowKey& key) {
  const uint64_t a = hash_ip(key.src), b = hash_ip(key.dst);
  return {hash_mix(std::min(a, b) * 31 + std::max(a, b)), a < b ? 0 : 1};
}

inline std::pair<uint64_t, int> Paths::clock_pair(FlowState& fs, FlowId flow, const Ctx& ctx) {
  if (fs.clock_direction < 0) std::tie(fs.clock_pair, fs.clock_direction) = endpoint_pair(ctx.flows[flow].key);
  return {fs.clock_pair, fs.clock_direction};
}

bool Paths::names_one_packet(const Packet& p) {
  // A CNP carries no PSN (always 0): without an IPv4 ID either (IPv6, or a NIC that sends ID 0)
  // every CNP of a flow has one identity, and its first sightings at two points may be of two
  // CNPs. Where the capture began after a CNP passed the points before (it shows at the last one
  // only), the next CNP, milliseconds later, is the first at those points: a sample of the wrong
  // sign, which the few packets of an endpoint pair do not average out. Probe seed 1971
  // (nvme-midstream, ECN marks between leafA-gpu and spine1): one CNP at leafA-gpu, the first
  // frame of the capture, paired with the next 2.28 ms later at spine1 and leafB-stor turned
  // passes_first round for its two hosts: their flows' paths were laid spine1 -> leafA-gpu ->
  // leafB-stor (raw delays of -6.7 us), and the offsets' uncertainties grew to 14 and 94 us.
  // Their copies are still matched along the path the other packets tell.
  return p.roce.ip_id != 0 || !p.roce.op_known || p.roce.op()->op_class != IbOpClass::kCnp;
}

inline void Paths::relate_clocks(FlowState& fs, const Entry& e, const Packet& p, Ctx& ctx) {
  // Only a packet's first sighting at each point (the caller's check): a later one is a resend
  // or a duplicate, whose difference to the other point holds the time between the copies too.
  const auto [pair, direction] = clock_pair(fs, p.flow, ctx);
  const Seen* seen = e.seen.begin();
  const uint64_t refused = ctx.clock.samples_refused();
  size_t related = 0;
  for (size_t i = 0; i < e.seen.size() && related < kRelatedPoints; ++i)
    if (!any_at(seen, seen + i, seen[i].point)) {
      ctx.clock.add_sample(seen[i].point, seen[i].ts, p.point, p.ts, direction, pair);
      ++related;
    }
  if (ctx.clock.samples_refused() != refused) [[unlikely]]
    ctx.warn("clock_pairs", [] {
      return "more than " + std::to_string(ClockRelations::kMaxLinks) +
             " pairs of observation points saw the same packets: the clock offsets of further pairs are not estimated "
             "(their clocks are still related through the others)";
    });
}

// How far point q has come: everything stamped before its horizon has been handled, and, packets
// being handled in each point's stamp order, everything before the latest packet it handled.
inline TimeNs Paths::passed(PointId q, const PointState& ps) const {
  return q < handled_.size() ? std::max(ps.horizon, handled_[q]) : ps.horizon;
}

// passed(q) + progress_offset(q), less progress_offset(home), is on_clock_of(home, q, passed(q)):
// the points ordered by the sum (progress_) are in the order of every home's clock.
inline DurationNs Paths::progress_offset(PointId q, const Ctx& ctx) {
  return any_offset_ ? -explicit_offset(q, ctx).value_or(0) : ctx.clock.to_root(q);
}

// passed(q) less its first stamp, held at the ends of 64 bits.
inline int64_t Paths::elapsed(PointId q, const PointState& ps) const {
  int64_t e;
  if (__builtin_sub_overflow(passed(q, ps), ps.first, &e)) e = ps.first < 0 ? INT64_MAX : INT64_MIN;
  return e;
}

// The sum, held at the ends of 64 bits (a hostile file's stamps and offsets at the ends of their
// span): taken back to the span after home's offset, as on_clock_of does, it is the same.
inline int64_t Paths::progress_key(PointId q, const Ctx& ctx) {
  int64_t key;
  const TimeNs t = passed(q, ctx.points[q]);
  const DurationNs o = progress_offset(q, ctx);
  if (__builtin_add_overflow(t, o, &key)) key = o > 0 ? INT64_MAX : INT64_MIN;
  return key;
}

// A declared point that carried no packet yet may still show copies of what waits, seconds
// later in the input: two sniffers' files with unsynchronised clocks, merged by stamp, put the
// second one's first packet as far after the first one's as its clock runs behind. Settled
// before it, every packet of the first seconds would count lost on its hop (and its copies
// would never relate the clocks). So nothing is settled until it carries one or goes quiet
// (--idle-point), but for the packets beyond --max-path-packets.
std::optional<TimeNs> Paths::bound_for(PointId home, const Ctx& ctx, TimeNs below) {
  const PointTable& pts = ctx.points;
  // Second: elapsed since the point's first packet (the reading as if the captures started
  // together, below).
  progress_.sync(pts, ctx.clock, ctx.reorder_window, [&](PointId q) { return progress_key(q, ctx); },
                 [&](PointId q) { return elapsed(q, pts[q]); });
  // The least over the active points (a quiet point holds nothing back).
  if (!progress_.any_active(0)) return kTimeMax;
  TimeNs b = any_offset_ ? progress_.least(0) - progress_offset(home, ctx)
                         : ClockRelations::within_span(__int128(progress_.least(0)) - ctx.clock.to_root(home));
  if (b < below) return std::nullopt;
  // Points whose clocks are not related to home's yet: that takes a packet seen at both, which
  // waits here. Its copy at q comes as much later in the input as q's clock runs ahead (10 ms or
  // 10 s), so taking q's stamps for home's (raw, as above) settles it alone first whenever the
  // clocks are further apart than the timeout, and they are never related. While either point is
  // new, q's stamps are also read as if the two captures started together (elapsed since each
  // one's first packet), and the later of the two readings is waited for: the least elapsed of
  // such points, plus home's first stamp.
  if (any_offset_) return b;
  const PointId root = ctx.clock.root(home);
  const bool home_new = pts.is_new(home, ctx.reorder_window);
  if (!(home_new ? progress_.any_active_outside(root) : progress_.any_new_outside(root))) return b;
  const PointId q = progress_.least_second_outside(root, !home_new);
  if (q == kNoPoint) return b;
  // (Stamps lie within +-2^62: the difference of two fits in 64 bits, its sum with a third
  // may not, for a hostile file's stamps at both ends of that range.)
  const TimeNs shift = pts[home].first - pts[q].first;
  TimeNs as_if_started_together;
  if (__builtin_add_overflow(passed(q, pts[q]), shift, &as_if_started_together))
    as_if_started_together = shift > 0 ? kTimeMax : kTimeMin;
  b = std::min(b, as_if_started_together);
  if (b < below) return std::nullopt;
  return b;
}

void Paths::on_advance(PointId, Ctx& ctx) {
  if (queue_.empty()) return;
  drain(ctx);
}

inline void Paths::settle_oldest(Ctx& ctx) {
  // Settled where it lies: settling adds nothing to the queue, and moving the entry out first
  // copied its sightings once per packet.
  Entry& e = queue_.front();
  index_.erase(e.tag, queue_.front_seq());
  settling_ = &e;
  settle(e.id, e, ctx);
  settling_ = nullptr;
  queue_.pop_front();
}

void Paths::drain(Ctx& ctx, bool all) {
  if (!all && ctx.points.any_awaited()) return;
  ++drains_;
  if (bounds_.size() < ctx.points.size()) bounds_.resize(ctx.points.size());
  while (!queue_.empty()) {
    if (!all) {
      // Due on its first sighting's own clock: the clock relations learned since it came in
      // apply (a common clock fixed when it came would be out of date once they are).
      const Entry& front = queue_.front();
      Bound& b = bounds_[front.seen[0].point];
      if (b.drain != drains_) {
        const std::optional<TimeNs> bound = bound_for(front.seen[0].point, ctx, front.due);
        if (!bound) break;  // some point is behind its due: it waits, and so do the ones after it
        b = {drains_, *bound};
      }
      if (front.due > b.value) break;
    }
    settle_oldest(ctx);
  }
}

inline void Paths::note_stamp_order(FlowState& fs, const Packet& p, Ctx& ctx) {
  const IbOpClass c = p.roce.op()->op_class;
  if (c != IbOpClass::kSend && c != IbOpClass::kWrite && c != IbOpClass::kReadResponse) return;
  const uint32_t psn = p.roce.bth.psn;
  for (Newest& n : fs.newest) {
    if (n.point != p.point) continue;
    const int32_t ahead = psn::distance(n.psn, psn);  // > 0: newer than the newest
    if (ahead > 0) {
      n.psn = psn;
      n.ts = p.ts;
    } else if (ahead == -1 && p.ts - n.ts < kStampInversionSpan) {
      ctx.clock.note_stamp_noise(p.point, p.ts - n.ts);
    }
    return;
  }
  fs.newest.push_back(Newest{p.point, psn, p.ts});
}

PathRecord& Paths::add_hop(FlowId flow, PointId a, PointId b, const Ctx& ctx) {
  FlowState& fs = flows_[flow];
  PathRecord& r = records_.emplace_back();
  fs.hops.push_back(Hop{a, b, &r});
  const FlowKey& key = ctx.flows[flow].key;
  r.src = key.src;
  r.dst = key.dst;
  r.dst_qpn = key.dst_qpn;
  r.from_point = a;
  r.to_point = b;
  r.path_inferred = fs.inferred;
  const auto oa = explicit_offset(a, ctx);
  const auto ob = explicit_offset(b, ctx);
  if (oa || ob) r.offset_applied_ns = oa.value_or(0) - ob.value_or(0);
  return r;
}

std::optional<DurationNs> Paths::estimated_correction(const PathRecord& r) const {
  if (!estimate_offsets_ || r.offset_applied_ns) return std::nullopt;
  auto e = hop_clock_.estimate(r.from_point, r.to_point);  // t_B ≈ t_A + offset
  if (!e || !e->both_directions) return std::nullopt;
  return -e->offset;
}

void Paths::apply_estimate(PathRecord& r) const {
  // The delays were summed raw; the offset is one constant per hop, so the final estimate
  // corrects them exactly.
  const std::optional<DurationNs> c = estimated_correction(r);
  if (!c) return;
  r.offset_applied_ns = *c;
  r.offset_estimated = true;
  if (!r.delivered) return;
  r.min_ns += *c;
  r.max_ns += *c;
  r.sum_ns += double(*c) * double(r.delivered);
}

Paths::PointOffsets Paths::chain_offsets(PointId home, std::span<const Seen> seen, const Ctx& ctx) {
  PointOffsets out;  // the points of `seen`, home first
  for (const Seen& x : seen)
    if (std::find_if(out.begin(), out.end(), [&](const PointOffset& o) { return o.point == x.point; }) == out.end())
      out.push_back({x.point, Relative{}});
  std::swap(*std::find_if(out.begin(), out.end(), [&](const PointOffset& o) { return o.point == home; }), out[0]);
  if (out.size() < 3) {
    for (auto& [q, r] : out) {
      r = relative_offset(home, q, ctx);
      if (q != home) r.via = home;
    }
    return out;
  }
  // With --clock-offset too: the given offsets add up along any chain to the direct one, and
  // the chain of the core's estimates is what tells how far the stamps stray relative to each
  // other (relative_offset), as without.
  // Prim's tree from home over the pairs' estimates, by the slack each adds: a point is reached
  // through the points whose clocks are best related to it (two ports of a leaf relate within
  // ns though each is microseconds uncertain against the far end of the path).
  const size_t n = out.size();
  SmallVector<uint8_t, 8> done;
  SmallVector<DurationNs, 8> best;
  for (size_t i = 0; i < n; ++i) {
    done.push_back(0);
    best.push_back(i == 0 ? 0 : kTimeMax);
  }
  for (size_t round = 0; round < n; ++round) {
    size_t u = n;
    for (size_t i = 0; i < n; ++i)
      if (!done[i] && best[i] != kTimeMax && (u == n || best[i] < best[u])) u = i;
    if (u == n) {
      // The rest are related to none of these: their stamps as they are, or with the given
      // offsets (as exact as the stamps are, then: nothing tells otherwise).
      if (any_offset_)
        for (size_t v = 0; v < n; ++v)
          if (!done[v]) out[v].rel = Relative{given_offset(home, out[v].point, ctx), 0, home};
      break;
    }
    done[u] = 1;
    for (size_t v = 0; v < n; ++v) {
      if (done[v]) continue;
      const Relative r = relative_offset(out[u].point, out[v].point, ctx);
      if (r.offset == 0 && r.slack == 0) continue;  // no estimate both ways
      // (Saturated at the stamps' span: the clocks' offsets are each within it, a chain's sum may not be.)
      const DurationNs slack = within_span(__int128(out[u].rel.slack) + r.slack);
      if (slack < best[v]) {
        best[v] = slack;
        out[v].rel = Relative{within_span(__int128(out[u].rel.offset) + r.offset), slack, out[u].point};
      }
    }
  }
  return out;
}

DurationNs Paths::given_offset(PointId h, PointId q, const Ctx& ctx) {
  return explicit_offset(q, ctx).value_or(0) - explicit_offset(h, ctx).value_or(0);
}

Paths::Relative Paths::relative_offset(PointId h, PointId q, const Ctx& ctx) {
  if (h == q) return {};
  auto e = ctx.clock.estimate(h, q);
  if (!e || !e->both_directions) return any_offset_ ? Relative{given_offset(h, q, ctx), 0} : Relative{};
  if (any_offset_) {
    // A given offset replaces the estimate, but it makes no stamp exact: stamps that stray
    // (jitter, two ports of one switch) still seem early by as much as the estimate's
    // uncertainty says (Estimate::within, at least the noise seen), and by as much again as the
    // given offset and the estimate disagree. With a slack of 0, as once, a resend's copy stamped
    // at a leaf's storage port a few ns before its uplink could not follow its own copy and
    // joined one lost a hop earlier: a --clock-offset of 0 changed which copies were paired.
    // Given the offset the estimate rounds to (0 within its uncertainty, as below), the
    // sightings are those without --clock-offset, and so is the matching.
    const DurationNs given = given_offset(h, q, ctx);
    const DurationNs apart = given > e->offset ? given - e->offset : e->offset - given;
    return {given, e->within() + apart};
  }
  // An estimate within its uncertainty of 0 is no evidence of an offset (I/Os crossing between
  // hosts on both sides mix the directions it sorts samples by): keep the stamps, with the slack.
  // Noisy stamps move the estimate by as much as they are seen to stray (Estimate::within).
  const DurationNs unc = e->within();
  const DurationNs mag = e->offset < 0 ? -e->offset : e->offset;
  if (mag <= unc) return {0, unc + mag};
  return {e->offset, unc};
}

void Paths::settle(const Identity& id, Entry& e, Ctx& ctx) {
  FlowState& fs = flow_state(id.flow);
  std::vector<PointId>& order = fs.order;
  // The common case: one sighting per point, every point already on the flow's path. The copy is
  // the sightings in path order (an insertion sort of a handful); no clock is needed.
  const size_t n = e.seen.size();
  const size_t len = order.size();
  if (len >= 2 && n <= 8) {
    const Seen* seen = e.seen.begin();
    auto position = [&](PointId q) {  // len: not on the path
      size_t at = 0;
      while (at < len && order[at] != q) ++at;
      return at;
    };
    size_t pos[8];
    const Seen* copy[8];
    bool simple = true;
    if (n == 2) {
      // Once at each of two points, the packet of every two-point capture: one comparison.
      const size_t a = position(seen[0].point), b = position(seen[1].point);
      const bool swap = b < a;
      pos[0] = swap ? b : a;
      pos[1] = swap ? a : b;
      copy[0] = &seen[swap ? 1 : 0];
      copy[1] = &seen[swap ? 0 : 1];
      simple = pos[1] < len && pos[0] != pos[1];
    } else {
      for (size_t i = 0; i < n && simple; ++i) {
        const size_t at = position(seen[i].point);
        size_t k = i;
        for (; k > 0 && pos[k - 1] > at; --k) {
          pos[k] = pos[k - 1];
          copy[k] = copy[k - 1];
        }
        pos[k] = at;
        copy[k] = &seen[i];
        simple = at < len && (k == 0 || pos[k - 1] != at);  // equal positions sort next to each other
      }
    }
    if (simple) {
      if (n && pos[0] > 0) [[unlikely]]  // (n: an entry has a sighting at least)
        note_missed(fs, pos[0], copy[0]->point, copy[0]->ts);
      for (size_t k = 0; k + 1 < n; ++k) count_hop(fs, id.flow, *copy[k], *copy[k + 1], ctx);
      const Seen& last = *copy[n - 1];
      copy_ended(fs, id.flow, Sighting{last.point, last.ts, last.ts, last.frame, 0}, pos[n - 1], ctx);
      return;
    }
  }
  // Several copies, or a point new to the flow: stamps of different points are compared, on the
  // best common clock known. In a buffer kept from packet to packet (but not a storm's).
  std::vector<Sighting>& s = sightings_;
  if (s.capacity() > 4 * kMaxParked) std::vector<Sighting>().swap(s);
  s.clear();
  const PointId home = e.seen[0].point;
  const PointOffsets rel = chain_offsets(home, e.seen, ctx);
  for (const Seen& x : e.seen) {
    const Relative r = std::find_if(rel.begin(), rel.end(), [&](const PointOffset& o) { return o.point == x.point; })->rel;
    s.push_back(Sighting{x.point, x.ts, x.ts - r.offset, x.frame, r.slack, r.via});
  }
  if (!fs.decided) {
    // The flow's first packets vote on its path; one alone can mislead (two ports of a switch
    // closer than the stamps' noise).
    if (!fs.votes) fs.votes = std::make_unique<PathVotes>();
    fs.votes->add(s);
    const bool room = fs.parked.size() < kMaxParked;
    if (room) {
      if (fs.parked.empty()) fs.parked.reserve(kVoters);  // a flow decided by its first: one allocation
      fs.parked.emplace_back(s.begin(), s.end());
    }
    if (fs.votes->voters() == 0) {
      // Seen at one point only so far: once the parked are many, the path the other flows
      // show, if they show one (else the packet is counted, to be laid if one is inferred).
      if (room) return;
      if (!infer(id.flow, ctx)) {
        for (const Sighting& x : s) add_to(fs.unplaced, x);  // each a copy (resent, given twice)
        return;
      }
    } else {
      if (fs.votes->voters() < kVoters && room) return;
      decide(id.flow, ctx);
      if (room) return;
    }
  }
  lay(id.flow, s, ctx);
}

void Paths::decide(FlowId flow, Ctx& ctx) {
  FlowState& fs = flows_[flow];
  fs.decided = true;
  // Stamps compared across points, even with the offsets taken off, order two ports of one
  // switch by less than the offsets' uncertainty and the stamps' jitter (a few hundred ns):
  // where the flow's endpoints sent packets both ways across two points, which way this flow
  // goes between them shows from the samples themselves, with no clock compared.
  // (Not a structured binding: clang before 16 does not capture those in a lambda.)
  const std::pair<uint64_t, int> endpoints = clock_pair(fs, flow, ctx);
  fs.votes->settle_pairs([&](PointId a, PointId b) {
    return ctx.clock.passes_first(a, b, endpoints.first, endpoints.second);
  });
  fs.order = fs.votes->order();
  fs.votes.reset();
  inference_.learn(ctx.flows[flow].key, fs.order);
  std::vector<std::vector<Sighting>> waiting = std::move(fs.parked);
  fs.parked.clear();
  for (auto& w : waiting) lay(flow, w, ctx);
}

bool Paths::started_by(PointId p, PointId next, TimeNs ts, const Ctx& ctx) {
  // Within a path timeout of its first packet it counts as capturing (that packet is as likely
  // the first to come as the first captured).
  const PointState& n = ctx.points[next];
  return n.seen && on_clock_of(p, next, n.first, ctx) - timeout_ <= ts;
}

void Paths::count_lost_inferred(FlowId flow, const Tally& t, PointId next, Ctx& ctx) {
  PathRecord& r = hop(flow, t.point, next, ctx);
  r.path_inferred = true;
  if (r.packets == 0 || t.first_ns < r.first_ns) {
    r.first_ns = t.first_ns;
    r.first_frame = t.first_frame;
  }
  r.last_ns = std::max(r.last_ns, t.last_ns);
  r.packets += t.packets;
  r.lost += t.packets;
}

bool Paths::answered(FlowId flow, const Ctx& ctx) const {
  const Flow& f = ctx.flows[flow];
  return f.peer != kNoFlow && f.peer < acknowledges_.size() && acknowledges_[f.peer];
}

bool Paths::infer(FlowId flow, Ctx& ctx) {
  FlowState& fs = flows_[flow];
  if (answered(flow, ctx)) return false;
  std::optional<std::vector<PointId>> path = inference_.infer(ctx.flows[flow].key);
  if (!path) return false;
  auto next_of = [&](PointId p) {
    auto at = std::find(path->begin(), path->end(), p);
    return at != path->end() && at + 1 != path->end() ? *(at + 1) : kNoPoint;
  };
  for (const std::vector<Sighting>& w : fs.parked)
    for (const Sighting& x : w)
      if (next_of(x.point) == kNoPoint) return false;
  for (const Tally& u : fs.unplaced)
    if (next_of(u.point) == kNoPoint) return false;
  fs.decided = fs.inferred = true;
  fs.order = *path;
  fs.votes.reset();
  // Counted, not marked frame by frame (an inferred hop is no sighting of the frame's): what was
  // seen before the next point was capturing is not known lost.
  std::vector<Tally> lost;
  for (const std::vector<Sighting>& w : fs.parked)
    for (const Sighting& x : w)
      if (started_by(x.point, next_of(x.point), x.ts, ctx)) add_to(lost, x);
  for (const Tally& u : fs.unplaced)
    if (started_by(u.point, next_of(u.point), u.first_ns, ctx)) add_to(lost, u);
  for (const Tally& t : lost) count_lost_inferred(flow, t, next_of(t.point), ctx);
  std::vector<std::vector<Sighting>>().swap(fs.parked);
  std::vector<Tally>().swap(fs.unplaced);
  return true;
}

void Paths::extend(FlowId flow, Ctx& ctx) {
  FlowState& fs = flows_[flow];
  if (fs.inferred || fs.order.size() < 2 || answered(flow, ctx)) return;
  const PointId last = fs.order.back();
  const PointId b = inference_.side_of_endpoint(ctx.flows[flow].key.dst);
  if (b == kNoPoint || std::find(fs.order.begin(), fs.order.end(), b) != fs.order.end()) return;
  const std::optional<PointId> next = inference_.next_towards(last, b);
  if (!next) return;
  auto t = std::find_if(fs.ends.begin(), fs.ends.end(), [&](const Tally& x) { return x.point == last; });
  if (t == fs.ends.end() || !started_by(last, *next, t->first_ns, ctx)) return;
  count_lost_inferred(flow, *t, *next, ctx);
}

namespace {
// The offset a packet's sightings took off point p's stamps (ts - ref of its sighting there).
DurationNs offset_of(std::span<const Sighting> s, PointId p) {
  for (const Sighting& x : s)
    if (x.point == p) return x.ts - x.ref;
  return 0;
}
}  // namespace

void Paths::lay(FlowId flow, std::span<const Sighting> s, Ctx& ctx) {
  FlowState& fs = flows_[flow];
  std::vector<PointId>& order = fs.order;
  const size_t known = order.size();
  learn_order(order, s);
  if (order.size() > known && !fs.ended.empty()) {
    // The path grew: copies that ended where it ended before may have been lost after it.
    std::vector<Sighting> still;
    for (const Sighting& x : fs.ended) {
      auto at = std::find(order.begin(), order.end(), x.point);
      if (at != order.end() && at + 1 != order.end()) count_lost(flow, x, *(at + 1), ctx);
      else still.push_back(x);
    }
    fs.ended = std::move(still);
  }
  // The hop's average delay so far tells copies resent a few µs apart from each other.
  auto expected = [&](PointId a, PointId b) -> std::optional<DurationNs> {
    for (const Hop& h : fs.hops)
      if (h.from == a && h.to == b) {
        std::optional<DurationNs> d = h.record->avg_ns();
        // Without --clock-offset the records hold raw stamp differences, while the sightings'
        // reference stamps have the estimated offsets taken off: take them off the delay too,
        // or a copy is matched by the offset (a resend as far from the right copy as the clocks
        // are apart wins).
        // (Saturated: a hostile file's delays and offsets lie near the ends of 64 bits.)
        if (d && !any_offset_)
          *d = within_span(__int128(*d) - offset_of(s, b) + offset_of(s, a));
        return d;
      }
    return std::nullopt;
  };
  for (const Copy& c : matcher_.match(s, order, expected)) apply_copy(fs, flow, c, ctx);
}

template <typename S>
void Paths::count_hop(FlowState& fs, FlowId flow, const S& a, const S& b, Ctx& ctx) {
  PathRecord& r = hop(fs, flow, a.point, b.point, ctx);
  DurationNs d = b.ts - a.ts + r.offset_applied_ns.value_or(0);
  // The copies' own clock evidence for --estimate-offsets: direction by point order, so the
  // two directions of travel over the hop are told apart whatever the endpoints are.
  if (estimate_offsets_) hop_clock_.add_sample(a.point, a.ts, b.point, b.ts, a.point < b.point ? 0 : 1);
  if (r.packets == 0 || a.ts < r.first_ns) {
    r.first_ns = a.ts;
    r.first_frame = a.frame;
  }
  r.last_ns = std::max(r.last_ns, a.ts);
  ++r.packets;
  count_delivered(r, a.frame, b.frame, d, ctx);
}

void Paths::apply_copy(FlowState& fs, FlowId flow, std::span<const Sighting> c, Ctx& ctx) {
  if (!c.empty() && !fs.order.empty() && c.front().point != fs.order.front())
    note_missed(fs, size_t(std::find(fs.order.begin(), fs.order.end(), c.front().point) - fs.order.begin()),
                c.front().point, c.front().ts);
  for (size_t i = 0; i + 1 < c.size(); ++i) count_hop(fs, flow, c[i], c[i + 1], ctx);
  const Sighting& last = c.back();
  const auto at = std::find(fs.order.begin(), fs.order.end(), last.point);
  if (at != fs.order.end()) copy_ended(fs, flow, last, size_t(at - fs.order.begin()), ctx);
}

inline void Paths::copy_ended(FlowState& fs, FlowId flow, const Sighting& last, size_t at, Ctx& ctx) {
  if (at + 1 < fs.order.size()) return count_lost(flow, last, fs.order[at + 1], ctx);
  add_to(fs.ends, last);
  if (fs.ended_done) return;
  if (fs.ended.size() < kMaxParked) {
    fs.ended.push_back(last);
  } else {
    fs.ended_done = true;
    std::vector<Sighting>().swap(fs.ended);
  }
}

void Paths::note_delivered(const PathRecord& r, uint64_t a_frame, uint64_t b_frame, DurationNs d, Ctx& ctx) {
  // An estimated offset is final only at the end: a frame shows the estimate of its time.
  std::optional<DurationNs> est = estimated_correction(r);
  ctx.note(b_frame, note_hop_, std::bit_cast<uint64_t>(int64_t(d + est.value_or(0))),
           path_hop_detail(!r.offset_applied_ns && !est, b_frame, a_frame));
}

Paths::Capture Paths::capturing(PointId p, PointId next, TimeNs ts, const Ctx& ctx) {
  const PointState& n = ctx.points[next];
  if (!n.seen) return Capture::kNo;
  const TimeNs earliest = on_clock_of(p, next, n.first, ctx);
  const TimeNs latest = on_clock_of(p, next, n.watermark, ctx);
  // Outside its packets: decided at the end (decide_outside), when what it missed is known.
  if (ts < earliest || ts > latest) return Capture::kOutside;
  // In a gap, and a path timeout before it: a copy on its way when the file before the gap ended
  // would have come in the missing one.
  const bool in_gap = std::any_of(n.gaps.begin(), n.gaps.end(), [&](const auto& g) {
    return on_clock_of(p, next, g.first, ctx) - timeout_ < ts && ts < on_clock_of(p, next, g.second, ctx);
  });
  if (!in_gap) return Capture::kYes;
  if (next >= uncaptured_.size()) uncaptured_.resize(size_t(next) + 1);
  ++uncaptured_[next].in_gaps;
  return Capture::kNo;
}

void Paths::note_missed(const FlowState& fs, size_t at, PointId first, TimeNs ts) {
  for (size_t k = 0; k < at && k < fs.order.size(); ++k) {
    Missed& m = missed_[{fs.order[k], first}];
    m.earliest = std::min(m.earliest, ts);
    m.latest = std::max(m.latest, ts);
  }
}

void Paths::decide_outside(Ctx& ctx) {
  // Copies missing at a point before its first packet or after its latest: not captured there
  // when the point's capture began more than a path timeout after the point before it (ended
  // more than a path timeout before that one's), and the point missed copies that passed it in
  // that time (seen first further down their path: it was not recording). The points of one
  // capture start and stop within moments, and a link that loses every copy at the start or the
  // end of the capture leaves its downstream point the packets of the other direction: lost.
  auto missed = [&](PointId q, bool before_first) {
    const PointState& n = ctx.points[q];
    for (const auto& [key, m] : missed_) {
      if (key.first != q) continue;
      if (before_first ? on_clock_of(q, key.second, m.earliest, ctx) < n.first
                       : on_clock_of(q, key.second, m.latest, ctx) > n.watermark)
        return true;
    }
    return false;
  };
  for (const Outside& o : outside_) {
    const PointState& n = ctx.points[o.next];
    const PointState& p = ctx.points[o.last.point];
    const TimeNs earliest = on_clock_of(o.last.point, o.next, n.first, ctx);
    const TimeNs latest = on_clock_of(o.last.point, o.next, n.watermark, ctx);
    const bool before = o.last.ts < earliest && earliest - p.first > timeout_ && missed(o.next, true);
    const bool after = o.last.ts > latest && p.watermark - latest > timeout_ && missed(o.next, false);
    if (!before && !after) {
      count_lost_now(o.flow, o.last, o.next, ctx);
      continue;
    }
    if (o.next >= uncaptured_.size()) uncaptured_.resize(size_t(o.next) + 1);
    ++(before ? uncaptured_[o.next].before : uncaptured_[o.next].after);
  }
  std::vector<Outside>().swap(outside_);
}

void Paths::warn_uncaptured(Ctx& ctx) const {
  for (PointId q = 0; q < uncaptured_.size(); ++q) {
    const Uncaptured& u = uncaptured_[q];
    if (!u.before && !u.after && !u.in_gaps) continue;
    ctx.warn("path_uncaptured_" + std::to_string(q), [&] {
      std::string when;
      auto add = [&](uint64_t n, const char* what) {
        if (n) when += (when.empty() ? "" : ", ") + std::to_string(n) + what;
      };
      add(u.before, " before its first packet");
      add(u.after, " after its last");
      add(u.in_gaps, " while it captured nothing (a missing ring file)");
      return "packets seen at the points before " + ctx.points[q].name + " on their paths when " + ctx.points[q].name +
             " was not capturing were not counted lost on the hop to it: " + when +
             " (its capture started later, ended earlier or has a gap: nothing tells whether they reached it)";
    });
  }
}

void Paths::count_lost(FlowId flow, const Sighting& last, PointId next, Ctx& ctx) {
  switch (capturing(last.point, next, last.ts, ctx)) {
    case Capture::kNo: return;
    case Capture::kOutside:
      if (outside_.size() < kMaxOutside) {
        outside_.push_back(Outside{flow, last, next});
        return;
      }
      break;  // beyond the bound: lost, as before the point's span was known
    case Capture::kYes: break;
  }
  count_lost_now(flow, last, next, ctx);
}

void Paths::count_lost_now(FlowId flow, const Sighting& last, PointId next, Ctx& ctx) {
  PathRecord& r = hop(flow, last.point, next, ctx);
  if (r.packets == 0 || last.ts < r.first_ns) {
    r.first_ns = last.ts;
    r.first_frame = last.frame;
  }
  r.last_ns = std::max(r.last_ns, last.ts);
  ++r.packets;
  ++r.lost;
  if (r.path_inferred) return;
  ctx.note(last.frame, note_lost_, 0, next);
  if (!settling_) return;
  const TaggedIdentity key{settling_->id, settling_->tag};
  if (lost_watch_.insert_or_assign(key, LostCopy{last.point, next, last.ts, last.frame, &r}).second)
    watched_.add(key.tag);
  lost_order_.push_back(key);
  if (lost_order_.size() > kMaxLostWatched) {
    if (lost_watch_.erase(lost_order_.front())) watched_.remove(lost_order_.front().tag);
    lost_order_.pop_front();
  }
}

void Paths::found_late(const Identity& id, uint32_t tag, const Packet& p, Ctx& ctx) {
  auto it = lost_watch_.find(TaggedIdentity{id, tag});
  if (it == lost_watch_.end()) return;
  const LostCopy w = it->second;
  lost_watch_.erase(it);
  watched_.remove(tag);  // its place in lost_order_ goes when it comes to the front
  // Seen first elsewhere (its point again: resent), it was lost; much later, it is another packet.
  if (p.point != w.to || on_clock_of(w.from, p.point, p.ts, ctx) - w.ts > kLateSpan) return;
  PathRecord& r = *w.record;
  const DurationNs d = p.ts - w.ts + r.offset_applied_ns.value_or(0);
  --r.lost;
  count_delivered(r, w.frame, p.frame, d, ctx);
  ctx.note(w.frame, note_late_, p.frame, w.to);  // not lost after all
  ctx.warn("late_copies", [&] {
    return "packets reached the next observation point later than --path-timeout (" +
           std::to_string(timeout_ / kNsPerMs) + " ms) after they left the one before (first: frame " +
           std::to_string(w.frame) + " at " + ctx.points[w.from].name + ", frame " + std::to_string(p.frame) + " at " +
           ctx.points[w.to].name + "): they count as delivered, with their delay; a larger --path-timeout waits "
           "for them in time for the frames' own notes";
  });
}

void Paths::finish(Ctx& ctx) {
  drain(ctx, true);
  // Flows with fewer multi-point packets than kVoters: decided by those they had.
  for (FlowId f = 0; f < flows_.size(); ++f)
    if (!flows_[f].decided && flows_[f].votes && flows_[f].votes->voters()) decide(f, ctx);
  // Flows seen at one point only: on the path the others show, if they show one. Flows that
  // stopped short of the point next to their destination: lost on the way there.
  for (FlowId f = 0; f < flows_.size(); ++f)
    if (!flows_[f].decided && flows_[f].votes && !flows_[f].parked.empty()) infer(f, ctx);
  for (FlowId f = 0; f < flows_.size(); ++f)
    if (flows_[f].decided) extend(f, ctx);
  decide_outside(ctx);
  warn_uncaptured(ctx);
  // Per flow (in the order flows were first seen), hops in path order.
  uint64_t n = 0;
  for (FlowState& fs : flows_) {
    auto pos = [&](PointId p) { return size_t(std::find(fs.order.begin(), fs.order.end(), p) - fs.order.begin()); };
    std::stable_sort(fs.hops.begin(), fs.hops.end(), [&](const Hop& x, const Hop& y) {
      return pos(x.from) != pos(y.from) ? pos(x.from) < pos(y.from) : pos(x.to) < pos(y.to);
    });
    for (const Hop& h : fs.hops) {
      PathRecord& r = *h.record;
      apply_estimate(r);
      ctx.emit(kPathSchema, &r);
      ctx.note(r.first_frame, note_record_, ++n);
    }
  }
  for (const std::string& s : offset_specs_) {
    std::string name;
    DurationNs ns;
    if (!parse_offset(s, name, ns)) continue;
    if (!ctx.points.any_named(name))
      ctx.warn("clock_offset_point", [&] { return "--clock-offset " + s + " names no observation point of the capture"; });
  }
  flows_.clear();
  inference_ = PathInference{};
  acknowledges_.clear();
  records_.clear();
  lost_watch_.clear();
  watched_.clear();
  lost_order_.clear();
  handled_.clear();
  index_.clear();
  queue_.clear();
}

}  // namespace rdmatel::paths
