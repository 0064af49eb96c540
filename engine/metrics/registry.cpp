// SPDX-License-Identifier: GPL-2.0-or-later
// Every metric plugin, in one list: add a plugin here and the engine runs it.
#include "engine/core/engine.h"
#include "engine/metrics/congestion/congestion_plugin.h"
#include "engine/metrics/io_quality/io_quality_plugin.h"
#include "engine/metrics/messages/messages_plugin.h"

namespace rdmatel {

std::vector<std::unique_ptr<MetricPlugin>> make_metric_plugins(const EngineConfig& config) {
  std::vector<std::unique_ptr<MetricPlugin>> plugins;
  plugins.push_back(std::make_unique<io_quality::IoQualityPlugin>(config));
  plugins.push_back(std::make_unique<messages::MessagesPlugin>(config));
  plugins.push_back(std::make_unique<congestion::CongestionPlugin>(config));
  return plugins;
}

}  // namespace rdmatel
