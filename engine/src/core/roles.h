// SPDX-License-Identifier: GPL-2.0-or-later
// Point roles without clocks (SPEC §3), a fact of the core that metric components feed and read.
//
// Evidence is an ordering of points by nearness to one endpoint. At every point that saw both the
// command and the completion of an I/O, the span completion - command is measured on that
// point's own clock; since IOL1 = IOL2 + RTT with RTT > 0, a point with a longer span is nearer
// the host and a point with a shorter span nearer the storage server. Where the fabric is routed,
// the TTL / hop limit says the same: the host's packets carry a higher TTL nearer the host, the
// storage server's nearer the storage. Each I/O seen at several points adds one vote per pair of
// points, for its host and for its storage server.
//
// Per endpoint, the points no other point outvotes are its nearest points: the compute side of a
// host, the storage side of a storage server (once no pair with them rests on one vote alone). A
// mirror of a whole leaf switch thus is the compute side of its hosts and the storage side of its
// storage servers. Configured roles (--point) come first; a configured role the traffic
// contradicts, and contradictory votes, are reported.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/src/core/points.h"
#include "rdmatel/types.h"

namespace rdmatel {

class Roles {
 public:
  /// What one point saw of one I/O.
  struct Sighting {
    PointId point = kNoPoint;
    bool has_span = false;
    DurationNs span = 0;  ///< completion - command, the point's own clock
    int16_t ttl_command = -1;     ///< TTL of the command capsule at the point (-1: not seen)
    int16_t ttl_completion = -1;  ///< TTL of the completion capsule
  };

  struct Sides {
    PointId compute = kNoPoint;
    PointId storage = kNoPoint;
    /// Whether the side is decided (the endpoint has evidence or a configured point saw it):
    /// a decided side may still be kNoPoint when its point did not see this I/O.
    bool compute_known = false;
    bool storage_known = false;
  };

 private:
  struct Evidence;

 public:
  /// What a caller that comes back to one host and storage server again and again (io_quality:
  /// every I/O of a queue) keeps between calls, so that an I/O costs no hash of their addresses:
  /// both endpoints' evidence, found once (entries are never removed), and the sides last worked
  /// out. Those stay valid while no endpoint's nearest points change (version()) and the same
  /// points saw the I/O, unless votes chose between several candidates (the counts change with
  /// every I/O): such sides are worked out again each time. One memo per (host, storage).
  class PairMemo {
    friend class Roles;
    static constexpr size_t kSeen = 4;
    Evidence* host = nullptr;
    Evidence* storage = nullptr;
    bool valid = false;
    uint64_t version = 0;
    uint8_t seen_count = 0;
    PointId seen[kSeen] = {};
    Sides sides;
    bool same_seen(std::span<const PointId> s) const {
      if (s.size() != seen_count) return false;
      for (size_t i = 0; i < s.size(); ++i)  // a few points: no call to memcmp
        if (s[i] != seen[i]) return false;
      return true;
    }
  };

  /// Adds the votes of one I/O of `host` with `storage` seen at several points.
  void add_evidence(const IpAddress& host, const IpAddress& storage,
                    std::span<const Sighting> sightings, PairMemo* memo = nullptr);

  /// The compute and storage sides of an I/O of `host` with `storage`, among the points in
  /// `seen` (those that saw its command). With `fallback`, an endpoint without evidence of its
  /// own takes the role its points have for every other endpoint (used at the end of a capture).
  Sides sides(const IpAddress& host, const IpAddress& storage, std::span<const PointId> seen,
              const PointTable& points, bool fallback, PairMemo* memo = nullptr) const {
    if (memo && !fallback && memo->valid && memo->version == version_ && memo->same_seen(seen))
      return memo->sides;  // inline: nearly every I/O of a queue once its roles are known
    return work_out_sides(host, storage, seen, points, fallback, memo);
  }

  /// The role of `point` for a packet between `a` and `b` (see Engine::role_for).
  PointRole role_for(const PointTable& points, PointId point, const IpAddress& a, const IpAddress& b) const;
  /// How many hosts a point is the compute side of, and storage servers it is the storage side of;
  /// `ranked` (when asked): it was compared with another point for some endpoint (saw I/Os
  /// complete there too).
  void summarize(PointId point, uint64_t& compute_endpoints, uint64_t& storage_endpoints, bool* ranked = nullptr) const;

  /// Whether every one of `points` was compared with another point for `ip` as a host
  /// (`host_side`) or as a storage server (it saw I/Os of it complete, as another point did).
  bool ranks_all(const IpAddress& ip, bool host_side, std::span<const PointId> points) const {
    const Evidence* e = find(ip, host_side ? kHost : kStorageSide);
    if (!e) return points.empty();
    for (PointId point : points)
      if (!e->ranks(point)) return false;
    return true;
  }

  /// Changes whenever some endpoint's nearest points change.
  uint64_t version() const { return version_; }
  /// Changes with version() and whenever two points are first compared for an endpoint
  /// (ranks_all() may answer differently): what a caller waiting on either looks again at.
  uint64_t evidence_version() const { return version_ + pairs_added_; }

  /// Sentences about contradictory votes and configured roles the traffic contradicts.
  std::vector<std::string> contradictions(const PointTable& points) const;

 private:
  enum Side : uint8_t { kHost = 0, kStorageSide = 1 };
  struct EndpointKey {
    IpAddress ip;
    Side side;
    friend bool operator==(const EndpointKey& a, const EndpointKey& b) { return a.side == b.side && a.ip == b.ip; }
  };
  struct EndpointKeyHash {
    size_t operator()(const EndpointKey& k) const noexcept { return hash_ip(k.ip) * 3 + k.side; }
  };
  /// Votes between two points: how often `a` was nearer than `b`, and the reverse.
  struct Pair {
    PointId a, b;  ///< a < b
    uint64_t a_nearer = 0, b_nearer = 0;
  };
  struct Evidence {
    std::vector<Pair> pairs;
    std::vector<PointId> nearest;  ///< points no other point outvotes
    /// Every pair with a nearest point is outvoted by kSettledMargin votes at least: one I/O's
    /// vote can be wrong (two ports of a switch a few hundred ns apart, stamps noisier than
    /// that), so sides are decided on it only at the end (fallback).
    bool settled = false;
    /// Whether `point` was compared with another for this endpoint (saw its I/Os complete too).
    bool ranks(PointId point) const {
      for (const Pair& p : pairs)
        if (p.a == point || p.b == point) return true;
      return false;
    }
  };
  static constexpr uint64_t kSettledMargin = 2;
  static constexpr size_t kMaxPairsPerEndpoint = 256;
  static constexpr size_t kMaxEndpoints = 1 << 20;

  /// `e`: the endpoint's evidence when found before (kept by the caller), else looked up and
  /// made here.
  void vote(const IpAddress& ip, Side side, Evidence*& e, PointId nearer, PointId farther);
  /// vote()'s rare steps, out of line: an endpoint's first evidence, a pair's first vote.
  [[gnu::noinline]] Evidence* find_or_add(const IpAddress& ip, Side side);
  [[gnu::noinline]] void add_pair(Evidence& e, PointId a, PointId b, PointId nearer);
  void recompute(Evidence& e);
  const Evidence* find(const IpAddress& ip, Side side) const;
  /// The best of `candidates` for an endpoint (most net votes), or kNoPoint.
  static PointId best(const Evidence* e, std::span<const PointId> candidates);
  /// sides() when the memo does not have them.
  Sides work_out_sides(const IpAddress& host, const IpAddress& storage,
                       std::span<const PointId> seen, const PointTable& points, bool fallback,
                       PairMemo* memo) const;
  /// `by_votes`: set when the vote counts chose between several candidates.
  PointId pick(const Evidence* e, PointRole role, std::span<const PointId> seen,
               const PointTable& points, bool fallback, bool& known, bool& by_votes) const;

  std::unordered_map<EndpointKey, Evidence, EndpointKeyHash> endpoints_;
  uint64_t version_ = 0;
  uint64_t pairs_added_ = 0;
  /// summarize()'s answers by point, as of evidence_version().
  struct Summary {
    uint64_t version = ~uint64_t(0);
    uint64_t compute_endpoints = 0, storage_endpoints = 0;
    bool ranked = false;
  };
  mutable std::vector<Summary> summaries_;
  std::vector<PointId> scratch_;  ///< recompute's list of nearest points
};

}  // namespace rdmatel
