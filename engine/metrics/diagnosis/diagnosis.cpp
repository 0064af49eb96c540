// SPDX-License-Identifier: GPL-2.0-or-later
#include "engine/metrics/diagnosis/diagnosis.h"

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "rdmatel/alert_rule.h"
#include "rdmatel/format.h"
#include "rdmatel/schema.h"

namespace rdmatel::diagnosis {
namespace {

const SettingSpec kSettings[] = {
    {"diag_min_ios", SettingType::kCount, "", "10", 1, 1e9, "N",
     "The diagnosis compares a host, storage server or pair with its peers only on a metric it has at least "
     "this many I/Os of"},
    {"diag_min_excess", SettingType::kDuration, "us", "50", 0, 1e9, "US",
     "The diagnosis blames a segment only when its mean exceeds the peers' median by at least this much"},
};
const RecordSchema* const kOutputs[] = {&kDiagnosisSchema};
const RecordSchema* const kInputs[] = {&kIoSchema, &kMessageSchema, &kCongestionSchema, &kPathSchema};

// Scopes per kind kept at most: beyond it new ones are left out, with a warning.
constexpr size_t kMaxScopes = 100000;

// A scope as judged at the end: its record under construction and the comparisons behind it.
struct Judged {
  DiagnosisRecord rec;
  const ScopeStats* stats = nullptr;
  Comparison cmp[kSegments];
  bool eligible[kSegments] = {};
  int finding = -1;  ///< the segment that stands out most, -1 for none
  int blamed = -1;   ///< the segment blamed for it: the finding's, or the network when packets were lost
  bool loss_only = false;  ///< a path losing packets, its latency within bounds
  bool lossy = false;      ///< its paths resend clearly more than its peers' (blame_loss)
  bool located = true;     ///< what the capture shows of where its resends' packets were lost
  uint64_t lost_on_hops = 0;  ///< packets its hops lost between points
  bool standing = false;
  PathEvidence path;  ///< what was seen on the scope's paths
  double loss_peer_median = 0;  ///< the peers' median share of retransmitted packets
};

// A path loses clearly more than its peers when its share of retransmitted packets is at least
// twice theirs and this much above it, with at least kLossMinPackets of them.
constexpr double kLossExcess = 0.02;
constexpr uint64_t kLossMinPackets = 20;

double loss_ratio(const PathEvidence& e) { return e.packets ? double(e.retrans_packets) / double(e.packets) : 0; }

std::string percent(double part, double whole) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1f %%", whole > 0 ? 100.0 * part / whole : 0.0);
  return b;
}

std::string upper(const char* metric) {
  std::string s(metric);
  for (char& c : s) c = char(c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c);
  return s;
}

std::string path_text(const PathEvidence& e) {
  std::string out;
  auto add = [&](uint64_t n, const char* what) {
    if (!n) return;
    out += out.empty() ? "" : ", ";
    out += std::to_string(n) + " " + what;
  };
  add(e.retrans_packets, e.retrans_packets == 1 ? "retransmitted packet" : "retransmitted packets");
  add(e.naks, e.naks == 1 ? "NAK" : "NAKs");
  if (e.ce_packets) {
    out += out.empty() ? "" : ", ";
    out += std::to_string(e.ce_packets) + " CE-marked (" + percent(double(e.ce_packets), double(e.ect_packets)) +
           " of ECN-capable packets)";
  }
  add(e.cnps, e.cnps == 1 ? "CNP" : "CNPs");
  return out;
}

// What a scope has: a pair's own entry (its IPs, lower first), a host's or storage server's the
// one summed over its pairs; `none` when it has none.
template <typename T>
const T& of_scope(const DiagnosisRecord& r, const std::map<std::pair<IpAddress, IpAddress>, T>& by_pair,
                  const std::map<IpAddress, T>& by_ip, const T& none) {
  if (r.host && r.storage) {
    auto it = by_pair.find({std::min(*r.host, *r.storage), std::max(*r.host, *r.storage)});
    return it == by_pair.end() ? none : it->second;
  }
  const std::optional<IpAddress>& ip = r.host ? r.host : r.storage;
  if (!ip) return none;
  auto it = by_ip.find(*ip);
  return it == by_ip.end() ? none : it->second;
}

// Entries per unordered IP pair summed per IP (a pair counts once for each of its ends).
template <typename T, typename Add>
std::map<IpAddress, T> summed_per_ip(const std::map<std::pair<IpAddress, IpAddress>, T>& by_pair, Add add) {
  std::map<IpAddress, T> out;
  for (const auto& [key, v] : by_pair) {
    add(out[key.first], v);
    if (key.second != key.first) add(out[key.second], v);
  }
  return out;
}

// Compares every scope of one kind with the others of that kind, segment by segment.
void compare_group(std::vector<Judged>& group, uint64_t min_ios, const PeerRule& rule,
                   const std::optional<double> (&threshold)[kSegments]) {
  for (int g = 0; g < kSegments; ++g) {
    std::vector<double> sorted;
    for (Judged& j : group) {
      j.eligible[g] = j.stats->by_segment[g].n >= min_ios;
      if (j.eligible[g]) sorted.push_back(j.stats->by_segment[g].value());
    }
    std::sort(sorted.begin(), sorted.end());
    for (Judged& j : group) {
      if (!j.eligible[g]) continue;
      const double v = j.stats->by_segment[g].value();
      // Its peers: every eligible scope but itself (any one of equal value leaves the same set).
      const size_t self = size_t(std::lower_bound(sorted.begin(), sorted.end(), v) - sorted.begin());
      j.cmp[g] = compare_to_sorted_peers(v, j.stats->iol1.value(), sorted, self, rule);
      // Without a peer that makes it stand out, a threshold the user set still does.
      if (!j.cmp[g].stands_out && threshold[g] && v > *threshold[g]) {
        j.cmp[g].stands_out = j.cmp[g].by_threshold = true;
        j.cmp[g].threshold = *threshold[g];
        j.cmp[g].excess = v - *threshold[g];
      }
    }
    for (Judged& j : group)
      if (j.cmp[g].stands_out && (j.finding < 0 || j.cmp[g].excess > j.cmp[j.finding].excess)) j.finding = g;
  }
  for (Judged& j : group) j.standing = j.finding >= 0;
}

// Lost packets cost retransmission timeouts wherever they fall: a lost READ REQUEST between the
// compute-side point and the host shows as DPL, a lost data packet as DAL. A finding on a scope
// whose paths lose clearly more packets than its peers' is the network's; a pair's path that
// does is a finding of its own even when its latency stays within bounds (loss costs throughput
// first).
// With two points or more the capture locates losses between them; resends on paths that lost
// nothing there and had no NAK are not the network's doing when the scope's own segment stands out
// (a slow host's late READ responses make its storage server re-issue the READs, a slow path's
// late answers time out): `located` is false for them, and the finding keeps its segment.
void blame_loss(std::vector<Judged>& group, bool pairs) {
  // Sorted once, each scope's peers are the others (leaving out any one of its value leaves the
  // same set): the median of every peer list without building it (100,000 pairs took minutes).
  std::vector<double> sorted;
  for (const Judged& j : group)
    if (j.path.packets) sorted.push_back(loss_ratio(j.path));
  std::sort(sorted.begin(), sorted.end());
  for (Judged& j : group) {
    j.blamed = j.finding;
    if (!j.path.packets) continue;
    if (sorted.size() < 2) continue;  // no peer
    const double r = loss_ratio(j.path);
    const size_t self = size_t(std::lower_bound(sorted.begin(), sorted.end(), r) - sorted.begin());
    j.loss_peer_median = median_without(sorted, self);
    const bool lossy = r >= kLossExcess + j.loss_peer_median && r >= 2 * j.loss_peer_median && j.located;
    j.lossy = lossy;
    if (j.finding >= 0 && lossy) j.blamed = kNetwork;
    if (j.finding < 0 && pairs && lossy && j.path.retrans_packets >= kLossMinPackets) {
      j.loss_only = true;
      j.standing = true;
      j.blamed = kNetwork;
    }
  }
}

// A host's or storage server's resends that a minority of its pairs make (one lossy path among
// its paths) are those pairs' findings: the scope keeps its own segment (a slow storage server one
// of whose paths also loses packets is still slow).
void keep_segment_of_minority_loss(std::vector<Judged>& group, const std::vector<Judged>& pairs, bool by_host) {
  for (Judged& j : group) {
    if (j.finding < 0 || j.blamed != kNetwork || j.finding == kNetwork) continue;
    size_t mine = 0, lossy = 0;
    for (const Judged& p : pairs) {
      if (!(by_host ? *p.rec.host == *j.rec.host : *p.rec.storage == *j.rec.storage) || !p.path.packets) continue;
      ++mine;
      lossy += p.lossy;
    }
    if (mine >= 2 && lossy * 2 <= mine) j.blamed = j.finding;
  }
}

// A host's or storage server's finding that only a minority of its pairs share is the pairs'
// doing (a slow path, or one slow host behind a storage server), not the whole scope's.
void explain_by_pairs(std::vector<Judged>& group, const std::vector<Judged>& pairs, bool by_host) {
  for (Judged& j : group) {
    if (!j.standing) continue;
    const int g = j.finding;
    size_t eligible = 0, out = 0;
    const Judged* worst = nullptr;
    for (const Judged& p : pairs) {
      const bool mine = by_host ? *p.rec.host == *j.rec.host : *p.rec.storage == *j.rec.storage;
      if (!mine || !p.eligible[g]) continue;
      ++eligible;
      if (!p.cmp[g].stands_out) continue;
      ++out;
      if (!worst || p.cmp[g].excess > worst->cmp[g].excess) worst = &p;
    }
    if (eligible >= 2 && worst && out * 2 <= eligible) {
      j.standing = false;
      j.rec.explained_by = diagnosis_scope_text(worst->rec);
    }
  }
}

// Each segment has an owner: a host's finding in the storage segment belongs to a storage server
// it uses that stands out there, a storage server's finding in the host segment to such a host
// (a host that talks to one slow storage server is not slow itself).
void explain_by_owner(std::vector<Judged>& group, const std::vector<Judged>& owners, const std::vector<Judged>& pairs,
                      int owned, bool group_is_hosts) {
  for (Judged& j : group) {
    if (!j.standing || j.finding != owned) continue;
    const Judged* owner = nullptr;
    for (const Judged& o : owners) {
      if (!o.standing || o.finding != owned) continue;
      for (const Judged& p : pairs) {
        const bool linked = group_is_hosts ? (*p.rec.host == *j.rec.host && *p.rec.storage == *o.rec.storage)
                                           : (*p.rec.storage == *j.rec.storage && *p.rec.host == *o.rec.host);
        if (linked && (!owner || o.cmp[owned].excess > owner->cmp[owned].excess)) owner = &o;
      }
    }
    if (owner) {
      j.standing = false;
      j.rec.explained_by = diagnosis_scope_text(owner->rec);
    }
  }
}

// A pair's finding that its storage server or host has as a whole is theirs.
void explain_by_ends(std::vector<Judged>& pairs, const std::vector<Judged>& storages, const std::vector<Judged>& hosts) {
  for (Judged& p : pairs) {
    if (!p.standing) continue;
    for (const auto* group : {&storages, &hosts}) {
      for (const Judged& e : *group) {
        const bool end = group == &storages ? *e.rec.storage == *p.rec.storage : *e.rec.host == *p.rec.host;
        // Not a pair whose hops lost packets enough to be a finding of their own while its end is
        // not blamed on the network: that loss is the pair's.
        const bool own_loss = p.blamed == kNetwork && e.blamed != kNetwork && p.lost_on_hops >= kLossMinPackets;
        if (end && e.standing && e.finding == p.finding && !own_loss) {
          p.standing = false;
          p.rec.explained_by = diagnosis_scope_text(e.rec);
        }
      }
      if (!p.standing) break;
    }
  }
}

}  // namespace

const char* const kNotes[] = {"diag.finding"};  // ref: the finding's rank

const ComponentSpec kSpec = {"diagnosis", 0, kOutputs, kSettings, kNotes, kInputs};

void PathEvidence::max_with(const PathEvidence& o) {
  packets = std::max(packets, o.packets);
  retrans_packets = std::max(retrans_packets, o.retrans_packets);
  naks = std::max(naks, o.naks);
  ect_packets = std::max(ect_packets, o.ect_packets);
  ce_packets = std::max(ce_packets, o.ce_packets);
  cnps = std::max(cnps, o.cnps);
  keep_worst(o);
}

void PathEvidence::keep_worst(const PathEvidence& o) {
  if (o.worst_retrans > worst_retrans) {
    worst_retrans = o.worst_retrans;
    worst_retrans_frame = o.worst_retrans_frame;
  }
}

void PathEvidence::add(const PathEvidence& o) {
  packets += o.packets;
  retrans_packets += o.retrans_packets;
  naks += o.naks;
  ect_packets += o.ect_packets;
  ce_packets += o.ce_packets;
  cnps += o.cnps;
  keep_worst(o);
}

Diagnosis::Diagnosis(Ctx& ctx)
    : min_ios_(ctx.settings.count("diag_min_ios")), note_finding_(note_kind("diag.finding")), max_scopes_(kMaxScopes) {
  rule_.min_excess_ns = double(ctx.settings.duration("diag_min_excess"));
  // Unscoped `--alert dal>V` (rtt, dpl) rules are thresholds of the verdict too.
  for (const alerts::AlertRule& a : alerts::alert_rules(ctx.settings.list("alert"))) {
    if (!a.above || !a.scope_key.empty()) continue;
    const int g = a.metric == alerts::Metric::kDal ? kStorage : a.metric == alerts::Metric::kRtt ? kNetwork
                  : a.metric == alerts::Metric::kDpl ? kHost : -1;
    if (g >= 0 && (!threshold_[g] || a.threshold * 1000 < *threshold_[g])) threshold_[g] = a.threshold * 1000;
  }
}

PathEvidence& Diagnosis::evidence_at(const IpAddress& a, const IpAddress& b, PointId point) {
  const bool ordered = a < b;
  const IpAddress& lo = ordered ? a : b;
  const IpAddress& hi = ordered ? b : a;
  if (last_path_ && std::get<2>(last_path_key_) == point && std::get<0>(last_path_key_) == lo &&
      std::get<1>(last_path_key_) == hi)
    return *last_path_;
  last_path_key_ = {lo, hi, point};
  last_path_ = &paths_[last_path_key_];
  return *last_path_;
}

void Diagnosis::add_hop(std::vector<HopLoss>& hops, const HopLoss& h) {
  for (HopLoss& x : hops)
    if (x.from == h.from && x.to == h.to) {
      x.packets += h.packets;
      x.lost += h.lost;
      x.inferred |= h.inferred;
      return;
    }
  hops.push_back(h);
}

std::string Diagnosis::hop_text(const std::vector<HopLoss>& hops, const Ctx& ctx) {
  const HopLoss* worst = nullptr;
  for (const HopLoss& h : hops)
    if (h.lost && (!worst || h.lost > worst->lost)) worst = &h;
  if (!worst) return "";
  const std::string& a = ctx.points[worst->from].name;
  const std::string& b = ctx.points[worst->to].name;
  // A point whose capture dropped packets (its file's interface statistics) misses copies the
  // network delivered: the hop into it may be the capture's doing.
  const uint64_t dropped = ctx.points[worst->to].capture_dropped;
  return "; most were lost between " + a + " and " + b + ": " + std::to_string(worst->lost) + " of the " +
         std::to_string(worst->packets) + " packets that passed " + a + " towards " + b + " (" +
         percent(double(worst->lost), double(worst->packets)) +
         (worst->inferred ? "; path inferred: some flows had no packet reach a second point)" : ")") +
         (dropped ? " (or the capture does: it dropped " + std::to_string(dropped) + " packets at " + b + ")" : "");
}

void Diagnosis::on_record(const Record& r, Ctx& ctx) {
  if (r.is(kIoSchema)) return on_io(r.as<IoRecord>(), ctx);
  if (r.is(kPathSchema)) {
    const PathRecord& h = r.as<PathRecord>();
    const IpPair key{std::min(h.src, h.dst), std::max(h.src, h.dst)};
    // Every hop of the pair, lossless ones too: "L of the N packets that passed A towards B" counts
    // all of the scope's packets on the hop, not only those of flows that lost one there.
    if (hops_.size() >= 4 * max_scopes_ && !hops_.count(key)) return;
    add_hop(hops_[key], HopLoss{h.from_point, h.to_point, h.packets, h.lost, h.path_inferred});
    return;
  }
  if (paths_.size() >= 4 * max_scopes_) return;
  if (r.is(kMessageSchema)) {
    const MessageRecord& m = r.as<MessageRecord>();
    PathEvidence& e = evidence_at(m.src, m.dst, m.point);
    e.packets += m.packets;
    e.retrans_packets += m.retrans_packets;
    e.naks += m.naks;
    if (m.retrans_packets > e.worst_retrans) {
      e.worst_retrans = m.retrans_packets;
      e.worst_retrans_frame = m.first_frame;
    }
  } else if (r.is(kCongestionSchema)) {
    if (const auto* c = congestion_as<EcnRecord>(r.as<CongestionHead>())) {
      PathEvidence& e = evidence_at(c->src, c->dst, c->point);
      e.ect_packets += c->ect_packets;
      e.ce_packets += c->ce_packets;
      e.cnps += c->cnp_packets;
    } else if (const auto* p = congestion_as<PfcRecord>(r.as<CongestionHead>())) {
      pfc_pauses_ += p->pause_frames;
      pfc_storm_ |= p->storm;
    }
  }
}

void Diagnosis::on_io(const IoRecord& r, Ctx& ctx) {
  if (!(r.is_read() || r.is_write()) || !r.complete) return;
  const IoMetrics m = io_metrics(r);
  auto left_out = [&] {
    ctx.warn("diagnosis_scopes", [&] {
      return "the diagnosis keeps at most " + std::to_string(max_scopes_) +
             " hosts, storage servers and pairs each; I/Os of further ones are left out of it";
    });
  };
  auto slot = [&](auto& map, const auto& key) -> ScopeStats* {
    auto it = map.find(key);
    if (it != map.end()) return &it->second;
    if (map.size() >= max_scopes_) {
      left_out();
      return nullptr;
    }
    return &map[key];
  };
  const IpPair key{r.host, r.storage};
  PairScopes scopes;
  if (const PairScopes* known = scopes_of_pair_.find(key)) {
    scopes = *known;
    for (const ScopeStats* s : {scopes.host, scopes.storage, scopes.pair})
      if (!s) left_out();
  } else {
    scopes = {slot(hosts_, r.host), slot(storages_, r.storage), slot(pairs_, key)};
    if (scopes_of_pair_.size() < 4 * max_scopes_) scopes_of_pair_[key] = scopes;
  }
  for (ScopeStats* s : {scopes.host, scopes.storage, scopes.pair,
                        r.job ? slot(jobs_, std::string(r.job)) : nullptr})
    if (s) s->add(m, r.cmd_frame);
  if (r.job && jobs_.count(r.job)) {
    std::vector<IpAddress>& hosts = job_hosts_[r.job];
    if (hosts.size() < kJobHosts && std::find(hosts.begin(), hosts.end(), r.host) == hosts.end())
      hosts.push_back(r.host);
  }
}

void Diagnosis::finish(Ctx& ctx) {
  auto make = [](DiagnosisScope kind, const ScopeStats& s) {
    Judged j;
    j.rec.scope = kind;
    j.stats = &s;
    j.rec.ios = s.ios;
    j.rec.split_ios = s.split_ios;
    if (s.split_ios) {
      j.rec.network_share = s.rtt_sum / s.iol1_sum;
      j.rec.host_share = s.dpl_sum / s.iol1_sum;
      j.rec.storage_share = (s.iol1_sum - s.rtt_sum - s.dpl_sum) / s.iol1_sum;
    }
    return j;
  };
  std::vector<Judged> hosts, storages, pairs;
  for (const auto& [ip, s] : hosts_) {
    hosts.push_back(make(DiagnosisScope::kHost, s));
    hosts.back().rec.host = ip;
  }
  for (const auto& [ip, s] : storages_) {
    storages.push_back(make(DiagnosisScope::kStorage, s));
    storages.back().rec.storage = ip;
  }
  for (const auto& [key, s] : pairs_) {
    pairs.push_back(make(DiagnosisScope::kPair, s));
    pairs.back().rec.host = key.first;
    pairs.back().rec.storage = key.second;
  }
  // Jobs are compared with jobs: which segment costs a job more than the others. The ranking
  // names what to fix (hosts, storage servers, paths), so a job's record points at them.
  std::vector<Judged> jobs;
  for (const auto& [name, s] : jobs_) {
    jobs.push_back(make(DiagnosisScope::kJob, s));
    jobs.back().rec.job = name;
  }
  // The path evidence of each IP pair: the point that saw most of each count.
  std::map<IpPair, PathEvidence> path_of;
  std::vector<std::pair<PathKey, const PathEvidence*>> paths;
  paths_.for_each([&](const PathKey& key, const PathEvidence& e) { paths.emplace_back(key, &e); });
  std::sort(paths.begin(), paths.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  for (const auto& [key, e] : paths) path_of[{std::get<0>(key), std::get<1>(key)}].max_with(*e);
  // A host's or storage server's evidence and lossy hops: those of every pair it is an end of
  // (summed once per IP, not searched per scope); a pair's: its own.
  const std::map<IpAddress, PathEvidence> path_of_ip =
      summed_per_ip(path_of, [](PathEvidence& sum, const PathEvidence& e) { sum.add(e); });
  const std::map<IpAddress, std::vector<HopLoss>> hops_of_ip =
      summed_per_ip(hops_, [](std::vector<HopLoss>& sum, const std::vector<HopLoss>& hops) {
        for (const HopLoss& h : hops) add_hop(sum, h);
      });
  const PathEvidence no_evidence;
  const std::vector<HopLoss> no_hops;
  auto evidence_for = [&](const DiagnosisRecord& r) { return of_scope(r, path_of, path_of_ip, no_evidence); };
  auto hops_of = [&](const DiagnosisRecord& r) -> const std::vector<HopLoss>& {
    return of_scope(r, hops_, hops_of_ip, no_hops);
  };
  // Where the capture locates losses (two points or more), a scope's resends count as the network's
  // only where its hops lost packets or its paths carried NAKs.
  const bool locates = ctx.points.size() >= 2;
  for (auto* group : {&hosts, &storages, &pairs}) {
    for (Judged& j : *group) {
      j.path = evidence_for(j.rec);
      if (locates) {
        const std::vector<HopLoss>& hops = hops_of(j.rec);
        for (const HopLoss& h : hops) j.lost_on_hops += h.lost;
        j.located = j.path.naks > 0 || j.lost_on_hops > 0;
      }
    }
    compare_group(*group, min_ios_, rule_, threshold_);
    blame_loss(*group, group == &pairs);
  }
  keep_segment_of_minority_loss(storages, pairs, false);
  keep_segment_of_minority_loss(hosts, pairs, true);
  compare_group(jobs, min_ios_, rule_, threshold_);
  for (Judged& j : jobs) {
    j.blamed = j.finding;
    j.standing = false;
  }
  explain_by_pairs(storages, pairs, false);
  explain_by_pairs(hosts, pairs, true);
  explain_by_owner(hosts, storages, pairs, kStorage, true);
  explain_by_owner(storages, hosts, pairs, kHost, false);
  explain_by_ends(pairs, storages, hosts);

  std::vector<Judged*> ranked;
  for (auto* group : {&storages, &hosts, &pairs})
    for (Judged& j : *group)
      if (j.standing) ranked.push_back(&j);
  // By the time the finding costs its I/Os; paths that only lose packets come after those.
  auto cost = [](const Judged* j) { return j->finding >= 0 ? j->cmp[j->finding].excess : 0.0; };
  std::stable_sort(ranked.begin(), ranked.end(), [&](const Judged* a, const Judged* b) { return cost(a) > cost(b); });
  for (size_t i = 0; i < ranked.size(); ++i) ranked[i]->rec.rank = uint32_t(i + 1);

  // A job whose segment stands out names the standing finding with that segment, if any; else
  // the finding its hosts with that segment are explained by (a lossy path behind the job's host
  // shows as its DPL: the path, blamed on the network, not the host).
  for (Judged& j : jobs) {
    if (j.finding < 0) continue;
    for (const Judged* f : ranked)
      if (f->blamed == j.finding) {
        j.rec.explained_by = diagnosis_scope_text(f->rec);
        break;
      }
    if (!j.rec.explained_by.empty()) continue;
    const auto job_hosts = job_hosts_.find(j.rec.job);
    if (job_hosts == job_hosts_.end()) continue;
    for (const Judged& h : hosts) {
      if (h.finding != j.finding || h.rec.explained_by.empty() ||
          std::find(job_hosts->second.begin(), job_hosts->second.end(), *h.rec.host) == job_hosts->second.end())
        continue;
      for (const Judged* f : ranked)
        if (diagnosis_scope_text(f->rec) == h.rec.explained_by) {
          j.rec.explained_by = h.rec.explained_by;
          j.blamed = f->blamed;
          break;
        }
      if (!j.rec.explained_by.empty()) break;
    }
  }
  for (auto* group : {&hosts, &storages, &pairs, &jobs}) {
    for (Judged& j : *group) {
      DiagnosisRecord& r = j.rec;
      // The segment that decided, or for a scope where nothing stands out the one closest to
      // it (the highest value against its peer median).
      int g = j.loss_only ? kSegments : j.finding;
      auto ratio = [&](int s) { return j.stats->by_segment[s].value() / std::max(1.0, j.cmp[s].peer_median); };
      if (g < 0)
        for (int s = 0; s < kSegments; ++s)
          if (j.eligible[s] && j.cmp[s].peers && (g < 0 || ratio(s) > ratio(g))) g = s;
      if (j.loss_only) r.worst_frame = j.path.worst_retrans_frame;
      if (g >= 0 && g < kSegments) {
        r.metric = segment_metric(Segment(g));
        r.worst_frame = j.stats->by_segment[g].max_frame;
        r.value_ns = DurationNs(j.stats->by_segment[g].value() + 0.5);
        if (j.cmp[g].peers) r.peer_median_ns = DurationNs(j.cmp[g].peer_median + 0.5);
      }
      if (j.blamed >= 0) r.segment = segment_name(Segment(j.blamed));
      std::string& ev = r.evidence;
      if (j.loss_only) {
        ev = percent(double(j.path.retrans_packets), double(j.path.packets)) + " of the packets on this path were "
             "retransmissions (" + std::to_string(j.path.retrans_packets) + " of " + std::to_string(j.path.packets) +
             ") against a peer median of " + percent(j.loss_peer_median, 1.0) + ": the path loses packets";
        if (j.path.naks) ev += "; " + std::to_string(j.path.naks) + (j.path.naks == 1 ? " NAK" : " NAKs");
      } else if (g < 0) {
        bool any = false;
        for (bool e : j.eligible) any |= e;
        ev = any ? "no peer of its kind in the capture to compare with"
                 : "too few I/Os to compare (fewer than " + std::to_string(min_ios_) + " with each metric)";
      } else {
        const Comparison& c = j.cmp[g];
        if (c.by_threshold)
          ev = upper(r.metric) + " averages " + format_us(j.stats->by_segment[g].value()) +
               " µs, above the alert threshold of " + format_us(c.threshold) + " µs (" +
               std::to_string(j.stats->by_segment[g].n) + " I/Os; " +
               (c.peers ? "peer median " + format_us(c.peer_median) + " µs)" : "no peer to compare with)");
        else
          ev = upper(r.metric) + " averages " + format_us(j.stats->by_segment[g].value()) +
               " µs against a peer median of " + format_us(c.peer_median) + " µs (" + std::to_string(c.peers) +
               (c.peers == 1 ? " peer" : " peers") + ", " + std::to_string(j.stats->by_segment[g].n) + " I/Os)";
        if (j.finding < 0) ev = "nothing stands out; closest: " + ev;
      }
      // (A job has no paths of its own: its explained_by names the finding.)
      if (j.finding >= 0 && j.blamed == kNetwork && j.finding != kNetwork && r.scope != DiagnosisScope::kJob) {
        ev += "; on its paths " + percent(double(j.path.retrans_packets), double(j.path.packets)) +
              " of packets were retransmissions against a peer median of " +
              percent(j.loss_peer_median, 1.0) + ": lost packets, not the " + segment_name(Segment(j.finding)) +
              ", cost the time";
      } else if (!j.loss_only && (g == kNetwork || j.blamed == kNetwork)) {
        const std::string path = path_text(j.path);
        if (!path.empty()) ev += "; on its paths: " + path;
      }
      if (j.blamed == kNetwork) {
        ev += hop_text(hops_of(r), ctx);
        if (pfc_pauses_)
          ev += "; PFC pauses in the capture: " + std::to_string(pfc_pauses_) + (pfc_storm_ ? " (a storm)" : "");
      }
      ctx.emit(kDiagnosisSchema, &r);
      // The plugin shows a finding on the frame to look at.
      if (r.rank && r.worst_frame) ctx.note(r.worst_frame, note_finding_, r.rank);
    }
  }
}

}  // namespace rdmatel::diagnosis
