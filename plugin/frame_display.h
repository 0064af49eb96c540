// SPDX-License-Identifier: GPL-2.0-or-later
// Builds the "RDMA Telemetry" tree of one frame from what the first pass stored.
// Only plain data is alive here: Wireshark may longjmp out of any proto_tree_add call.
#pragma once

#include <epan/packet.h>

#include "plugin/capture_state.h"

namespace rdmatel::plugin {

/// `endpoints` (may be null) are the frame's RDMA endpoints, shown as rdmatel.qp.*.
void display_frame(tvbuff_t* tvb, packet_info* pinfo, proto_tree* tree, const CaptureState& state,
                   const FrameView& view, const FrameEndpoints* endpoints);

}  // namespace rdmatel::plugin
