// SPDX-License-Identifier: GPL-2.0-or-later
#include "engine/src/core/flows.h"

#include <algorithm>
#include <utility>

#include "engine/src/util/psn.h"

namespace rdmatel {
namespace {

// An echoed PSN must lie within this many PSNs behind the newest request PSN of a candidate:
// RC allows at most 2^23 outstanding, real NICs far fewer.
constexpr int32_t kEchoWindow = 1 << 16;
// Pairing considers at most this many unpaired candidate flows between two addresses;
// beyond that the evidence is ambiguous anyway and the search would cost too much.
constexpr size_t kMaxPairCandidates = 64;
// How far before the first PSN seen a NAK may point (the first packets were the lost ones).
constexpr int32_t kNakSlack = 256;

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
  return const_cast<Flow*>(std::as_const(*this).find(key));
}

// Front ends ask for the flows of the frames they show (the plugin for every frame of its second
// pass): the cache answers most without hashing the key.
const Flow* FlowTable::find(const FlowKey& key) const {
  if (const Flow* f = cached(cache_slot(key.src, key.dst, key.dst_qpn), key.src, key.dst, key.dst_qpn)) return f;
  const FlowId* id = index_.find(key);
  return id ? by_id_[*id] : nullptr;
}

void FlowTable::apply_proposals_now() {
  for (auto [a, b] : proposals_) pair(*by_id_[a], *by_id_[b]);
  proposals_.clear();
}

Flow* FlowTable::get(const RoceFrame& pkt) {
  const size_t slot = cache_slot(pkt.src, pkt.dst, pkt.bth.dest_qp);
  if (Flow* f = cached(slot, pkt.src, pkt.dst, pkt.bth.dest_qp)) return f;
  FlowKey key{pkt.src, pkt.dst, pkt.bth.dest_qp};
  if (const FlowId* known = index_.find(key)) {
    cache_[slot] = by_id_[*known];
    return cache_[slot];
  }
  if (by_id_.size() >= max_flows_ || flow_points_.size() >= max_flows_) {
    ++stats_.flows_refused;
    return nullptr;
  }
  FlowId id = FlowId(by_id_.size());
  Flow& f = add_flow();
  f.id = id;
  f.key = key;
  f.key_hash = FlowKeyHash{}(key);
  index_[key] = id;
  by_pair_[IpPair{key.src, key.dst}].push_back(id);
  cache_[slot] = &f;
  if (journal_) journal_->push_back(FlowFact{FlowFact::Kind::kCreated, id, kNoFlow, key});
  return &f;
}

void FlowTable::replicate(const FlowFact& fact) {
  if (fact.kind == FlowFact::Kind::kCreated) {
    Flow& f = add_flow();
    f.id = fact.a;
    f.key = fact.key;
    f.key_hash = FlowKeyHash{}(fact.key);
    return;
  }
  by_id_[fact.a]->peer = fact.b;
  by_id_[fact.b]->peer = fact.a;
}

FlowPointId FlowTable::add_flow_point(Flow& flow, PointId point) {
  const FlowPointId next = FlowPointId(flow_points_.size());
  const bool full = flow_points_.size() >= max_flows_;
  if (flow.points.size() < kScannedPoints) {
    if (full) return refuse_flow_point();
    flow.points.push_back({point, next});
  } else {
    const uint64_t key = uint64_t(flow.id) << 32 | point;
    if (const FlowPointId* id = far_points_.find(key)) return *id - 1;  // stored + 1 (0: none)
    if (full) return refuse_flow_point();
    far_points_[key] = next + 1;
  }
  flow_points_.emplace_back(flow.id, point);
  return next;
}

const std::vector<FlowId>& FlowTable::between(const IpAddress& src, const IpAddress& dst) const {
  auto it = by_pair_.find(IpPair{src, dst});
  return it == by_pair_.end() ? empty_ : it->second;
}

void FlowTable::observe(Flow& flow, const PacketHeaders& pkt) {
  ++flow.packets;
  if (!pkt.op_known) return;
  IbOpClass c = pkt.op()->op_class;
  // Only reliable-connected style transports have PSN echoes worth learning from.
  if (pkt.op()->transport != IbTransport::kRC && pkt.op()->transport != IbTransport::kXRC) return;
  if (is_request(c)) {
    uint32_t last = pkt.bth.psn;
    if (!flow.requests_seen) {
      flow.requests_seen = true;
      flow.req_first_psn = pkt.bth.psn;
      flow.req_newest_psn = last;
    } else if (psn::newer(last, flow.req_newest_psn)) {
      flow.req_newest_psn = last;
    } else if (psn::newer(flow.req_first_psn, last) && psn::distance(last, flow.req_newest_psn) < kEchoWindow) {
      flow.req_first_psn = last;  // a resent packet older than the first one seen
    }
  } else if (is_response(c) && flow.peer == kNoFlow) {
    learn_from_echo(flow, pkt.bth.psn, pkt.is_nak());
  }
}

bool FlowTable::echoes_point_to(FlowId responder, FlowId requester) const {
  auto it = tallies_.find(responder);
  if (it == tallies_.end()) return false;
  const std::vector<FlowId>& c = it->second.candidates;
  return std::find(c.begin(), c.end(), requester) != c.end();
}

void FlowTable::learn_from_echo(Flow& responder_flow, uint32_t echoed, bool nak) {
  // A NAK names the PSN the responder expected: lost, so possibly never seen here, and up to
  // a few PSNs older than anything seen or one past the newest.
  const int32_t before_first = nak ? kNakSlack : 0;
  const int32_t past_newest = nak ? 1 : 0;
  // responder_flow goes B→A; the requester's flow goes A→B.
  const auto& flows_ab = between(responder_flow.key.dst, responder_flow.key.src);
  if (flows_ab.size() > kMaxPairCandidates) return;
  std::vector<FlowId> match;
  for (FlowId id : flows_ab) {
    Flow& f = *by_id_[id];
    if (f.peer != kNoFlow || !f.requests_seen) continue;
    int32_t behind = psn::distance(echoed, f.req_newest_psn);  // newest - echoed
    int32_t span = psn::distance(f.req_first_psn, f.req_newest_psn);
    // The echo must not be newer than anything requested, nor older than the first request.
    if (behind < -past_newest || behind > kEchoWindow || behind > span + before_first) continue;
    match.push_back(id);
  }
  if (match.empty()) return;
  Tally& t = tallies_[responder_flow.id];
  std::vector<FlowId> both;
  for (FlowId id : t.candidates)
    if (std::find(match.begin(), match.end(), id) != match.end() && by_id_[id]->peer == kNoFlow) both.push_back(id);
  if (both.empty()) {  // first evidence, or inconsistent evidence: start over
    t.candidates = std::move(match);
    t.echoes = 1;
  } else {
    t.candidates = std::move(both);
    ++t.echoes;
  }
  if (t.candidates.size() != 1) return;
  Flow& f = *by_id_[t.candidates[0]];
  if (t.echoes >= 2 || echoed == f.req_newest_psn) pair(f, responder_flow);
}

bool FlowTable::pair(Flow& a, Flow& b) {
  if (a.peer == b.id && b.peer == a.id) return true;
  if (a.peer != kNoFlow || b.peer != kNoFlow || a.id == b.id) {
    ++stats_.pair_conflicts;
    return false;
  }
  a.peer = b.id;
  b.peer = a.id;
  tallies_.erase(a.id);
  tallies_.erase(b.id);
  ++stats_.pairs_learned;
  if (journal_) journal_->push_back(FlowFact{FlowFact::Kind::kPaired, a.id, b.id, {}});
  settle_rivals(a);
  settle_rivals(b);
  return true;
}

void FlowTable::settle_rivals(const Flow& taken) {
  // Two QPs between the same hosts whose PSNs run side by side (NCCL starts every QP at 0): the
  // echoes of the one behind fit both, and it stayed unpaired once the other was paired (its NAKs
  // then counted nowhere). A responder whose echoes agreed on `taken` and one other flow now has
  // only the other.
  if (tallies_.empty()) return;
  const std::vector<FlowId>& responders = between(taken.key.dst, taken.key.src);
  if (responders.size() > kMaxPairCandidates) return;
  for (size_t i = 0; i < responders.size(); ++i) {
    const FlowId id = responders[i];
    auto it = tallies_.find(id);
    if (it == tallies_.end()) continue;
    std::vector<FlowId>& c = it->second.candidates;
    auto pos = std::find(c.begin(), c.end(), taken.id);
    if (pos == c.end()) continue;
    c.erase(pos);
    if (c.size() == 1 && it->second.echoes >= 2 && by_id_[c[0]]->peer == kNoFlow && by_id_[id]->peer == kNoFlow)
      pair(*by_id_[c[0]], *by_id_[id]);  // (erases the tally: `it` is not used again)
  }
}

}  // namespace rdmatel
