// SPDX-License-Identifier: GPL-2.0-or-later
#include "engine/metrics/congestion/congestion_plugin.h"

namespace rdmatel::congestion {

void CongestionPlugin::on_packet(EngineContext& ctx, const PacketContext& p) {
  bool cnp = p.pkt.op->op_class == IbOpClass::kCnp;
  bool ce = p.pkt.ecn_ce();
  if (!cnp && !ce) return;
  CongestionCounts& c = counts_[uint64_t(p.flow.id) << 32 | p.point];
  if (ce) ++c.ecn_ce;
  if (cnp) ++c.cnp;
  if (!cfg_.frame_notes) return;
  if (ce) ctx.sink.on_frame_note(FrameNote{p.frame, NoteKind::kEcnCe, 0, 0});
  if (cnp) ctx.sink.on_frame_note(FrameNote{p.frame, NoteKind::kCnp, 0, 0});
}

}  // namespace rdmatel::congestion
