// SPDX-License-Identifier: GPL-2.0-or-later
#include "engine/core/engine.h"

#include <algorithm>

#include "engine/decode/roce_frame.h"

namespace rdmatel {
namespace {
// Housekeeping (finalization, timeouts) runs every this many RoCE packets: often enough to
// keep state small, rarely enough to cost nothing per packet.
constexpr uint64_t kHousekeepingInterval = 4096;
// Stamps are clamped to about +-146 years around 1970: any difference or sum of two of them, and
// of them and a timeout, then fits in 64 bits (hostile captures carry stamps anywhere).
constexpr TimeNs kStampLimit = (TimeNs(1) << 62) - (TimeNs(1) << 48);
}  // namespace

Engine::Engine(EngineConfig config, ResultSink& sink)
    : config_(std::move(config)),
      sink_(sink),
      points_(config_),
      flows_(config_),
      ctx_{config_, points_, flows_, sink_, &Engine::warn_once, this},
      plugins_(make_metric_plugins(config_)) {}

Engine::~Engine() = default;

void Engine::warn_once(EngineContext& ctx, const char* key, const std::string& text) {
  auto* self = static_cast<Engine*>(ctx.engine);
  if (!self->warned_.insert(key).second) return;
  self->sink_.on_warning(EngineWarning{text});
}

PointId Engine::declare_point(uint32_t interface_id, const std::string& name) {
  PointId id = points_.resolve(interface_id, name);
  if (id == kNoPoint)
    warn_once(ctx_, "max_points",
              "more than " + std::to_string(config_.max_points) +
                  " observation points: packets of the others are ignored (limit max_points)");
  return id;
}

void Engine::process(const FrameInput& in) {
  ++stats_.frames;
  if (finished_) return;
  if (in.point == kNoPoint || in.point >= points_.size()) {
    ++stats_.frames_without_point;
    return;
  }
  if (in.link == LinkType::kUnsupported) {
    ++stats_.unsupported_link;
    return;
  }
  FrameInput frame = in;
  frame.ts = std::clamp(in.ts, -kStampLimit, kStampLimit);
  points_.observe(frame.point, frame.ts);
  RoceFrame pkt;
  switch (decode_roce_frame(in.link, in.data, in.cap_len, in.wire_len, pkt)) {
    case FrameKind::kRoce: break;
    case FrameKind::kMalformed:
      ++stats_.malformed;
      last_error_ = pkt.error;
      return;
    case FrameKind::kPfc:
      ++stats_.pfc;
      return;
    case FrameKind::kOther:
      return;
  }
  ++stats_.roce;
  Flow* flow = flows_.get(pkt);
  if (!flow) {
    warn_once(ctx_, "max_flows",
              "more than " + std::to_string(config_.max_flows) +
                  " RDMA flows: packets of new flows are not measured (limit max_flows)");
    return;
  }
  flows_.observe(*flow, pkt);
  PacketContext p{frame.frame, frame.ts, frame.point, frame.data, pkt, *flow};
  for (auto& plugin : plugins_) plugin->on_packet(ctx_, p);
  if (stats_.roce % kHousekeepingInterval == 0)
    for (auto& plugin : plugins_) plugin->on_housekeeping(ctx_);
}

void Engine::finish() {
  if (finished_) return;
  finished_ = true;
  for (auto& plugin : plugins_) plugin->finish(ctx_);
}

}  // namespace rdmatel
