// SPDX-License-Identifier: GPL-2.0-or-later
#include "fabric.h"

#include <algorithm>
#include <queue>

namespace synth {

Fabric::Fabric(const FabricConfig& cfg, uint64_t seed)
    : cfg_(cfg),
      rng_delay_(seed ^ 0xD1A7u),
      rng_loss_(seed ^ 0x1055u),
      rng_jitter_(seed ^ 0x717Eu),
      rng_var_(seed ^ 0x5A12u),
      rng_drop_(seed ^ 0xD209u),
      rng_mark_(seed ^ 0xCE11u) {
  obs.resize(static_cast<size_t>(cfg_.points));
  cfg_.clock_offset_ns.resize(static_cast<size_t>(cfg_.points), 0);
  // Which switch positions are observed, in point-id order (= side-0 -> side-1 order).
  static const std::vector<int> kObserved[6] = {
      {},
      {kLeafAHost},
      {kLeafAHost, kLeafBHost},
      {kLeafAHost, kSpine, kLeafBHost},
      {kLeafAHost, kLeafAUp, kSpine, kLeafBHost},
      {kLeafAHost, kLeafAUp, kSpine, kLeafBUp, kLeafBHost}};
  point_pos_ = kObserved[cfg_.points];
  for (int& p : pos_point_) p = -1;
  for (size_t i = 0; i < point_pos_.size(); ++i) pos_point_[point_pos_[i]] = static_cast<int>(i);

  // Paths. With 1-3 points a leaf is one position (its hop delays cover the switch), exactly
  // as before the uplink ports existed, so those captures keep their bytes. With 4-5 points
  // each leaf has its host port and its uplink port, a switch latency apart (both modelled
  // even when only leaf A's uplink is observed, so 4 and 5 points share the timing model).
  const bool ports = cfg_.points >= 4;
  std::vector<Stage>& fwd = path_[0];
  fwd.push_back({kLeafAHost, kAccess, 0, 100, true});
  if (ports) fwd.push_back({kLeafAUp, kSwitch, cfg_.switch_min, cfg_.switch_max, false});
  fwd.push_back({kSpine, kHop1, 0, 300, true});
  if (ports) {
    fwd.push_back({kLeafBUp, kHop2, 0, 300, true});
    fwd.push_back({kLeafBHost, kSwitch, cfg_.switch_min, cfg_.switch_max, false});
  } else {
    fwd.push_back({kLeafBHost, kHop2, 0, 300, true});
  }
  std::vector<Stage>& rev = path_[1];
  rev.push_back({kLeafBHost, kAccess, 0, 100, true});
  if (ports) rev.push_back({kLeafBUp, kSwitch, cfg_.switch_min, cfg_.switch_max, false});
  rev.push_back({kSpine, kHop2, 0, 300, true});
  if (ports) {
    rev.push_back({kLeafAUp, kHop1, 0, 300, true});
    rev.push_back({kLeafAHost, kSwitch, cfg_.switch_min, cfg_.switch_max, false});
  } else {
    rev.push_back({kLeafAHost, kHop1, 0, 300, true});
  }
  // Lossy segments: segment k lies after the k-th point of the path; the one between two
  // ports of one leaf is inside the switch and never loses anything.
  for (int d = 0; d < 2; ++d) {
    std::vector<int> seq;  // positions of the points in passage order
    for (const Stage& st : path_[d])
      if (pos_point_[st.pos] >= 0) seq.push_back(st.pos);
    auto leaf = [](int pos) { return pos <= kLeafAUp ? 0 : (pos >= kLeafBUp ? 1 : -1); };
    for (size_t k = 0; k <= seq.size(); ++k) {
      const bool inside = k > 0 && k < seq.size() && leaf(seq[k - 1]) >= 0 && leaf(seq[k - 1]) == leaf(seq[k]);
      if (!inside) lossy_[d].push_back(static_cast<int>(k));
    }
  }
}

uint8_t Fabric::ttl_at(size_t point, const Emission& e) const {
  if (!cfg_.routed) return 64;
  // Switches the packet has left when the point records it. A port mirror records a packet
  // entering the switch there before the switch decrements the TTL and one leaving it
  // there after; the spine point records what the spine receives. Side 0 -> side 1:
  //   leaf A host port 64, leaf A uplink 63, spine 63, leaf B uplink 62, leaf B host port 61
  // and the mirror image the other way.
  static const uint8_t kLeft[kNumPos] = {0, 1, 1, 2, 3};
  const int pos = point_pos_[point];
  const bool fwd = endpoints[e.src_ep].side == 0;
  return static_cast<uint8_t>(64 - kLeft[fwd ? pos : kNumPos - 1 - pos]);
}

int Fabric::add_endpoint(int side, const uint8_t ip[16], bool v6) {
  Endpoint e;
  e.side = side;
  std::copy(ip, ip + 16, e.wire.ip);
  const int id = static_cast<int>(endpoints.size());
  // Locally administered MAC derived from the endpoint number.
  const uint8_t mac[6] = {0x02, 0x00, 0x5e, static_cast<uint8_t>(side),
                          static_cast<uint8_t>(id >> 8), static_cast<uint8_t>(id)};
  std::copy(mac, mac + 6, e.wire.mac);
  e.access_ns = side == 0 ? rng_delay_.range(cfg_.host_access_min, cfg_.host_access_max)
                          : rng_delay_.range(cfg_.stor_access_min, cfg_.stor_access_max);
  e.ip_id = static_cast<uint16_t>(rng_delay_.next());
  e.cm_port = static_cast<uint16_t>(rng_delay_.range(49152, 65535));
  e.ip_str = ip_to_string(ip, v6);
  endpoints.push_back(e);
  return id;
}

Fabric::PairDelay& Fabric::pair_delay(int a, int b) {
  auto key = std::make_pair(a, b);
  auto it = pair_delays_.find(key);
  if (it == pair_delays_.end()) {
    PairDelay d{rng_delay_.range(cfg_.hop_min, cfg_.hop_max), rng_delay_.range(cfg_.hop_min, cfg_.hop_max)};
    it = pair_delays_.emplace(key, d).first;
  }
  return it->second;
}

void Fabric::set_path_fault(int host_ep, int stor_ep, int64_t extra_ns, double loss) {
  // Pairs are keyed by their side-0 end first (--cross puts hosts behind either leaf).
  if (endpoints[static_cast<size_t>(host_ep)].side != 0) std::swap(host_ep, stor_ep);
  PairDelay& d = pair_delay(host_ep, stor_ep);
  d.hop1 += extra_ns;
  d.loss = loss;
}

int64_t Fabric::transmit(Emission e, int64_t now, int forced_seg, bool no_loss, uint32_t wire_len) {
  Endpoint& src = endpoints[e.src_ep];
  const Endpoint& dst = endpoints[e.dst_ep];
  e.ip_id = src.ip_id++;
  const int64_t ser = ser_ns(wire_len);
  int64_t t = std::max(now, src.nic_free);
  src.nic_free = t + ser;
  const auto idx = static_cast<uint32_t>(emissions.size());
  emissions.push_back(e);

  const int dir = src.side == 0 ? 0 : 1;
  const int host_ep = dir == 0 ? e.src_ep : e.dst_ep;  // the side-0 end of the pair
  const int stor_ep = dir == 0 ? e.dst_ep : e.src_ep;
  const PairDelay pd = pair_delay(host_ep, stor_ep);
  // Which segment (if any) loses this copy, as "points passed before it" on this path.
  const std::vector<int>& lossy = lossy_[dir];
  int lost = -1;
  for (size_t k = 0; k < lossy.size(); ++k) {
    if (static_cast<int>(k) == forced_seg || (!no_loss && rng_loss_.chance(cfg_.loss)) ||
        (!no_loss && pd.loss > 0 && rng_loss_.chance(pd.loss))) {
      lost = lossy[k];
      break;
    }
  }
  auto& last = last_at_.try_emplace(std::make_pair(static_cast<int>(e.src_ep), static_cast<int>(e.dst_ep)),
                                    std::array<int64_t, kNumPos + 1>{}).first->second;
  int seen = 0;
  uint32_t passed = 0;  // points this copy passed (bit per point id), for --drop-between
  bool marked = false;  // CE from the point where --ecn-mark marked it on
  for (const Stage& st : path_[dir]) {
    const int point = pos_point_[st.pos];
    if (point >= 0 && lost == seen) return -1;  // lost on the segment before this point
    if (point >= 0)
      for (const FabricConfig::Drop& dr : cfg_.drops)
        if (dr.to == point && (passed >> dr.from & 1u) && rng_drop_.chance(dr.rate)) return -1;
    if (point >= 0 && !marked)
      for (const FabricConfig::Drop& mk : cfg_.marks)
        if (mk.to == point && (passed >> mk.from & 1u) && rng_mark_.chance(mk.rate)) {
          marked = true;
          break;
        }
    const int64_t d = st.delay == kAccess ? src.access_ns
                      : st.delay == kHop1 ? pd.hop1
                      : st.delay == kHop2 ? pd.hop2 : 0;
    t += d + rng_var_.range(st.var_lo, st.var_hi) + (st.ser ? ser : 0);
    // Links (and a switch between its two ports) are FIFO: a copy never overtakes an
    // earlier one of the same endpoint pair.
    t = std::max(t, last[st.pos] + 1);
    last[st.pos] = t;
    if (point >= 0) {
      const int64_t stamp = t + (cfg_.jitter_ns ? rng_jitter_.range(-cfg_.jitter_ns, cfg_.jitter_ns) : 0) +
                            cfg_.clock_offset_ns[static_cast<size_t>(point)];
      obs[point].push_back(Obs{t, stamp, idx, static_cast<uint8_t>(marked)});
      ++seen;
      passed |= 1u << point;
    }
  }
  if (lost == seen) return -1;  // lost after the last point
  t += dst.access_ns + rng_var_.range(0, 100) + ser;
  t = std::max(t, last[kNumPos] + 1);
  last[kNumPos] = t;
  if (marked) emissions[idx].ce_arrived = 1;
  return t;
}

void Fabric::add_pfc(int point, int64_t t, uint8_t enabled, const uint16_t (&quanta)[8]) {
  PfcFrame f;
  f.point = point;
  f.enabled = enabled;
  std::copy(quanta, quanta + 8, f.quanta);
  Emission e;
  e.opcode = op::PFC_FRAME;
  e.y = static_cast<uint32_t>(pfc_frames.size());
  pfc_frames.push_back(f);
  const auto idx = static_cast<uint32_t>(emissions.size());
  emissions.push_back(e);
  obs[static_cast<size_t>(point)].push_back(Obs{t, t + cfg_.clock_offset_ns[static_cast<size_t>(point)], idx});
}

void Fabric::sort_points() {
  for (auto& v : obs)
    std::stable_sort(v.begin(), v.end(), [](const Obs& a, const Obs& b) { return a.t < b.t; });
}

void Fabric::cut_before(int64_t t0) {
  for (auto& v : obs)
    v.erase(std::remove_if(v.begin(), v.end(), [t0](const Obs& o) { return o.t < t0; }), v.end());
}

std::vector<std::pair<uint8_t, uint32_t>> Fabric::file_order(bool blocks, uint64_t seed) const {
  std::vector<std::pair<uint8_t, uint32_t>> out;
  size_t total = 0;
  for (const auto& v : obs) total += v.size();
  out.reserve(total);
  const size_t np = obs.size();
  std::vector<uint32_t> head(np, 0);
  if (blocks) {
    // dumpcap writes whatever each capture buffer hands it: runs of packets per interface.
    Rng r(seed ^ 0xB10Cu);
    size_t p = 0;
    while (out.size() < total) {
      if (head[p] < obs[p].size()) {
        const auto n = static_cast<uint32_t>(r.range(20, 600));
        for (uint32_t k = 0; k < n && head[p] < obs[p].size(); ++k)
          out.emplace_back(static_cast<uint8_t>(p), head[p]++);
      }
      p = (p + 1) % np;
    }
  } else {
    // Merge by stamp (clock offsets included, as mergecap would) while keeping each
    // point's own passage order (stamps may go backwards).
    using Item = std::pair<int64_t, size_t>;  // (stamp of head, point)
    std::priority_queue<Item, std::vector<Item>, std::greater<Item>> pq;
    for (size_t p = 0; p < np; ++p)
      if (!obs[p].empty()) pq.emplace(obs[p][0].stamp, p);
    while (!pq.empty()) {
      const size_t p = pq.top().second;
      pq.pop();
      out.emplace_back(static_cast<uint8_t>(p), head[p]++);
      if (head[p] < obs[p].size()) pq.emplace(obs[p][head[p]].stamp, p);
    }
  }
  return out;
}

}  // namespace synth
