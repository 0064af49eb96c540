// SPDX-License-Identifier: GPL-2.0-or-later
// The plugin's preferences (Edit > Preferences > Protocols > RDMA Telemetry, tshark -o rdmatel.NAME:VALUE)
// and the observation-point role table (UAT "rdmatel_point_roles"). One struct; the engine's
// configuration is derived from it whenever a capture is (re)dissected.
#pragma once

#include <epan/prefs.h>

#include <optional>

#include "engine/core/config.h"
#include "engine/util/time.h"

namespace rdmatel::plugin {

/// "Slow" thresholds in µs; 0 turns a threshold off (SPEC §7 threshold alerts).
struct SlowThresholds {
  unsigned rtt_us = 0, dal_us = 0, dpl_us = 0, iol1_us = 0, iol2_us = 0, fct_us = 0;
  bool any_io() const { return rtt_us || dal_us || dpl_us || iol1_us || iol2_us; }
};

struct Prefs {
  unsigned io_timeout_s = 10;
  unsigned reorder_window_ms = 250;
  unsigned period_ms = 1000;
  unsigned max_ios = 1u << 20;
  unsigned max_flows = 1u << 20;
  unsigned max_messages = 1u << 20;
  SlowThresholds slow;
};

extern Prefs prefs;

/// Registers the preferences and the role table with the protocol's module.
void register_preferences(int proto);

/// The engine configuration the current preferences and role table describe.
EngineConfig engine_config_from_prefs();

/// True when `value_ns` exceeds a threshold of `threshold_us` µs (0 = off).
inline bool exceeds(std::optional<DurationNs> value_ns, unsigned threshold_us) {
  return threshold_us && value_ns && *value_ns > DurationNs(threshold_us) * 1000;
}

}  // namespace rdmatel::plugin
