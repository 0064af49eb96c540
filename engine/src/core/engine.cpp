// SPDX-License-Identifier: GPL-2.0-or-later
// The engine's pipeline: decode each frame once (stateless), hold it in its point's reorder
// buffer, release it in stamp order to the components that asked for its kind, and tell them
// when a point's horizon advanced.
#include <algorithm>
#include <array>
#include <bit>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "engine/src/core/component.h"
#include "engine/src/core/component_selection.h"
#include "engine/src/core/work_handover.h"
#include "engine/src/core/stage_sink.h"
#include "engine/src/decode/decoded_frame.h"
#include "engine/src/util/hash.h"
#include "rdmatel/engine.h"
#include "rdmatel/format.h"

namespace rdmatel {
namespace {

// Stamps are clamped to about +-146 years around 1970: any difference or sum of two of them, and
// of them and a timeout, then fits in 64 bits (hostile captures carry stamps anywhere).
constexpr TimeNs kStampLimit = (TimeNs(1) << 62) - (TimeNs(1) << 48);
// Components hear of a point's horizon when it moved at least this much: finalisation needs no
// finer grain, and the hooks then cost nothing per packet.
constexpr DurationNs kAdvanceQuantum = kNsPerMs;
// A capture seen giving a request twice gives its repeated ACKs twice for this long after it too
// (given_twice).
constexpr DurationNs kCopiesSpan = kNsPerMs;
// Frames a capture may carry twice at one stamp (given_twice): the others are requests.
constexpr uint32_t kRepeatedFrames = kPacketAck | kPacketCnp | kPacketPfc;
// How often (in capture progress) the engine looks for points that went quiet.
constexpr DurationNs kQuietScanEvery = 10 * kNsPerMs;

struct RoleOverride {
  std::string name;
  PointRole role;
  bool matched = false;
};

// A mirror records both copies in one capture: identical packets from two captures of a point (a
// file given twice) are not its twins, so the identity is told apart by capture for it.
uint64_t mirror_key(uint64_t hash, uint16_t source) { return hash ^ (uint64_t(source) * 0x9E3779B97F4A7C15ull); }

// What makes a buffered packet this packet: its flow and PSN (order_key), opcode, IP id, lengths,
// and the start of its payload (a resend has a later stamp anyway; two packets at one point with
// the same stamp and all of these equal are the same packet given twice). A RoCE packet's length
// is its payload's, from the IP header: the copies a mirror takes at a tagged host port and an
// untagged uplink (or snapped at one length) differ in their frames' lengths, not in it.
inline uint64_t identity_hash(uint64_t order_key, uint32_t wire_len, const DecodedFrame& d, uint32_t cap_len) {
  const RoceFrame& f = d.roce;
  const uint64_t lengths = f.is_roce() ? uint64_t(f.payload_len) << 8 | 1 : uint64_t(wire_len) << 8 ^ cap_len;
  uint64_t h = hash_mix(order_key ^ (uint64_t(f.bth.opcode) << 56) ^ (uint64_t(f.ip_id) << 40) ^ (lengths << 1));
  h ^= d.payload_hash;
  if (f.kind == FrameKind::kPfc) h ^= hash_bytes(reinterpret_cast<const uint8_t*>(f.pfc.quanta), sizeof f.pfc.quanta);
  return h;
}

}  // namespace

bool peek_roce(LinkType link, const uint8_t* data, uint32_t cap_len, uint32_t wire_len, RoceHeaders& out) {
  if (!data) return false;
  RoceFrame f;
  if (decode_roce_frame(link, data, cap_len, wire_len, f) != FrameKind::kRoce) return false;
  out.src = f.src;
  out.dst = f.dst;
  out.dst_qpn = f.bth.dest_qp;
  out.has_src_qpn = f.has(kExtDeth);
  out.src_qpn = f.deth_src_qp;
  out.mirror_id = f.mirror_id;
  out.mirror_src = f.mirror_src;
  return true;
}

class Engine::Impl {
 public:
  explicit Impl(const Settings& settings)
      : settings_(settings),
        window_(std::max<DurationNs>(0, settings.duration("reorder_window"))),
        mirror_window_(settings.duration("mirror_copy_window")),
        idle_(settings.duration("idle_point")),
        max_buffered_(std::max<uint64_t>(1, settings.count("max_reorder_packets"))),
        flows_(settings.count("max_flows")),
        warnings_(sinks_),
        sampling_(settings.list("key_flow"), settings.count("poll_ports"), settings.duration("period")),
        ctx_(settings_, points_, flows_, roles_, clock_, warnings_, gpus_, sampling_, sinks_, settings.frame_notes,
             window_, idle_) {
    // Front ends check the bindings first (a usage error); one that slips through is warned about.
    for (const std::string& line : settings.list("gpu")) {
      std::string error;
      if (!gpus_.add(line, error)) warnings_.warn("gpu_map", [&] { return "GPU map: " + error + "; left out"; });
    }
    for (const std::string& o : settings.list("point")) {
      auto eq = o.rfind('=');
      auto role = eq == std::string::npos ? std::nullopt : parse_point_role(o.substr(eq + 1));
      if (eq != std::string::npos && eq > 0 && role) overrides_.push_back({o.substr(0, eq), *role});
    }
    std::vector<const ComponentSpec*> specs;
    for (const ComponentFactory& f : component_registry()) specs.push_back(f.spec);
    const std::vector<bool> run = components_to_run(specs, settings.records);
    // The second thread takes the components that propose nothing: only when one runs.
    bool second_thread_work = false;
    for (size_t i = 0; i < specs.size(); ++i) second_thread_work |= run[i] && specs[i]->proposes_nothing();
    std::unique_ptr<PairLocalWorker> worker;
    if (settings.count("threads") > 1 && second_thread_work)
      worker = std::make_unique<PairLocalWorker>(settings_, gpus_, sampling_, settings.frame_notes, window_, idle_);
    uint16_t slot = 0;
    for (const ComponentFactory& f : component_registry()) {
      ++slot;  // the component's place in a step (StepTag)
      if (!run[slot - 1]) {
        placements_.push_back(Placement::kLeftOut);
        continue;
      }
      const bool stage = f.spec->stage();
      if (worker && f.spec->proposes_nothing()) {
        if (stage) worker->add_stage(f.make(worker->stage_ctx()), *f.spec, slot);
        else worker->add_component(f.make(worker->pair_ctx()), *f.spec, slot);
        placements_.push_back(stage ? Placement::kStage : Placement::kPairLocal);
        continue;
      }
      placements_.push_back(Placement::kHome);
      for (size_t c = 0; c < wanted_.size(); ++c)
        if (f.spec->packets & (1u << c)) wanted_[c].push_back(uint16_t(components_.size()));
      components_.push_back(f.make(ctx_));
      sampled_.push_back(f.spec->sampled);
      slots_.push_back(slot);
      // Stages hear records before any front end subscribes, so they miss none.
      if (stage) stages_.push_back(std::make_unique<StageSink>(*components_.back(), f.spec->inputs, ctx_));
    }
    for (auto& s : stages_) sinks_.push_back(s.get());
    if (worker) {
      handover_ = std::make_unique<WorkHandover>(std::move(worker), flows_);
      sinks_.push_back(&handover_->collector());  // what the components here make goes to the merge
    }
  }

  void subscribe(RecordSink& s) {
    if (handover_) handover_->worker().subscribe(s);
    else sinks_.push_back(&s);
  }

  PointId declare_point(const std::string& name, uint32_t interface_id, uint64_t speed) {
    size_t before = points_.size();
    PointId id = points_.declare(name, interface_id, speed);
    if (id == kNoPoint) {
      warnings_.warn("max_points", [] {
        return "more than " + std::to_string(PointTable::kMaxPoints) +
               " observation points: packets of the others are not measured";
      });
      return id;
    }
    if (handover_) handover_->declared(name, interface_id, speed, points_.size() > before);
    if (points_.size() > before) {
      last_advance_.push_back(kTimeMin);
      for (RoleOverride& o : overrides_)
        if (points_[id].named(o.name)) {
          points_[id].configured = o.role;
          o.matched = true;
        }
    }
    return id;
  }

  void set_capture_dropped(PointId id, uint64_t dropped) {
    if (id >= points_.size()) return;
    points_[id].capture_dropped = std::max(points_[id].capture_dropped, dropped);
    if (handover_) handover_->capture_dropped(id, points_[id].capture_dropped);
  }

  void capture_gap(PointId id, TimeNs from, TimeNs to) {
    if (id >= points_.size() || to <= from) return;
    auto& gaps = points_[id].gaps;
    if (gaps.size() < PointState::kMaxGaps) gaps.emplace_back(from, to);
  }

  void push(const FrameIn& in) {
    ++stats_.frames;
    shown_push_ = settings_.frame_notes;
    struct Done {
      bool& shown;
      ~Done() { shown = false; }
    } done{shown_push_};
    if (finished_) return;
    if (in.point == kNoPoint || in.point >= points_.size()) {
      ++stats_.without_point;
      return;
    }
    if (in.link == LinkType::kUnsupported) {
      ++stats_.unsupported_link;
      return;
    }
    if (!in.has_ts) {
      // A simple packet block: its time is unknown, so it cannot be placed among the others.
      ++stats_.without_timestamp;
      warnings_.warn("no_timestamp", [] {
        return std::string("some packets have no timestamp (pcapng simple packet blocks): they are counted, "
                           "not measured");
      });
      return;
    }
    // Decoded on the reading thread when read ahead (decoded_frame.h), else here.
    if (!in.decoded) decode_frame(in.link, in.data, in.cap_len, in.wire_len, decoded_);
    const DecodedFrame& decoded = in.decoded ? *in.decoded : decoded_;
    if (decoded.roce.mirror_id) [[unlikely]] {
      const PointId session_point = mirror_point(in, decoded.roce);
      if (session_point != in.point) {
        if (settings_.frame_notes) routed_frames_.emplace_back(in.frame, session_point);
        FrameIn routed = in;
        routed.point = session_point;
        measure(routed, decoded);
        return;
      }
    }
    measure(in, decoded);
  }

  // The rest of push(), for the frame's observation point (its ERSPAN session's, if any).
  void measure(const FrameIn& in, const DecodedFrame& decoded) {
    if (points_.progress() >= next_quiet_scan_) mark_quiet_points();
    const TimeNs ts = std::clamp(in.ts, -kStampLimit, kStampLimit);
    if (ts != in.ts) [[unlikely]]
      warn_clamped(in);
    const uint32_t wire_len = std::max(in.wire_len, in.cap_len);
    points_.observe(in.point, ts);
    // Whether this push handles the pushed frame (at once, or released by it): only then can a
    // front end that shows each frame as it pushes it show what components make now
    // (Ctx::packet_shown_now). Until known (packets of quiet points handled above), assume so.
    if (shown_push_) {
      const PointState& at = points_[in.point];
      shown_push_ = ts > at.watermark || ts <= at.horizon || ts <= points_.next_horizon(in.point, release_window_);
    }
    const RoceFrame& roce = decoded.roce;
    switch (roce.kind) {
      case FrameKind::kRoce: break;
      case FrameKind::kPfc: ++stats_.pfc; break;
      case FrameKind::kMalformed:
        ++stats_.malformed;
        last_error_ = roce.error;
        warn_unreadable(in, roce.error);
        release(in.point);
        return;
      case FrameKind::kOther:
        if (roce.error) warn_unreadable(in, roce.error);  // cut before it could tell RoCEv2 apart
        release(in.point);
        return;
    }
    FlowId flow_id = kNoFlow;
    FlowPointId flow_point = kNoFlowPoint;
    uint64_t order_key = 0;
    if (roce.is_roce()) {
      ++stats_.roce;
      Flow* flow = flows_.get(roce);
      if (flow) flow_point = flows_.flow_point(*flow, in.point);
      if (flow_point == kNoFlowPoint) [[unlikely]] {
        ++stats_.beyond_max_flows;
        warnings_.warn("max_flows", [&] {
          return "more than " + std::to_string(settings_.count("max_flows")) +
                 " RDMA flows (a flow counts once per observation point that sees it): packets of new flows, and "
                 "of flows at points new to them, are not measured (limit max_flows)";
        });
        release(in.point);
        return;
      }
      flow_id = flow->id;
      if (flow_point >= mirror_counts_.size()) mirror_counts_.resize(size_t(flow_point) + 1);
      // Flow key, not flow id: ids follow the order flows were first seen, which is file order.
      order_key = (flow->key_hash << 24) | roce.bth.psn;
    }
    const uint32_t seq = seq_++;
    const bool mirror_checked = mirror_window_ > 0 && roce.is_roce() && roce.bth.opcode != kOpcodeCnp;
    const uint64_t hash = identity_hash(order_key, wire_len, decoded, in.cap_len);
    if (mirror_checked) {
      if (RepeatsAcrossPoints::sampled(hash)) [[unlikely]]
        repeats_across_points_.add(hash, in.point);
      MirrorCopies& copies = points_[in.point].mirror_copies;
      const uint64_t key = mirror_key(hash, uint16_t(in.source));
      const bool acknowledgment = roce.bth.opcode == kOpcodeAcknowledge;
      if (acknowledgment && decoded.headers.is_nak()) [[unlikely]]
        copies.nak(MirrorCopies::pair_key(roce.src, roce.dst), ts);
      const uint64_t reverse_pair = MirrorCopies::sampled(key) ? MirrorCopies::pair_key(roce.dst, roce.src) : 0;
      copies.observe(&mirror_counts_[flow_point], key, ts, mirror_window_, acknowledgment, &repeats_across_points_,
                     in.point, reverse_pair);
    }
    // Everything but the stamp, order and length, which the buffer sets.
    auto fill = [&](Packet& p) {
      p.frame = in.frame;
      p.point = in.point;
      p.flow = flow_id;
      p.flow_point = flow_point;
      p.roce = decoded.headers;
      p.source = uint16_t(in.source);
      if (roce.is_roce()) {
        p.capsule = decoded.capsule;
        // A SEND long enough for an NVMe command whose SQE the snap length cut before byte 40
        // (a header-only mirror on IPv6, or with VLAN tags): no command is found in it, and the
        // report would say "no NVMe-oF I/O" with nothing to tell why. (Reliable connections
        // only: not the datagrams of RDMA CM.)
        if (p.capsule.kind == CapsuleKind::kNone && roce.op && roce.op->op_class == IbOpClass::kSend &&
            !roce.has(kExtDeth) &&
            (roce.op->position == MsgPosition::kFirst || roce.op->position == MsgPosition::kOnly) &&
            roce.payload_len >= kNvmeSqeSize && roce.payload_captured < kNvmeSqeMinCaptured)
          warnings_.warn("sqe_cut", [&] {
            return "SENDs long enough for an NVMe command with fewer than " + std::to_string(kNvmeSqeMinCaptured) +
                   " bytes of it captured (first at " + points_[in.point].name + ", frame " + std::to_string(in.frame) +
                   "): if they carry NVMe-oF commands, the snap length cuts the SQE and no I/O is measured from "
                   "them (capture at least " +
                   std::to_string(roce.payload_offset + kNvmeSqeMinCaptured) + " bytes)";
          });
      } else {
        p.capsule = CapsuleSummary{};
      }
    };
    PointState& point = points_[in.point];
    const bool outlier = ts > point.watermark;  // far beyond the point's others, not confirmed yet
    if (outlier || ts <= point.horizon) {
      ++stats_.late;
      if (outlier)
        // A bad clock or a corrupt record: handled now rather than held until the watermark catches up.
        warnings_.warn("outlier_stamps", [&] {
          return "stamps far beyond the others of their point (first at " + point.name + ", frame " +
                 std::to_string(in.frame) + "): handled in arrival order";
        });
      else if (ts < point.watermark)  // (at the newest stamp it is behind nothing: the buffer was full)
        warnings_.warn("late_packets", [&] {
          return "packets arrived more than the reorder window (" + std::to_string(window_ / kNsPerMs) +
                 " ms) behind newer ones of their point (first at " + point.name +
                 "): they are handled out of stamp order; a larger --reorder-window avoids it";
        });
      Packet& p = scratch_;
      p.ts = ts;
      p.order_key = order_key;
      p.seq = seq;
      p.wire_len = wire_len;
      fill(p);
      const uint32_t cls = packet_class(p);
      if (!mirror_copy(point, p, cls, hash)) handle(p, cls);
    } else {
      if (point.buffer.size() >= max_buffered_) force_oldest(in.point);
      // The decoded identity and the start of the payload tell two packets apart.
      Packet& placed = *point.buffer.emplace(ts, order_key, seq, wire_len, hash);
      fill(placed);
      // A request given twice by its own capture, seen as it arrives: the ACKs that capture
      // repeated just before it are copies too, and are still here to be told (given_twice).
      const bool copy = point.buffer.placed_after_identical();
      point.buffer.arrived(ts, copy, copy && !(packet_class(placed) & kRepeatedFrames), kCopiesSpan);
    }
    release(in.point);
  }

  // Held at the limit, such stamps all read alike: every time between two of them is 0, with no
  // other sign (helper probe: a capture stamped in 2200 measured every I/O's latency as 0).
  [[gnu::noinline]] void warn_clamped(const FrameIn& in) {
    warnings_.warn("stamps_out_of_range", [&] {
      return "stamps before 1824 or after 2116 (first: frame " + std::to_string(in.frame) + " at " +
             points_[in.point].name +
             ") are held at those dates: times between such packets read 0. The capture's clock is wrong; "
             "shift its stamps into range (editcap -t SECONDS) to measure them";
    });
  }

  // One capture interface receiving several ERSPAN sessions (each port or switch mirrors with a
  // session of its own, to one collector) holds several observation points: one per session, or
  // a packet two of them mirrored would read as a copy or a resend and no hop between them would
  // be measured. The first session seen at an interface is its point; each other one a point
  // "NAME/ERSPAN ID from MIRROR", declared at its first packet (as a front end declares an
  // interface's). Frames without ERSPAN stay at the interface's point.
  // At most this many sessions get points of their own (outer addresses come from the packets:
  // a hostile file must not create points, or lookups, without bound); further ones are measured
  // at their interface's point.
  static constexpr size_t kMaxMirrorSessions = 1024;
  struct SessionKey {
    PointId interface_point;
    uint16_t id;
    IpAddress mirror;
    friend bool operator==(const SessionKey&, const SessionKey&) = default;
  };
  struct SessionKeyHash {
    size_t operator()(const SessionKey& k) const {
      return hash_mix(hash_ip(k.mirror) ^ (uint64_t(k.interface_point) << 16 | k.id));
    }
  };
  std::unordered_map<SessionKey, PointId, SessionKeyHash> mirror_sessions_;
  std::unordered_set<PointId> points_with_sessions_;  ///< interface points whose first session is seen
  SessionKey last_session_key_{kNoPoint, 0, {}};
  PointId last_session_point_ = kNoPoint;

  /// Frames measured at an ERSPAN session's point rather than their interface's, with it (kept
  /// with frame notes, for front ends that link frames to points afterwards), by frame.
  std::vector<std::pair<uint64_t, PointId>> routed_frames_;

  PointId frame_point(uint64_t frame, PointId interface_point) const {
    auto it = std::lower_bound(routed_frames_.begin(), routed_frames_.end(), std::make_pair(frame, PointId(0)));
    return it != routed_frames_.end() && it->first == frame ? it->second : interface_point;
  }

  PointId session_point(PointId interface_point, uint16_t id, const IpAddress& mirror) const {
    if (!id) return interface_point;
    auto it = mirror_sessions_.find(SessionKey{interface_point, id, mirror});
    return it == mirror_sessions_.end() ? interface_point : it->second;
  }

  [[gnu::noinline]] PointId mirror_point(const FrameIn& in, const RoceFrame& f) {
    const SessionKey key{in.point, f.mirror_id, f.mirror_src};
    if (key == last_session_key_) return last_session_point_;
    PointId point = in.point;
    if (auto it = mirror_sessions_.find(key); it != mirror_sessions_.end()) {
      point = it->second;
    } else if (points_with_sessions_.insert(in.point).second) {
      mirror_sessions_.emplace(key, in.point);  // the interface's first session: its own point
    } else if (mirror_sessions_.size() < kMaxMirrorSessions) {
      // Copied: declaring a point may move the point table.
      const std::string interface_name = points_[in.point].name;
      const std::string name =
          interface_name + "/ERSPAN " + std::to_string(f.mirror_id - 1) + " from " + f.mirror_src.to_string();
      point = declare_point(name, PointState::kNoInterfaceId, points_[in.point].speed_bps);
      if (point == kNoPoint) point = in.point;
      mirror_sessions_.emplace(key, point);
      warnings_.warn("mirror_sessions", [&] {
        return "point " + interface_name + " receives more than one ERSPAN session (from frame " + std::to_string(in.frame) +
               "): each session mirrors a port or switch of its own and is taken as an observation point of its own ('" +
               name + "', ...)";
      });
    } else {
      warnings_.warn("max_mirror_sessions", [] {
        return "more than " + std::to_string(kMaxMirrorSessions) +
               " ERSPAN sessions: the frames of further ones are measured at their capture interface's point";
      });
    }
    last_session_key_ = key;
    last_session_point_ = point;
    return point;
  }

  // A frame the engine cannot read: cut by the snap length inside its headers, or malformed. A
  // capture snapped short of the BTH would otherwise report no RDMA traffic and say nothing of why.
  [[gnu::noinline]] void warn_unreadable(const FrameIn& in, const char* why) {
    const bool cut = std::string_view(why).ends_with("cut by the snap length");
    auto where = [&] {
      return " (first: frame " + std::to_string(in.frame) + " at point " + points_[in.point].name + ", " +
             std::to_string(in.cap_len) + " of " + std::to_string(std::max(in.wire_len, in.cap_len)) +
             " bytes captured: " + why + ")";
    };
    if (cut)
      warnings_.warn("headers_cut", [&] {
        return "frames cut by the snap length inside their headers" + where() +
               ": nothing is measured from them, and what their flows show is incomplete. Capture at least 128 bytes of each frame (the Ethernet, VLAN, IP, "
               "UDP, BTH and extension headers and the start of an NVMe command; more with tunnels or IPv6 "
               "extension headers)";
      });
    else
      warnings_.warn("malformed_frames", [&] { return "malformed RoCEv2 frames" + where() + ": they are not measured"; });
  }

  void finish() {
    if (finished_) return;
    std::stable_sort(routed_frames_.begin(), routed_frames_.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    // The packets still held (a reorder window of each point's) leave as they would have had the
    // capture gone on: each point's horizon moves up through them a quantum at a time, the points
    // in turn, and components hear of every step. What ended long before the last packet is
    // finalised before the rest comes, so state stays at its running size (handing everything
    // on at once held two windows of messages and I/Os at the end).
    for (bool held = true; held;) {
      held = false;
      for (PointId id = 0; id < points_.size(); ++id) {
        PointState& p = points_[id];
        if (p.buffer.empty()) continue;
        held = true;
        const TimeNs until = p.buffer.front().ts + kAdvanceQuantum;  // stamps are clamped: no overflow
        while (!p.buffer.empty() && p.buffer.front().ts <= until) release_front(id, true);
        advance_components(id);
      }
    }
    for (PointId id = 0; id < points_.size(); ++id) {
      PointState& p = points_[id];
      // Everything the point carried is handled: its horizon is its newest stamp. What is still
      // open after this last advance ends with the capture.
      if (p.seen) points_.raise_horizon(id, p.watermark);
    }
    finished_ = true;
    for (PointId id = 0; id < points_.size(); ++id)
      advance_components(id);
    if (handover_) return finish_on_two_threads();
    for (auto& c : components_) {
      c->finish(ctx_);
      flows_.apply_proposals();  // a pairing learned at the end (a held completion) counts for the rest
    }
    for (const std::string& text : roles_.contradictions(points_))
      for (RecordSink* s : sinks_) s->on_warning(Warning{"roles", text});
  }

  // ---- queries ----
  bool finished() const { return finished_; }
  const GpuMap& gpus() const { return gpus_; }
  size_t point_count() const { return points_.size(); }
  void release_measurement_state() {
    if (!finished_) return;
    // The stages' sinks come first in sinks_ (the constructor), before any front end's: a warning
    // after this (a point declared beyond the limit) reaches the front ends only. On two threads
    // the pair-local thread's components stay: the front ends' sinks are its (the plugin runs
    // one thread).
    sinks_.erase(sinks_.begin(), sinks_.begin() + ptrdiff_t(stages_.size()));
    stages_.clear();
    components_.clear();
    for (auto& w : wanted_) w.clear();
    sampled_.clear();
    slots_.clear();
    for (PointId id = 0; id < points_.size(); ++id) {
      points_[id].buffer = ReorderBuffer{};
      points_[id].mirror_copies = MirrorCopies{};
    }
    mirror_counts_ = {};
    repeats_across_points_ = RepeatsAcrossPoints{};
  }

  PointInfo point(PointId id) const {
    PointInfo info;
    if (id >= points_.size()) return info;
    const PointState& p = points_[id];
    info.name = p.name;
    info.configured = p.configured;
    info.packets = p.packets;
    info.speed_bps = p.speed_bps;
    info.capture_dropped = p.capture_dropped;
    bool ranked = false;
    roles_.summarize(id, info.compute_endpoints, info.storage_endpoints, &ranked);
    if (p.configured != PointRole::kUnknown) info.role = p.configured;
    else if (info.compute_endpoints || info.storage_endpoints)
      info.role = info.compute_endpoints >= info.storage_endpoints ? PointRole::kCompute : PointRole::kStorage;
    else if (ranked)
      info.role = PointRole::kFabric;  // between the sides: ranked, but nearest to no endpoint (SPEC §3)
    return info;
  }
  const std::string& point_name(PointId id) const {
    static const std::string unknown = "?";
    if (handover_) return handover_->point_name(id);  // sinks ask from the other thread
    return id < points_.size() ? points_[id].name : unknown;
  }
  PointRole role_for(PointId id, const IpAddress& a, const IpAddress& b) const {
    return roles_.role_for(points_, id, a, b);
  }
  std::optional<uint32_t> sending_qpn(const IpAddress& src, const IpAddress& dst, uint32_t qpn) const {
    const Flow* f = flows_.find(FlowKey{src, dst, qpn});
    if (!f || f->peer == kNoFlow) return std::nullopt;
    return flows_[f->peer].key.dst_qpn;
  }
  const EngineStats& stats() const { return stats_; }
  const char* last_error() const { return last_error_; }
  std::vector<std::string> unmatched_role_overrides() const {
    std::vector<std::string> out;
    for (const RoleOverride& o : overrides_)
      if (!o.matched) out.push_back(o.name);
    return out;
  }

 private:
  // A point that carried nothing while the capture advanced the idle time will not add to what is
  // open: its buffered packets are handled now, and components stop waiting for it.
  void mark_quiet_points() {
    next_quiet_scan_ = points_.progress() + kQuietScanEvery;
    for (PointId id = 0; id < points_.size(); ++id) {
      PointState& p = points_[id];
      if (p.quiet || !points_.idle(id, idle_)) continue;
      while (!p.buffer.empty()) release_front(id, true);
      if (p.seen) points_.raise_horizon(id, p.watermark);
      points_.set_quiet(id);
      advance_components(id);
    }
  }

  // Bounded state: a point's buffer holds max_reorder_packets and less than the reorder window of its packets.
  // Its oldest is handled early, and the window every point releases with is cut to what the
  // buffer holds (7/8 of it, so that it rarely has to be cut again). Cut at this point alone, the
  // point ran up to a window ahead of the others, and what they learn for it came too late: a
  // completion waiting for its queue pair's echo at another point was taken for its resend 400 us
  // later (probe: 847 k packets in 70 ms at 3 points, negative RTT). Each point keeps its own
  // horizon a window behind its own newest stamp, so clocks seconds apart change nothing.
  void force_oldest(PointId id) {
    PointState& p = points_[id];
    const DurationNs held = std::max<DurationNs>(0, p.watermark - p.buffer.front().ts);
    const bool cut = held < release_window_;
    if (cut) release_window_ = held - held / 8;
    warnings_.warn("reorder_buffer_full", [&] {
      return "more than " + std::to_string(max_buffered_) + " packets waiting for reordering at point " + p.name +
             " (limit max_reorder_packets): the reorder window is cut to " + format_us(release_window_) +
             " µs, what the buffer holds, at every point";
    });
    release_front(id, true);
    if (cut)
      for (PointId other = 0; other < points_.size(); ++other)
        if (other != id) release(other);
  }

  // Hands the earliest packet of point `id` on (in place: nothing inserts while it runs), or drops
  // it when it is a copy of the one before. Released ahead of the horizon (`advance`), it moves
  // the horizon to its stamp.
  void release_front(PointId id, bool advance) {
    PointState& p = points_[id];
    const Packet& front = p.buffer.front();
    if (advance) points_.raise_horizon(id, front.ts);
    if (!given_twice(p, front)) {
      const uint32_t cls = packet_class(front);
      if (!mirror_copy(p, front, cls, p.buffer.front_hash())) handle(front, cls);
    } else {
      ++stats_.duplicates;
      warnings_.warn("duplicate_packets", [&] {
        return "the same packets were given more than once (first at point " + p.name + ", frame " +
               std::to_string(front.frame) + "): each is counted once (a file given twice, or overlapping files)";
      });
    }
    p.buffer.pop_front();
  }

  // Whether the front of point `p`'s buffer is a copy of a packet handed on just before it, with
  // the same stamp, flow, PSN, length and bytes. Given by another capture (a file given twice,
  // overlapping ring files), it is. Within one capture it may be a NIC's ACK, NAK or CNP sent
  // again at once (storms repeat them 100 ns apart: the same stamp in microseconds, and now and
  // then in nanoseconds stamped with noise), or a PFC frame repeated: those count as frames unless
  // the capture is seen giving its requests twice around then (files merged with an overlap:
  // mergecap puts the copies in one file), where every frame is there twice and every second one
  // is a copy. A request (data, READ) is never sent again within the stamps' noise. Seen as they
  // are handed on (copies_until: for the ACKs after the first copy of a request) and as they
  // arrive (the buffer's given_twice_around: for the ACKs the overlap repeated before it too, else
  // counted twice, and a hop's phantom losses).
  bool given_twice(PointState& p, const Packet& front) {
    const ReorderBuffer::Repeats earlier = p.buffer.front_repeats();
    if (!earlier.any()) return false;
    // Another capture gave it as often as this one up to it (a ring file ending between a NAK and
    // its repeat gives one copy, the next file both).
    if (earlier.other_sources > earlier.same_source) return true;
    if (packet_class(front) & kRepeatedFrames)
      return (front.ts <= p.copies_until || p.buffer.given_twice_around(front.ts)) && earlier.same_source % 2 == 1;
    p.copies_until = std::max(p.copies_until, front.ts + kCopiesSpan);
    return true;
  }

  // A RoCE packet identical to one the point handed on just before, in a flow the point records
  // twice (mirror_copies.h): counted once. CNPs are left alone: NICs send identical CNPs to a
  // sender microseconds apart.
  bool mirror_copy(PointState& p, const Packet& pkt, uint32_t cls, uint64_t hash) {
    if (mirror_window_ <= 0 || !pkt.is_roce() || cls == kPacketCnp) return false;
    if (!p.mirror_copies.is_copy(&mirror_counts_[pkt.flow_point], mirror_key(hash, pkt.source), pkt.ts))
      return false;
    ++stats_.mirror_copies;
    warnings_.warn("mirror_copies", [&] {
      const DurationNs window = p.mirror_copies.window();
      const std::string widened =
          p.mirror_copies.widened()
              ? " (the window widened from " + std::to_string(mirror_window_ / kNsPerUs) +
                    " us: most of the point's packets have identical copies further apart; a resend that close "
                    "behind its original is taken for a copy)"
              : "";
      const uint32_t copies = p.mirror_copies.copies();
      return "packets recorded " + (copies == 2 ? std::string("twice") : std::to_string(copies) + " times") +
             " at point " + p.name + " within " + std::to_string(window / kNsPerUs) + " us" +
             widened + ", identical (first at frame " + std::to_string(pkt.frame) +
             "): each is counted once, not as a retransmission. A mirror of several ports into one interface, "
             "a capture on 'any', or two interfaces written to one pcap file? Give each port its own interface "
             "to see the hop between them (--mirror-copy-window 0 counts every copy)";
    });
    return true;
  }

  // Releases the packets of `id` that the horizon has passed, in stamp order. The horizon moves
  // once they are handled, not before: it says every packet stamped at or before it has been
  // handled, and components read it while these are (paths settles packets as they come: a
  // horizon moved ahead of a batch still buffered let it take a copy still to come for lost).
  void release(PointId id) {
    PointState& p = points_[id];
    const TimeNs target = points_.next_horizon(id, release_window_);
    while (!p.buffer.empty() && p.buffer.front().ts <= target) release_front(id, false);
    const TimeNs horizon = points_.advance_horizon(id, release_window_);
    if (horizon - last_advance_[id] >= kAdvanceQuantum) {
      last_advance_[id] = horizon;
      advance_components(id);
    }
  }

  // Components hear that point `id`'s horizon moved. A pairing one proposes then (a completion
  // held for echoes, taken when its hold ends) applies at once, as after a packet.
  void advance_components(PointId id) {
    if (handover_) handover_->begin_step();
    for (size_t i = 0; i < components_.size(); ++i) {
      if (handover_) handover_->slot(slots_[i]);
      components_[i]->on_advance(id, ctx_);
    }
    if (handover_) handover_->slot(StepTag::kAfterComponents);
    flows_.apply_proposals();
    if (handover_) handover_->end_advance_step(id, points_[id].horizon);
  }

  // `cls`: packet_class(pkt).
  void handle(const Packet& pkt, uint32_t cls) {
    if (handover_) handover_->begin_step();
    if (pkt.is_roce()) flows_.observe(flows_[pkt.flow], pkt.roce);
    // Key flows and polling decide per packet (only when configured: nothing to pay otherwise).
    const bool sampling = pkt.is_roce() && (sampling_.has_key_flows() || sampling_.polling());
    bool measured[3] = {true, true, true};
    if (sampling) {
      const FlowKey& k = flows_[pkt.flow].key;
      measured[size_t(Sampled::kIo)] = sampling_.measured(true, pkt.point, points_.size(), pkt.ts, k.src, k.dst);
      measured[size_t(Sampled::kThroughput)] = sampling_.measured(false, pkt.point, points_.size(), pkt.ts, k.src, k.dst);
    }
    if (handover_) handover_->forward_facts();  // flows created, and paired by this packet's echo, before it
    const bool shown_now = shown_push_;
    ctx_.packet_shown_now = shown_now;
    for (uint16_t i : wanted_[std::countr_zero(cls)])
      if (measured[size_t(sampled_[i])]) {
        if (handover_) handover_->slot(slots_[i]);
        components_[i]->on_packet(pkt, ctx_);
      }
    ctx_.packet_shown_now = false;
    if (handover_) handover_->slot(StepTag::kAfterComponents);
    flows_.apply_proposals();
    if (handover_)
      handover_->end_packet_step(pkt, cls,
                                 uint8_t(measured[0] | measured[1] << 1 | measured[2] << 2 | shown_now << 7));
  }

  // The end on two threads: every component finishes in registry order, wherever it runs, with
  // the pairings learned by those before it; the stages finish in the merge, at their place.
  void finish_on_two_threads() {
    handover_->begin_step();
    size_t home = 0;
    for (size_t i = 0; i < placements_.size(); ++i) {
      if (placements_[i] == Placement::kLeftOut) continue;
      const uint16_t slot = uint16_t(i + 1);
      handover_->slot(slot);
      switch (placements_[i]) {
        case Placement::kHome:
          components_[home++]->finish(ctx_);
          flows_.apply_proposals();
          break;
        case Placement::kPairLocal:
          handover_->finish_pair_local(slot);
          break;
        case Placement::kStage:
          handover_->finish_stage(slot);
          break;
        case Placement::kLeftOut:  // (skipped above)
          break;
      }
    }
    for (const std::string& text : roles_.contradictions(points_)) handover_->last_warning("roles", text);
    handover_->end();
  }

  Settings settings_;
  DurationNs window_;
  /// What points are released with: the reorder window, cut where a buffer cannot hold it
  /// (force_oldest).
  DurationNs release_window_ = window_;
  DurationNs mirror_window_;
  DurationNs idle_;
  size_t max_buffered_;
  std::vector<RecordSink*> sinks_;
  PointTable points_;
  FlowTable flows_;
  Roles roles_;
  ClockRelations clock_;
  Warnings warnings_;
  GpuMap gpus_;
  Sampling sampling_;
  Ctx ctx_;
  std::vector<std::unique_ptr<Component>> components_;
  std::vector<std::unique_ptr<StageSink>> stages_;
  /// By packet class (PacketClass bit), the components that asked for it, in registry order.
  std::array<std::vector<uint16_t>, kPacketClassCount> wanted_;
  std::vector<Sampled> sampled_;
  std::vector<TimeNs> last_advance_;
  std::vector<RoleOverride> overrides_;
  EngineStats stats_;
  uint32_t seq_ = 0;
  /// During push(): the pushed frame is handled in it (Ctx::packet_shown_now).
  bool shown_push_ = false;
  DurationNs next_quiet_scan_ = 0;
  // threads > 1
  enum class Placement : uint8_t { kHome, kPairLocal, kStage, kLeftOut };
  std::vector<Placement> placements_;  ///< by registry order
  std::vector<uint16_t> slots_;        ///< of components_
  std::unique_ptr<WorkHandover> handover_;  ///< threads > 1: the other thread's work and outputs
  std::vector<MirrorCopies::Counts> mirror_counts_;  ///< by flow point
  RepeatsAcrossPoints repeats_across_points_;
  DecodedFrame decoded_;  ///< the frame being pushed, decoded here (reused: decoding fills it whole)
  Packet scratch_;     ///< a packet handled at once (late, outlier)
  const char* last_error_ = nullptr;
  bool finished_ = false;
};

Engine::Engine(const Settings& settings) : impl_(std::make_unique<Impl>(settings)) {}
Engine::~Engine() = default;
void Engine::subscribe(RecordSink& sink) { impl_->subscribe(sink); }
PointId Engine::declare_point(const std::string& name, uint32_t interface_id, uint64_t speed_bps) {
  return impl_->declare_point(name, interface_id, speed_bps);
}
void Engine::set_capture_dropped(PointId point, uint64_t dropped) { impl_->set_capture_dropped(point, dropped); }
void Engine::capture_gap(PointId point, TimeNs from, TimeNs to) { impl_->capture_gap(point, from, to); }
void Engine::push(const FrameIn& frame) { impl_->push(frame); }
void Engine::finish() { impl_->finish(); }
bool Engine::finished() const { return impl_->finished(); }
void Engine::release_measurement_state() { impl_->release_measurement_state(); }
size_t Engine::point_count() const { return impl_->point_count(); }
PointId Engine::session_point(PointId interface_point, uint16_t mirror_id, const IpAddress& mirror_src) const {
  return impl_->session_point(interface_point, mirror_id, mirror_src);
}
PointId Engine::frame_point(uint64_t frame, PointId interface_point) const {
  return impl_->frame_point(frame, interface_point);
}
PointInfo Engine::point(PointId id) const { return impl_->point(id); }
const std::string& Engine::point_name(PointId id) const { return impl_->point_name(id); }
PointRole Engine::role_for(PointId point, const IpAddress& a, const IpAddress& b) const {
  return impl_->role_for(point, a, b);
}
std::optional<uint32_t> Engine::sending_qpn(const IpAddress& src, const IpAddress& dst, uint32_t dst_qpn) const {
  return impl_->sending_qpn(src, dst, dst_qpn);
}
const EngineStats& Engine::stats() const { return impl_->stats(); }
const GpuMap& Engine::gpus() const { return impl_->gpus(); }
const char* Engine::last_error() const { return impl_->last_error(); }
std::vector<std::string> Engine::unmatched_role_overrides() const { return impl_->unmatched_role_overrides(); }

}  // namespace rdmatel
