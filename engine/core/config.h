// SPDX-License-Identifier: GPL-2.0-or-later
// Engine settings: timeouts and the limits that keep state bounded on any input.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "engine/core/point_role.h"
#include "engine/util/time.h"

namespace rdmatel {

/// A user's role assignment: NAME (interface name or numeric interface id) = ROLE.
struct PointRoleOverride {
  std::string name;
  PointRole role = PointRole::kUnknown;
};

struct EngineConfig {
  /// An I/O without a completion is reported incomplete once every point that saw its command
  /// has moved this far past it.
  DurationNs io_timeout_ns = 10 * kNsPerSec;
  /// How far stamps may go backwards within one point, and how long a record waits for the
  /// other points' copies of its packets before it is final.
  DurationNs reorder_window_ns = 250 * kNsPerMs;
  /// A point whose stamps lag the newest stamp of the capture by more than this is idle and
  /// does not hold back results.
  DurationNs idle_point_ns = 10 * kNsPerSec;

  /// An RDMA message no packet has touched for this long (at its point) is final even without
  /// an ACK covering it; acknowledged messages are final after the reorder window.
  DurationNs message_timeout_ns = 1 * kNsPerSec;
  /// Length of the per-flow periods (SPEC §5).
  DurationNs period_ns = 1 * kNsPerSec;

  size_t max_flows = size_t(1) << 20;
  size_t max_open_messages = size_t(1) << 20;
  size_t max_outstanding_ios = size_t(1) << 20;
  size_t max_points = 4096;

  std::vector<PointRoleOverride> roles;

  /// Whether the front end wants per-frame notes (the Wireshark plugin does; the CLI does not).
  bool frame_notes = false;
};

}  // namespace rdmatel
