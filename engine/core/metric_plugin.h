// SPDX-License-Identifier: GPL-2.0-or-later
// The interface every metric plugin implements, and what it gets for each packet.
#pragma once

#include <cstdint>

#include "engine/core/config.h"
#include "engine/core/flow_table.h"
#include "engine/core/points.h"
#include "engine/core/result_sink.h"
#include "engine/decode/roce_frame.h"
#include "engine/util/time.h"

namespace rdmatel {

/// Shared engine state a plugin may read and add evidence to.
struct EngineContext {
  const EngineConfig& config;
  PointRegistry& points;
  FlowTable& flows;
  ResultSink& sink;
  /// Warns once per `key` (a static string naming the condition).
  void (*warn_once)(EngineContext&, const char* key, const std::string& text);
  void* engine;  ///< owner, for warn_once
};

/// One decoded RoCEv2 packet at one observation point.
struct PacketContext {
  uint64_t frame;
  TimeNs ts;
  PointId point;
  const uint8_t* data;  ///< the captured frame bytes
  const RoceFrame& pkt;
  Flow& flow;  ///< the packet's flow (src IP, dst IP, dst QPN)
  const uint8_t* payload() const { return data + pkt.payload_offset; }
};

class MetricPlugin {
 public:
  virtual ~MetricPlugin() = default;
  virtual const char* name() const = 0;
  /// Called for every decoded RoCEv2 packet, in file order.
  virtual void on_packet(EngineContext& ctx, const PacketContext& p) = 0;
  /// Called every few thousand packets: finalize what is final, expire what timed out.
  virtual void on_housekeeping(EngineContext& ctx) = 0;
  /// Called once at the end of the capture: flush everything.
  virtual void finish(EngineContext& ctx) = 0;
};

}  // namespace rdmatel
