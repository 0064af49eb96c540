// SPDX-License-Identifier: GPL-2.0-or-later
// The measurement engine: decodes each frame once, keeps the shared state (points, flows) and
// hands every RoCEv2 packet to the metric plugins. Front ends (CLI, Wireshark plugin) feed it
// frames in file order and receive records through a ResultSink.
#pragma once

#include <memory>
#include <set>
#include <string>
#include <vector>

#include "engine/core/config.h"
#include "engine/core/flow_table.h"
#include "engine/core/metric_plugin.h"
#include "engine/core/points.h"
#include "engine/core/result_sink.h"
#include "engine/decode/link_type.h"

namespace rdmatel {

/// One frame as the front end read it.
struct FrameInput {
  uint64_t frame = 0;  ///< 1-based, file order
  TimeNs ts = 0;
  PointId point = kNoPoint;  ///< from Engine::declare_point
  LinkType link = LinkType::kEthernet;
  const uint8_t* data = nullptr;
  uint32_t cap_len = 0;
  uint32_t wire_len = 0;
};

struct EngineStats {
  uint64_t frames = 0;
  uint64_t roce = 0;
  uint64_t malformed = 0;
  uint64_t pfc = 0;
  uint64_t unsupported_link = 0;
  uint64_t frames_without_point = 0;
};

class Engine {
 public:
  Engine(EngineConfig config, ResultSink& sink);
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  /// Declares a capture interface; returns its observation point (kNoPoint at the limit).
  /// Declare every interface the capture announces before feeding its frames, so that results
  /// wait for points that have not carried a packet yet.
  PointId declare_point(uint32_t interface_id, const std::string& name);

  /// Processes one frame. Never throws on packet contents.
  void process(const FrameInput& in);

  /// Ends the capture: every outstanding record is finalized. Idempotent.
  void finish();

  const PointRegistry& points() const { return points_; }
  const FlowTable& flows() const { return flows_; }
  const EngineStats& stats() const { return stats_; }
  const EngineConfig& config() const { return config_; }
  /// The last malformed-packet reason (for the front end's message), or nullptr.
  const char* last_error() const { return last_error_; }

 private:
  static void warn_once(EngineContext& ctx, const char* key, const std::string& text);

  EngineConfig config_;
  ResultSink& sink_;
  PointRegistry points_;
  FlowTable flows_;
  EngineContext ctx_;
  std::vector<std::unique_ptr<MetricPlugin>> plugins_;
  EngineStats stats_;
  std::set<std::string> warned_;
  const char* last_error_ = nullptr;
  bool finished_ = false;
};

/// The explicit list of metric plugins (metrics/registry.cpp).
std::vector<std::unique_ptr<MetricPlugin>> make_metric_plugins(const EngineConfig& config);

}  // namespace rdmatel
