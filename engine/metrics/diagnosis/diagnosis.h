// SPDX-License-Identifier: GPL-2.0-or-later
// diagnosis: a record stage over the I/O records (and, as evidence, the message and congestion
// records) that says, per host, storage and pair, where the time of the I/Os goes and which
// segment (storage, network, host) is to blame when one stands out against the scope's peers
// in the same capture. The method is documented in docs/metrics.md ("Diagnosis").
#pragma once

#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "engine/metrics/diagnosis/peer_comparison.h"
#include "engine/metrics/diagnosis/scope_stats.h"
#include "engine/src/core/component.h"
#include "engine/src/util/flat_map.h"
#include "engine/src/util/word_hash.h"

namespace rdmatel::diagnosis {

extern const ComponentSpec kSpec;

class Diagnosis final : public Component {
 public:
  explicit Diagnosis(Ctx& ctx);
  void on_packet(const Packet&, Ctx&) override {}
  void on_advance(PointId, Ctx&) override {}
  void on_record(const Record& r, Ctx& ctx) override;
  void finish(Ctx& ctx) override;

 private:
  void on_io(const IoRecord& r, Ctx& ctx);
  PathEvidence& evidence_at(const IpAddress& a, const IpAddress& b, PointId point);
  /// Packets seen and lost on one hop (point A -> B) of the flows of a scope.
  struct HopLoss {
    PointId from = kNoPoint, to = kNoPoint;
    uint64_t packets = 0, lost = 0;
    bool inferred = false;  ///< on a path inferred for flows that never reached B (paths)
  };
  static void add_hop(std::vector<HopLoss>& hops, const HopLoss& h);
  /// Where a network finding's packets were lost: the hop that lost most of them, in words.
  static std::string hop_text(const std::vector<HopLoss>& hops, const Ctx& ctx);

  uint64_t min_ios_;
  NoteKind note_finding_;
  PeerRule rule_;
  std::optional<double> threshold_[kSegments];  ///< ns, from unscoped --alert rules
  size_t max_scopes_;
  std::map<IpAddress, ScopeStats> hosts_, storages_;
  std::map<IpPair, ScopeStats> pairs_;
  std::map<std::string, ScopeStats> jobs_;  ///< by the hosts' AI job (--gpu-map)
  /// Each job's hosts (at most kJobHosts): a job whose segment no standing finding owns is
  /// explained where its hosts are.
  std::map<std::string, std::vector<IpAddress>> job_hosts_;
  static constexpr size_t kJobHosts = 64;
  /// The host's, storage server's and pair's statistics of each (host, storage) seen, so that an
  /// I/O record finds all three with one lookup (map nodes stay put). Null: left out, its kind
  /// was full when the pair came (and stays full: scopes are never removed).
  struct PairScopes {
    ScopeStats *host, *storage, *pair;
  };
  FlatMap<IpPair, PairScopes, IpPairHash> scopes_of_pair_;
  /// Per unordered IP pair (lower IP first) and point; a hash map because every message record
  /// updates it (finish reads it in key order).
  using PathKey = std::tuple<IpAddress, IpAddress, PointId>;
  struct PathKeyHash {
    uint64_t operator()(const PathKey& k) const {
      return fold_ip(fold_ip(std::get<2>(k), std::get<0>(k)), std::get<1>(k));
    }
  };
  FlatMap<PathKey, PathEvidence, PathKeyHash> paths_;
  /// The entry the last record went to (a flow's messages often end one after another): only
  /// evidence_at() inserts, so the pointer stays valid until it replaces it.
  PathKey last_path_key_;
  PathEvidence* last_path_ = nullptr;
  std::map<IpPair, std::vector<HopLoss>> hops_;  ///< per unordered IP pair (lower IP first)
  uint64_t pfc_pauses_ = 0;
  bool pfc_storm_ = false;
};

}  // namespace rdmatel::diagnosis
