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
      rng_var_(seed ^ 0x5A12u) {
  obs.resize(static_cast<size_t>(cfg_.points));
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

int64_t Fabric::transmit(Emission e, int64_t now, int forced_seg, bool no_loss, uint32_t wire_len) {
  Endpoint& src = endpoints[e.src_ep];
  const Endpoint& dst = endpoints[e.dst_ep];
  e.ip_id = src.ip_id++;
  const int64_t ser = ser_ns(wire_len);
  int64_t t = std::max(now, src.nic_free);
  src.nic_free = t + ser;
  const auto idx = static_cast<uint32_t>(emissions.size());
  emissions.push_back(e);

  // Which segment (if any) loses this copy: 0 = before the first point, k = after the k-th.
  int lost = -1;
  for (int s = 0; s < segments(); ++s) {
    if (s == forced_seg || (!no_loss && rng_loss_.chance(cfg_.loss))) {
      lost = s;
      break;
    }
  }

  const bool fwd = src.side == 0;
  const int host_ep = fwd ? e.src_ep : e.dst_ep;
  const int stor_ep = fwd ? e.dst_ep : e.src_ep;
  const PairDelay pd = pair_delay(host_ep, stor_ep);
  // Physical positions 0 = compute leaf, 1 = spine, 2 = storage leaf.
  const int order[3] = {fwd ? 0 : 2, 1, fwd ? 2 : 0};
  const int64_t delay[3] = {src.access_ns, fwd ? pd.hop1 : pd.hop2, fwd ? pd.hop2 : pd.hop1};
  const int64_t var[3] = {100, 300, 300};
  auto& last = last_at_.try_emplace(std::make_pair(static_cast<int>(e.src_ep), static_cast<int>(e.dst_ep)),
                                    std::array<int64_t, 4>{0, 0, 0, 0}).first->second;
  int seen = 0;
  for (int i = 0; i < 3; ++i) {
    const int pos = order[i];
    int point = -1;
    if (cfg_.points == 1) point = pos == 0 ? 0 : -1;
    else if (cfg_.points == 2) point = pos == 0 ? 0 : (pos == 2 ? 1 : -1);
    else point = pos;
    if (point >= 0 && lost == seen) return -1;  // lost on the segment before this point
    t += delay[i] + rng_var_.range(0, var[i]) + ser;
    // Links are FIFO: a copy never overtakes an earlier one of the same endpoint pair.
    t = std::max(t, last[pos] + 1);
    last[pos] = t;
    if (point >= 0) {
      const int64_t stamp = t + (cfg_.jitter_ns ? rng_jitter_.range(-cfg_.jitter_ns, cfg_.jitter_ns) : 0);
      obs[point].push_back(Obs{t, stamp, idx});
      ++seen;
    }
  }
  if (lost == seen) return -1;  // lost after the last point
  t += dst.access_ns + rng_var_.range(0, 100) + ser;
  t = std::max(t, last[3] + 1);
  last[3] = t;
  return t;
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
    // Merge by stamp while keeping each point's own order (stamps may go backwards).
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
