// SPDX-License-Identifier: GPL-2.0-or-later
#include "engine/src/core/roles.h"

#include <algorithm>

#include "engine/src/util/small_vector.h"

namespace rdmatel {

namespace {

// What recompute() reads of a pair's counts: which point has more votes, and whether they are
// fewer than `margin` apart.
template <typename Pair>
unsigned standing(const Pair& p, uint64_t margin) {
  const uint64_t gap = p.a_nearer > p.b_nearer ? p.a_nearer - p.b_nearer : p.b_nearer - p.a_nearer;
  return unsigned(p.a_nearer > p.b_nearer) | unsigned(p.b_nearer > p.a_nearer) << 1 |
         unsigned(gap < margin) << 2;
}

}  // namespace

Roles::Evidence* Roles::find_or_add(const IpAddress& ip, Side side) {
  auto it = endpoints_.find(EndpointKey{ip, side});
  if (it == endpoints_.end()) {
    // Bounded: further endpoints go without evidence.
    if (endpoints_.size() >= kMaxEndpoints) return nullptr;
    it = endpoints_.emplace(EndpointKey{ip, side}, Evidence{}).first;
  }
  return &it->second;
}

// `a` < `b`: the pair's points in order, `nearer` one of them.
void Roles::add_pair(Evidence& e, PointId a, PointId b, PointId nearer) {
  if (e.pairs.size() >= kMaxPairsPerEndpoint) return;
  Pair& p = e.pairs.emplace_back(Pair{a, b});
  ++pairs_added_;
  ++(nearer == a ? p.a_nearer : p.b_nearer);
  recompute(e);
}

inline void Roles::vote(const IpAddress& ip, Side side, Evidence*& found, PointId nearer,
                        PointId farther) {
  if (nearer == farther) return;
  if (!found && !(found = find_or_add(ip, side))) return;
  Evidence& e = *found;
  const PointId a = std::min(nearer, farther), b = std::max(nearer, farther);
  Pair* p = nullptr;
  for (Pair& x : e.pairs)
    if (x.a == a && x.b == b) {
      p = &x;
      break;
    }
  if (!p) return add_pair(e, a, b, nearer);
  uint64_t& mine = nearer == a ? p->a_nearer : p->b_nearer;
  const uint64_t theirs = nearer == a ? p->b_nearer : p->a_nearer;
  // Most votes add to a majority already kSettledMargin ahead: nothing recompute() reads
  // changes, so neither do the nearest points.
  if (mine >= theirs + kSettledMargin) {
    ++mine;
    return;
  }
  const unsigned before = standing(*p, kSettledMargin);
  ++mine;
  if (standing(*p, kSettledMargin) != before) recompute(e);
}

void Roles::recompute(Evidence& e) {
  // Every I/O seen at two points votes: the scratch list keeps its memory between votes.
  std::vector<PointId>& nearest = scratch_;
  nearest.clear();
  auto beaten = [&](PointId x) {
    for (const Pair& p : e.pairs) {
      if (p.a == x && p.b_nearer > p.a_nearer) return true;
      if (p.b == x && p.a_nearer > p.b_nearer) return true;
    }
    return false;
  };
  for (const Pair& p : e.pairs)
    for (PointId x : {p.a, p.b})
      if (!beaten(x) && std::find(nearest.begin(), nearest.end(), x) == nearest.end()) nearest.push_back(x);
  std::sort(nearest.begin(), nearest.end());
  bool settled = true;
  for (const Pair& p : e.pairs) {
    const bool involved = std::binary_search(nearest.begin(), nearest.end(), p.a) ||
                          std::binary_search(nearest.begin(), nearest.end(), p.b);
    const uint64_t margin = p.a_nearer > p.b_nearer ? p.a_nearer - p.b_nearer : p.b_nearer - p.a_nearer;
    if (involved && margin < kSettledMargin) settled = false;
  }
  if (nearest != e.nearest || settled != e.settled) {
    e.nearest = nearest;
    e.settled = settled;
    ++version_;
  }
}

void Roles::add_evidence(const IpAddress& host, const IpAddress& storage,
                         std::span<const Sighting> s, PairMemo* memo) {
  // Each endpoint's entry is looked up once per I/O at most (once per memo with one).
  Evidence* host_found = memo ? memo->host : nullptr;
  Evidence* storage_found = memo ? memo->storage : nullptr;
  for (size_t i = 0; i < s.size(); ++i)
    for (size_t j = i + 1; j < s.size(); ++j) {
      const Sighting& x = s[i];
      const Sighting& y = s[j];
      if (x.point == y.point) continue;
      // The longer span is nearer the host, the shorter nearer the storage server.
      if (x.has_span && y.has_span && x.span != y.span) {
        PointId near_host = x.span > y.span ? x.point : y.point;
        PointId near_storage = near_host == x.point ? y.point : x.point;
        vote(host, kHost, host_found, near_host, near_storage);
        vote(storage, kStorageSide, storage_found, near_storage, near_host);
      }
      // Routed fabrics: each router decrements the TTL, so the sender's packets carry a higher
      // one at the points nearer the sender.
      if (x.ttl_command >= 0 && y.ttl_command >= 0 && x.ttl_command != y.ttl_command) {
        PointId near_host = x.ttl_command > y.ttl_command ? x.point : y.point;
        vote(host, kHost, host_found, near_host, near_host == x.point ? y.point : x.point);
      }
      if (x.ttl_completion >= 0 && y.ttl_completion >= 0 && x.ttl_completion != y.ttl_completion) {
        PointId near_storage = x.ttl_completion > y.ttl_completion ? x.point : y.point;
        vote(storage, kStorageSide, storage_found, near_storage,
             near_storage == x.point ? y.point : x.point);
      }
    }
  if (memo) {
    memo->host = host_found;
    memo->storage = storage_found;
  }
}

const Roles::Evidence* Roles::find(const IpAddress& ip, Side side) const {
  auto it = endpoints_.find(EndpointKey{ip, side});
  return it == endpoints_.end() ? nullptr : &it->second;
}

PointId Roles::best(const Evidence* e, std::span<const PointId> candidates) {
  PointId pick = kNoPoint;
  int64_t pick_score = 0;
  for (PointId c : candidates) {
    int64_t score = 0;
    if (e)
      for (const Pair& p : e->pairs) {
        if (p.a == c) score += int64_t(p.a_nearer) - int64_t(p.b_nearer);
        if (p.b == c) score += int64_t(p.b_nearer) - int64_t(p.a_nearer);
      }
    if (pick == kNoPoint || score > pick_score || (score == pick_score && c < pick)) {
      pick = c;
      pick_score = score;
    }
  }
  return pick;
}

PointId Roles::pick(const Evidence* e, PointRole role, std::span<const PointId> seen,
                    const PointTable& points, bool fallback, bool& known, bool& by_votes) const {
  // Configured points first: the user said where the compute (storage) side is.
  SmallVector<PointId, 8> candidates;  // at most one per point of `seen`
  auto choose = [&](const Evidence* by) {
    by_votes |= by && candidates.size() > 1;
    return best(by, std::span<const PointId>(candidates.begin(), candidates.size()));
  };
  for (PointId p : seen)
    if (points[p].configured == role) candidates.push_back(p);
  if (!candidates.empty()) {
    known = true;
    return choose(e);
  }
  auto usable = [&](PointId p) { return points[p].configured == PointRole::kUnknown; };
  if (e && !e->nearest.empty() && (e->settled || fallback)) {
    bool decided = false;
    for (PointId p : e->nearest) {
      // A configured point of this role is nearest but did not see this I/O: decided, none.
      if (points[p].configured == role) decided = true;
      if (!usable(p)) continue;
      decided = true;  // decided, even when its point did not see this I/O
      if (std::find(seen.begin(), seen.end(), p) != seen.end()) candidates.push_back(p);
    }
    if (decided) {
      known = true;
      return choose(e);
    }
  }
  if (!fallback) return kNoPoint;
  // No evidence of its own: the points that are this side for every endpoint they were ranked
  // for (a host's I/Os all seen at one point, a compute leaf known from the other hosts).
  for (PointId p : seen) {
    if (!usable(p)) continue;
    uint64_t as_compute = 0, as_storage = 0;
    summarize(p, as_compute, as_storage);
    bool fits = role == PointRole::kCompute ? as_compute > 0 && as_storage == 0 : as_storage > 0 && as_compute == 0;
    if (fits) candidates.push_back(p);
  }
  known = !candidates.empty();
  return choose(nullptr);
}

Roles::Sides Roles::work_out_sides(const IpAddress& host, const IpAddress& storage,
                                   std::span<const PointId> seen, const PointTable& points,
                                   bool fallback, PairMemo* memo) const {
  const bool memo_fits = memo && !fallback && seen.size() <= PairMemo::kSeen;
  const Evidence* host_e = memo && memo->host ? memo->host : find(host, kHost);
  const Evidence* storage_e = memo && memo->storage ? memo->storage : find(storage, kStorageSide);
  Sides s;
  bool by_votes = false;
  s.compute = pick(host_e, PointRole::kCompute, seen, points, fallback, s.compute_known, by_votes);
  s.storage =
      pick(storage_e, PointRole::kStorage, seen, points, fallback, s.storage_known, by_votes);
  // One point cannot be both sides of one I/O (host and storage server behind the same
  // mirrored switch): it is then the compute side only, and the I/O has no storage-side stamps.
  if (s.storage != kNoPoint && s.storage == s.compute) s.storage = kNoPoint;
  if (memo) {
    // Entries are only read here; the memo lets add_evidence() vote through them too.
    memo->host = const_cast<Evidence*>(host_e);
    memo->storage = const_cast<Evidence*>(storage_e);
  }
  if (memo_fits) {
    memo->valid = !by_votes;
    memo->version = version_;
    memo->seen_count = uint8_t(seen.size());
    std::copy(seen.begin(), seen.end(), memo->seen);
    memo->sides = s;
  }
  return s;
}

PointRole Roles::role_for(const PointTable& points, PointId point, const IpAddress& a, const IpAddress& b) const {
  if (point >= points.size()) return PointRole::kUnknown;
  if (points[point].configured != PointRole::kUnknown) return points[point].configured;
  bool ranked = false;
  auto nearest = [&](const IpAddress& ip, Side side) {
    const Evidence* e = find(ip, side);
    if (!e) return false;
    ranked = ranked || e->ranks(point);
    return std::binary_search(e->nearest.begin(), e->nearest.end(), point);
  };
  if (nearest(a, kHost) || nearest(b, kHost)) return PointRole::kCompute;
  if (nearest(a, kStorageSide) || nearest(b, kStorageSide)) return PointRole::kStorage;
  return ranked ? PointRole::kFabric : PointRole::kUnknown;
}

void Roles::summarize(PointId point, uint64_t& compute_endpoints, uint64_t& storage_endpoints, bool* ranked) const {
  // Once per point and state of the evidence: every record of an endpoint without evidence of
  // its own asks this of its points (pick's fallback), and it reads every endpoint.
  if (point >= summaries_.size()) summaries_.resize(size_t(point) + 1);
  Summary& s = summaries_[point];
  if (s.version != evidence_version()) {
    s = Summary{evidence_version(), 0, 0, false};
    for (const auto& [key, e] : endpoints_) {
      if (std::binary_search(e.nearest.begin(), e.nearest.end(), point))
        ++(key.side == kHost ? s.compute_endpoints : s.storage_endpoints);
      if (!s.ranked) s.ranked = e.ranks(point);
    }
  }
  compute_endpoints = s.compute_endpoints;
  storage_endpoints = s.storage_endpoints;
  if (ranked) *ranked = s.ranked;
}

std::vector<std::string> Roles::contradictions(const PointTable& points) const {
  std::vector<std::string> out;
  auto name = [&](PointId p) { return p < points.size() ? points[p].name : std::string("?"); };
  // Contradictory votes: the same two points ordered both ways for one endpoint.
  std::vector<std::pair<const EndpointKey*, const Pair*>> mixed;
  for (const auto& [key, e] : endpoints_)
    for (const Pair& p : e.pairs)
      if (p.a_nearer && p.b_nearer) mixed.emplace_back(&key, &p);
  std::sort(mixed.begin(), mixed.end(), [](const auto& x, const auto& y) {
    return x.first->ip < y.first->ip || (x.first->ip == y.first->ip && x.first->side < y.first->side);
  });
  for (size_t i = 0; i < mixed.size() && i < 8; ++i) {
    const auto& [key, p] = mixed[i];
    const char* what = key->side == kHost ? "host" : "storage server";
    uint64_t n = p->a_nearer + p->b_nearer;
    out.push_back("contradictory role evidence for " + std::string(what) + " " + key->ip.to_string() + ": " +
                  name(p->a) + " was nearer it than " + name(p->b) + " in " + std::to_string(p->a_nearer) + " of " +
                  std::to_string(n) + " I/Os seen at both (command-to-completion spans or TTLs), farther in " +
                  std::to_string(p->b_nearer) + "; the majority is used");
  }
  if (mixed.size() > 8) out.push_back("... and " + std::to_string(mixed.size() - 8) + " more contradictory point pairs");
  // Configured roles the traffic says the opposite of.
  for (PointId id = 0; id < points.size(); ++id) {
    const PointRole configured = points[id].configured;
    if (configured != PointRole::kCompute && configured != PointRole::kStorage) continue;
    uint64_t as_compute = 0, as_storage = 0;
    summarize(id, as_compute, as_storage);
    bool contradicted = configured == PointRole::kCompute ? as_storage > 0 && as_compute == 0
                                                          : as_compute > 0 && as_storage == 0;
    if (contradicted)
      out.push_back("--point " + points[id].name + "=" + point_role_name(configured) +
                    " contradicts the traffic: the command-to-completion spans say it is nearest the " +
                    (configured == PointRole::kCompute ? "storage servers" : "hosts") + " of " +
                    std::to_string(configured == PointRole::kCompute ? as_storage : as_compute) +
                    " endpoints; the configured role is used");
  }
  return out;
}

}  // namespace rdmatel
