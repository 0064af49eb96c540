// SPDX-License-Identifier: GPL-2.0-or-later
#include "engine/metrics/congestion/congestion.h"

#include <algorithm>
#include <string>
#include <vector>

#include "rdmatel/point_speed.h"

namespace rdmatel::congestion {
namespace {

const SettingSpec kSettings[] = {
    {"pfc_storm", SettingType::kDuration, "ms", "10", 0.001, 3600000, "MS",
     "A priority paused without a break for this long at one point is a PFC storm"},
    {"link_speed", SettingType::kCount, "", "100", 0, 1000000, "GBPS",
     "Link speed in Gb/s for PFC pause times where the capture does not record the interface's speed "
     "(pcapng if_speed); 0: pause times only where it does"},
    {"point_speed", SettingType::kList, "", "", 0, 0, "NAME=GBPS",
     "Link speed of observation point NAME (name or numeric interface id) in Gb/s for its PFC pause times, "
     "before the capture's if_speed and --link-speed",
     true, false},
};
const RecordSchema* const kOutputs[] = {&kCongestionSchema};
// cong.pfc: one per enabled priority of a PFC frame (detail: priority | quanta << 8; ref: the
// pause time in ns, 0 when the link speed is unknown). cong.pfc_storm: on the frame that began a
// pause that became a storm (detail: priority; ref: its length in ns).
const char* const kNotes[] = {"cong.ecn_ce", "cong.cnp", "cong.pfc", "cong.pfc_storm"};

// One pause quantum is 512 bit times.
DurationNs quanta_ns(uint64_t quanta, uint64_t speed_bps) {
  return DurationNs((unsigned __int128)quanta * 512u * 1'000'000'000u / speed_bps);
}

}  // namespace

const ComponentSpec kSpec = {"congestion", kPacketAllRoce | kPacketPfc, kOutputs, kSettings, kNotes, {},
                             Sampled::kAll, /*pair_local=*/true};

Congestion::Congestion(Ctx& ctx)
    : note_ce_(note_kind("cong.ecn_ce")),
      note_cnp_(note_kind("cong.cnp")),
      note_pfc_(note_kind("cong.pfc")),
      note_storm_(note_kind("cong.pfc_storm")),
      storm_(ctx.settings.duration("pfc_storm")),
      default_speed_bps_(ctx.settings.count("link_speed") * 1'000'000'000ull),
      speed_specs_(ctx.settings.list("point_speed")),
      period_(std::max<DurationNs>(1, ctx.settings.duration("period"))) {
  for (const std::string& s : speed_specs_) {
    std::string name;
    double g = 0;
    if (!parse_point_speed(s, name, g))
      ctx.warn("point_speed_syntax", [&] { return "--point-speed " + s + " is not NAME=GBPS: ignored"; });
  }
}

void Congestion::on_packet(const Packet& p, Ctx& ctx) {
  if (p.is_pfc()) on_pfc(p, ctx);
  else if (p.flow != kNoFlow) on_roce(p, ctx);
}

Congestion::Changed& Congestion::changed(PointId point) {
  if (point >= changed_.size()) changed_.resize(size_t(point) + 1);
  return changed_[point];
}

void Congestion::on_advance(PointId point, Ctx& ctx) {
  if (point >= changed_.size()) return;
  Changed& c = changed_[point];
  const TimeNs horizon = ctx.points[point].horizon;
  // The first advance snapshots at once (nothing was shown yet), later ones once per period.
  if (horizon == kTimeMin || horizon < c.next) return;
  c.next = (horizon / period_ + 1) * period_;
  // Every count up to the horizon is in: a snapshot of what changed (provisional records).
  for (FlowPointId k : c.flows) {
    FlowEntry& e = flows_[k];
    e.dirty = false;
    ctx.emit(kCongestionSchema, static_cast<const CongestionHead*>(&e.rec), true);
  }
  for (uint64_t k : c.pfc) {
    PriorityState& s = pfc_[k];
    s.dirty = false;
    ctx.emit(kCongestionSchema, static_cast<const CongestionHead*>(&s.rec), true);
  }
  for (CnpEntry* e : c.cnps) {
    e->dirty = false;
    ctx.emit(kCongestionSchema, static_cast<const CongestionHead*>(&e->rec), true);
  }
  c.flows.clear();
  c.pfc.clear();
  c.cnps.clear();
}

void Congestion::on_roce(const Packet& p, Ctx& ctx) {
  if (p.flow_point >= flows_.size()) flows_.resize(size_t(p.flow_point) + 1);
  FlowEntry& entry = flows_[p.flow_point];
  if (!entry.dirty) {
    entry.dirty = true;
    changed(p.point).flows.push_back(p.flow_point);
  }
  EcnRecord& r = entry.rec;
  if (r.packets == 0) {
    entry.flow = p.flow;
    const FlowKey& key = ctx.flows[p.flow].key;
    r.src = key.src;
    r.dst = key.dst;
    r.dst_qpn = key.dst_qpn;
    r.point = p.point;
    r.first_ns = p.ts;
    r.first_frame = p.frame;
  }
  ++r.packets;
  r.last_ns = p.ts;
  const bool ce = p.roce.ecn_ce();
  if (p.roce.ecn != 0) ++r.ect_packets;
  if (ce) {
    ++r.ce_packets;
    if (!r.first_ce_ns) r.first_ce_ns = p.ts;
    ctx.note(p.frame, note_ce_, 0);
  }
  if (p.roce.op_known && p.roce.op()->op_class == IbOpClass::kCnp) {
    ++r.cnp_packets;
    ctx.note(p.frame, note_cnp_, 0);
    count_cnp(r, p);
  } else if (r.packets - r.cnp_packets == 1) {
    // The flow's class from its first data or ACK packet: CNPs often travel in a class of
    // their own (a higher priority), which is not the one PFC pauses for the flow.
    r.dscp = p.roce.dscp;
    if (p.roce.vlan_tagged) r.priority = p.roce.vlan_pcp;
  }
}

void Congestion::count_cnp(const EcnRecord& flow, const Packet& p) {
  // Per IP pair: CNPs name a queue pair, but which QPs a notification point throttles matters
  // less than who tells whom to slow down (and a CNP's QP is often the only packet of its flow).
  auto [it, fresh] = cnp_pairs_.try_emplace(CnpKey{flow.src, flow.dst, p.point});
  if (!it->second.dirty) {
    it->second.dirty = true;
    changed(p.point).cnps.push_back(&it->second);
  }
  CnpRecord& c = it->second.rec;
  if (fresh) {
    c.src = flow.src;
    c.dst = flow.dst;
    c.point = p.point;
    c.first_ns = p.ts;
    c.first_frame = p.frame;
    cnp_order_.push_back(&c);
  }
  ++c.cnps;
  c.last_ns = p.ts;
}

uint64_t Congestion::speed_of(PointId point, const Ctx& ctx) {
  if (point >= given_speed_.size()) given_speed_.resize(size_t(point) + 1, kUnresolved);
  uint64_t& given = given_speed_[point];
  if (given == kUnresolved) {
    given = 0;
    const PointState& ps = ctx.points[point];
    for (const std::string& s : speed_specs_) {
      std::string name;
      double g = 0;
      if (parse_point_speed(s, name, g) && ps.named(name))
        given = uint64_t(g * 1e9);
    }
  }
  if (given) return given;
  const uint64_t s = ctx.points[point].speed_bps;
  return s ? s : default_speed_bps_;
}

void Congestion::on_pfc(const Packet& p, Ctx& ctx) {
  const uint64_t speed = speed_of(p.point, ctx);
  for (uint8_t prio = 0; prio < 8; ++prio) {
    if (!(p.roce.pfc.enabled & (1u << prio))) continue;
    const uint64_t key = uint64_t(p.point) << 3 | prio;
    PriorityState& s = pfc_[key];
    if (!s.dirty) {
      s.dirty = true;
      changed(p.point).pfc.push_back(key);
    }
    PfcRecord& r = s.rec;
    if (r.frames == 0) {
      r.point = p.point;
      r.priority = prio;
      r.first_ns = p.ts;
      r.first_frame = p.frame;
      r.speed_bps = speed;
      if (speed) r.pause_ns = r.longest_pause_ns = 0;
    }
    ++r.frames;
    r.last_ns = p.ts;
    const uint16_t q = p.roce.pfc.quanta[prio];
    ctx.note(p.frame, note_pfc_, speed && q ? uint64_t(quanta_ns(q, speed)) : 0, uint32_t(prio) | uint32_t(q) << 8);
    if (q == 0) {
      ++r.resume_frames;
      if (s.paused) {
        s.paused_until = std::min(s.paused_until, p.ts);
        end_pause(s, ctx);
      }
      continue;
    }
    ++r.pause_frames;
    r.quanta += q;
    if (!speed) continue;
    const DurationNs d = quanta_ns(q, speed);
    *r.pause_ns += d;
    // A pause received while paused restarts the timer with its own quanta (802.1Qbb).
    if (s.paused && p.ts > s.paused_until) end_pause(s, ctx);
    if (!s.paused) {
      s.paused = true;
      s.pause_start = p.ts;
      s.pause_frame = p.frame;
    }
    s.paused_until = p.ts + d;
  }
}

void Congestion::end_pause(PriorityState& s, Ctx& ctx) {
  s.paused = false;
  PfcRecord& r = s.rec;
  const DurationNs length = s.paused_until - s.pause_start;
  if (r.longest_pause_ns) r.longest_pause_ns = std::max(*r.longest_pause_ns, length);
  if (length >= storm_) ctx.note(s.pause_frame, note_storm_, uint64_t(length), r.priority);
  if (length >= storm_ && !r.storm) {
    r.storm = true;
    ctx.warn("pfc_storm", [&] {
      return "PFC storm: priority " + std::to_string(r.priority) + " at point " + ctx.points[r.point].name +
             " paused without a break for " + std::to_string(length / 1000) + " µs (threshold --pfc-storm " +
             std::to_string(storm_ / 1'000'000) + " ms)";
    });
  }
}

void Congestion::finish(Ctx& ctx) {
  // Stable order: by point, then flow (flows are numbered as first seen, in stamp order).
  std::vector<uint64_t> keys;  // point << 32 | flow
  std::vector<FlowPointId> at;
  for (FlowPointId i = 0; i < flows_.size(); ++i)
    if (flows_[i].flow != kNoFlow) keys.push_back(uint64_t(flows_[i].rec.point) << 32 | flows_[i].flow);
  std::sort(keys.begin(), keys.end());
  auto find = [&](PointId point, FlowId flow) -> const FlowEntry* {
    auto it = std::lower_bound(keys.begin(), keys.end(), uint64_t(point) << 32 | flow);
    return it != keys.end() && *it == (uint64_t(point) << 32 | flow) ? &flows_[at[size_t(it - keys.begin())]] : nullptr;
  };
  at.resize(keys.size());
  for (FlowPointId i = 0; i < flows_.size(); ++i)
    if (flows_[i].flow != kNoFlow)
      at[size_t(std::lower_bound(keys.begin(), keys.end(), uint64_t(flows_[i].rec.point) << 32 | flows_[i].flow) -
                keys.begin())] = i;
  for (size_t n = 0; n < keys.size(); ++n) {
    FlowEntry& e = flows_[at[n]];
    EcnRecord& r = e.rec;
    const FlowId peer = ctx.flows[e.flow].peer;
    if (peer != kNoFlow) {
      const FlowEntry* back = find(r.point, peer);
      r.cnps_received = back ? back->rec.cnp_packets : 0;
    }
    ctx.emit(kCongestionSchema, static_cast<const CongestionHead*>(&r));
  }
  // CNPs per IP pair: by point, then as first seen.
  std::stable_sort(cnp_order_.begin(), cnp_order_.end(),
                   [](const CnpRecord* a, const CnpRecord* b) { return a->point < b->point; });
  for (const CnpRecord* c : cnp_order_) ctx.emit(kCongestionSchema, static_cast<const CongestionHead*>(c));
  keys.clear();
  for (const auto& [k, s] : pfc_) keys.push_back(k);
  std::sort(keys.begin(), keys.end());
  for (uint64_t k : keys) {
    PriorityState& s = pfc_[k];
    if (s.paused) end_pause(s, ctx);
    ctx.emit(kCongestionSchema, static_cast<const CongestionHead*>(&s.rec));
  }
  for (const std::string& s : speed_specs_) {
    std::string name;
    double g = 0;
    if (!parse_point_speed(s, name, g)) continue;
    if (!ctx.points.any_named(name))
      ctx.warn("point_speed_point", [&] { return "--point-speed " + s + " names no observation point of the capture"; });
  }
  flows_ = {};
  cnp_pairs_.clear();
  cnp_order_.clear();
  pfc_.clear();
  changed_.clear();
}

}  // namespace rdmatel::congestion
