// SPDX-License-Identifier: GPL-2.0-or-later
// The interface every metric component implements, what it declares about itself, and what it
// gets from the core. A component lives in its own folder under engine/metrics/ and is listed
// once in engine/metrics/registry.cpp; the core names none of its records, notes or settings.
//
// A component sees each packet of the kinds it asked for, per observation point in stamp order
// (the core's reorder buffers), and is told when a point's horizon advances: time, not packet
// counts, drives finalisation. It reads the core's shared facts (flows and their pairing, point
// roles, clock relations) and may propose evidence for them; proposals take effect after every
// component has handled the current packet, so the registry order never changes a result.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "engine/src/core/clock.h"
#include "engine/src/core/flows.h"
#include "engine/src/core/points.h"
#include "engine/src/core/roles.h"
#include "engine/src/core/warnings.h"
#include "engine/src/decode/packet.h"
#include "rdmatel/gpu_map.h"
#include "rdmatel/records.h"
#include "rdmatel/sampling.h"
#include "rdmatel/schema.h"
#include "rdmatel/settings.h"
#include "rdmatel/sink.h"

namespace rdmatel {

/// Packet kinds a component can ask for.
enum PacketClass : uint32_t {
  kPacketSend = 1u << 0,
  kPacketWrite = 1u << 1,
  kPacketReadRequest = 1u << 2,
  kPacketReadResponse = 1u << 3,
  kPacketAck = 1u << 4,  ///< ACK and NAK (AETH)
  kPacketAtomic = 1u << 5,
  kPacketAtomicAck = 1u << 6,
  kPacketCnp = 1u << 7,
  kPacketOtherRoce = 1u << 8,
  kPacketPfc = 1u << 9,  ///< 802.1Qbb priority flow control frames (not RoCE)
  kPacketAllRoce = (1u << 9) - 1,
};
inline constexpr size_t kPacketClassCount = 10;
/// The class of a decoded packet (one bit).
inline uint32_t packet_class(const Packet& p) {
  if (p.is_pfc()) return kPacketPfc;
  if (!p.roce.op_known) return kPacketOtherRoce;
  switch (p.roce.op()->op_class) {
    case IbOpClass::kSend: return kPacketSend;
    case IbOpClass::kWrite: return kPacketWrite;
    case IbOpClass::kReadRequest: return kPacketReadRequest;
    case IbOpClass::kReadResponse: return kPacketReadResponse;
    case IbOpClass::kAcknowledge: return kPacketAck;
    case IbOpClass::kAtomic: return kPacketAtomic;
    case IbOpClass::kAtomicAcknowledge: return kPacketAtomicAck;
    case IbOpClass::kCnp: return kPacketCnp;
    case IbOpClass::kOther: break;
  }
  return kPacketOtherRoce;
}

/// Which packets key flows and port polling leave to a component (SPEC §7).
enum class Sampled : uint8_t {
  kAll,         ///< every packet (congestion, offsets)
  kIo,          ///< I/O quality: key flows always, other traffic at polled points
  kThroughput,  ///< throughput: everything, or the polled points
};

struct ComponentSpec {
  const char* name;
  uint32_t packets;                                  ///< PacketClass bits it consumes
  std::span<const RecordSchema* const> outputs;      ///< record kinds it emits
  std::span<const SettingSpec> settings;             ///< its own settings
  std::span<const char* const> notes;                ///< per-frame note kinds it makes
  /// Record kinds it consumes (a record stage): their final records reach on_record as the
  /// components that make them emit them. Stages follow their producers in the registry, so
  /// they finish after them. A stage sees records, not packets, and proposes nothing: when
  /// nobody reads its records it does not run (component_selection.h).
  std::span<const RecordSchema* const> inputs = {};
  Sampled sampled = Sampled::kAll;
  /// The component's state and results depend only on its own packets, the points' names, speeds
  /// and horizons, the settings and the flow table's keys and pairing; it proposes nothing (no
  /// pairing, roles or clock samples). With threads > 1 such a component runs on the second
  /// thread over a replica of those facts (core/pair_local_worker.h), in the same order of
  /// packets, horizons and pairings as on one thread. Nothing else depends on it: when nobody
  /// reads its records it does not run (component_selection.h).
  bool pair_local = false;

  bool stage() const { return !inputs.empty(); }
  /// Proposes nothing the others read (pair-local, or a record stage): it may run on the second
  /// thread, and need not run when nobody reads its records.
  bool proposes_nothing() const { return pair_local || stage(); }
};

/// What a component gets from the core.
class Ctx {
 public:
  const Settings& settings;
  const PointTable& points;
  FlowTable& flows;
  Roles& roles;
  ClockRelations& clock;
  Warnings& warnings;
  const GpuMap& gpus;  ///< the GPU binding of IPs (empty without --gpu-map)
  const Sampling& sampling;  ///< key flows and polling
  const bool frame_notes;
  const DurationNs reorder_window;
  const DurationNs idle_point;
  /// Frame notes on, and the packet is handled during a push that also handles the pushed frame
  /// (a late packet, or no reorder window): a front end that shows each frame as it pushes it
  /// (the plugin's first pass) shows that frame's notes and the latest records they name, so
  /// provisional snapshots made now can be seen. Otherwise the final record replaces a snapshot
  /// before anything shows it, and components make one only when this is true (a quarter of the
  /// plugin's engine cost went into snapshots nothing could show). False outside on_packet.
  bool packet_shown_now = false;

  /// Delivers a record to every subscribed sink.
  void emit(const RecordSchema& schema, const void* record, bool provisional = false) const {
    Record r{&schema, record, provisional};
    for (RecordSink* s : sinks_) s->on_record(r);
  }
  /// Notes a fact about a frame (only when frame_notes is on: callers check it first when
  /// building the note costs anything).
  void note(uint64_t frame, NoteKind kind, uint64_t ref, uint32_t detail = 0) const {
    if (!frame_notes) return;
    FrameNote n{.frame = frame, .ref = ref, .detail = detail, .kind = kind};
    for (RecordSink* s : sinks_) s->on_note(n);
  }
  template <typename TextFn>
  void warn(std::string_view key, TextFn&& text) const {
    warnings.warn(key, std::forward<TextFn>(text));
  }

  Ctx(const Settings& s, const PointTable& p, FlowTable& f, Roles& r, ClockRelations& c, Warnings& w,
      const GpuMap& g, const Sampling& sm, const std::vector<RecordSink*>& sinks, bool notes, DurationNs window,
      DurationNs idle)
      : settings(s), points(p), flows(f), roles(r), clock(c), warnings(w), gpus(g), sampling(sm), frame_notes(notes),
        reorder_window(window), idle_point(idle), sinks_(sinks) {}

 private:
  const std::vector<RecordSink*>& sinks_;
};

class Component {
 public:
  virtual ~Component() = default;
  /// A packet of a kind the component asked for, at its point, in that point's stamp order.
  virtual void on_packet(const Packet& p, Ctx& ctx) = 0;
  /// Point `point`'s horizon advanced: every packet stamped at or before it has been handled.
  virtual void on_advance(PointId point, Ctx& ctx) = 0;
  /// The input ended: report everything still open.
  virtual void finish(Ctx& ctx) = 0;
  /// A final record of a kind listed in the spec's `inputs` (record stages only).
  virtual void on_record(const Record&, Ctx&) {}
};

struct ComponentFactory {
  const ComponentSpec* spec;
  std::unique_ptr<Component> (*make)(Ctx& ctx);
};

/// Fills a message's or flow's GPU ends from the map.
inline void bind_gpus(const GpuMap& map, const IpAddress& src, const IpAddress& dst, GpuEnds& out) {
  if (map.empty()) return;
  const GpuBinding* s = map.find(src);
  const GpuBinding* d = map.find(dst);
  if (s) {
    out.src_gpu = s->gpu;
    out.src_node = s->node;
  }
  if (d) {
    out.dst_gpu = d->gpu;
    out.dst_node = d->node;
  }
  // Interned names: equal names are the same pointer.
  if (s && d && s->job && s->job == d->job) out.job = s->job;
}

/// Every metric component, in one list (engine/metrics/registry.cpp).
std::span<const ComponentFactory> component_registry();

}  // namespace rdmatel
