// SPDX-License-Identifier: GPL-2.0-or-later
// The plugin's preferences (Edit > Preferences > Protocols > RDMA Telemetry, tshark -o rdmatel.NAME:VALUE)
// and the observation-point role table (UAT "rdmatel_point_roles"). One struct; the engine's
// configuration is derived from it whenever a capture is (re)dissected.
#pragma once

#include <epan/prefs.h>

#include <optional>

#include <string>
#include <vector>

#include "rdmatel/settings.h"

namespace rdmatel::plugin {

/// "Slow" thresholds in µs; 0 turns a threshold off (SPEC §7 threshold alerts).
struct SlowThresholds {
  unsigned rtt_us = 0, dal_us = 0, dpl_us = 0, iol1_us = 0, iol2_us = 0, fct_us = 0;
  bool any_io() const { return rtt_us || dal_us || dpl_us || iol1_us || iol2_us; }
};

struct Prefs {
  SlowThresholds slow;
  /// Push frames whose results nobody reads yet on a thread of its own (EngineThread).
  gboolean engine_thread = TRUE;
};

extern Prefs prefs;

/// Registers the preferences (the engine's settings table, rendered as preferences) and the
/// role table with the protocol's module.
void register_preferences(int proto);

/// The engine settings the current preferences and role table describe. A value that does not
/// parse keeps its default, with a sentence in `problems`.
Settings engine_settings_from_prefs(std::vector<std::string>& problems);

/// True when `value_ns` exceeds a threshold of `threshold_us` µs (0 = off).
inline bool exceeds(std::optional<DurationNs> value_ns, unsigned threshold_us) {
  return threshold_us && value_ns && *value_ns > DurationNs(threshold_us) * 1000;
}

}  // namespace rdmatel::plugin
