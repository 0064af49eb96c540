// SPDX-License-Identifier: GPL-2.0-or-later
#include "engine/metrics/congestion/congestion.h"

namespace rdmatel::congestion {
namespace {
const char* const kNotes[] = {"cong.ecn_ce", "cong.cnp"};
}  // namespace

const ComponentSpec kSpec = {"congestion", kPacketAllRoce, {}, {}, kNotes};

Congestion::Congestion(Ctx&) : note_ce_(note_kind("cong.ecn_ce")), note_cnp_(note_kind("cong.cnp")) {}

void Congestion::on_packet(const Packet& p, Ctx& ctx) {
  bool cnp = p.roce.op && p.roce.op->op_class == IbOpClass::kCnp;
  bool ce = p.roce.ecn_ce();
  if (!cnp && !ce) return;
  CongestionCounts& c = counts_[uint64_t(p.flow) << 32 | p.point];
  if (ce) ++c.ecn_ce;
  if (cnp) ++c.cnp;
  if (ce) ctx.note(p.frame, note_ce_, 0);
  if (cnp) ctx.note(p.frame, note_cnp_, 0);
}

}  // namespace rdmatel::congestion
