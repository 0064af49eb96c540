// SPDX-License-Identifier: GPL-2.0-or-later
#include "engine/core/flow_table.h"

#include "engine/util/psn.h"

namespace rdmatel {
namespace {

// An echoed PSN must lie within this many PSNs behind the newest request PSN of a candidate:
// RC allows at most 2^23 outstanding, real NICs far fewer.
constexpr int32_t kEchoWindow = 1 << 16;
// Pairing considers at most this many unpaired candidate flows between two addresses;
// beyond that the evidence is ambiguous anyway and the search would cost too much.
constexpr size_t kMaxPairCandidates = 64;

bool is_request(IbOpClass c) {
  return c == IbOpClass::kSend || c == IbOpClass::kWrite || c == IbOpClass::kReadRequest ||
         c == IbOpClass::kAtomic;
}

bool is_response(IbOpClass c) {
  return c == IbOpClass::kAcknowledge || c == IbOpClass::kReadResponse ||
         c == IbOpClass::kAtomicAcknowledge;
}

}  // namespace

Flow* FlowTable::find(const FlowKey& key) {
  auto it = index_.find(key);
  return it == index_.end() ? nullptr : &flows_[it->second];
}

Flow* FlowTable::get(const RoceFrame& pkt) {
  FlowKey key{pkt.src, pkt.dst, pkt.bth.dest_qp};
  auto it = index_.find(key);
  if (it != index_.end()) return &flows_[it->second];
  if (flows_.size() >= cfg_.max_flows) {
    ++stats_.flows_refused;
    return nullptr;
  }
  FlowId id = FlowId(flows_.size());
  Flow& f = flows_.emplace_back();
  f.id = id;
  f.key = key;
  index_.emplace(key, id);
  by_pair_[IpPair{key.src, key.dst}].push_back(id);
  return &f;
}

const std::vector<FlowId>& FlowTable::between(const IpAddress& src, const IpAddress& dst) const {
  auto it = by_pair_.find(IpPair{src, dst});
  return it == by_pair_.end() ? empty_ : it->second;
}

void FlowTable::observe(Flow& flow, const RoceFrame& pkt) {
  ++flow.packets;
  if (!pkt.op) return;
  IbOpClass c = pkt.op->op_class;
  // Only reliable-connected style transports have PSN echoes worth learning from.
  if (pkt.op->transport != IbTransport::kRC && pkt.op->transport != IbTransport::kXRC) return;
  if (is_request(c)) {
    uint32_t last = pkt.bth.psn;
    if (!flow.requests_seen) {
      flow.requests_seen = true;
      flow.req_first_psn = pkt.bth.psn;
      flow.req_newest_psn = last;
    } else if (psn::newer(last, flow.req_newest_psn)) {
      flow.req_newest_psn = last;
    }
  } else if (is_response(c) && flow.peer == kNoFlow) {
    learn_from_echo(flow, pkt.bth.psn);
  }
}

void FlowTable::learn_from_echo(Flow& responder_flow, uint32_t echoed) {
  // responder_flow goes B→A; the requester's flow goes A→B.
  const auto& candidates = between(responder_flow.key.dst, responder_flow.key.src);
  if (candidates.size() > kMaxPairCandidates) return;
  Flow* match = nullptr;
  for (FlowId id : candidates) {
    Flow& f = flows_[id];
    if (f.peer != kNoFlow || !f.requests_seen) continue;
    int32_t behind = psn::distance(echoed, f.req_newest_psn);  // newest - echoed
    int32_t span = psn::distance(f.req_first_psn, f.req_newest_psn);
    // The echo must not be newer than anything requested, nor older than the first request.
    if (behind < 0 || behind > kEchoWindow || behind > span) continue;
    if (match) return;  // ambiguous: wait for more evidence
    match = &f;
  }
  if (match) pair(*match, responder_flow);
}

bool FlowTable::pair(Flow& a, Flow& b) {
  if (a.peer == b.id && b.peer == a.id) return true;
  if (a.peer != kNoFlow || b.peer != kNoFlow || a.id == b.id) {
    ++stats_.pair_conflicts;
    return false;
  }
  a.peer = b.id;
  b.peer = a.id;
  ++stats_.pairs_learned;
  return true;
}

}  // namespace rdmatel
