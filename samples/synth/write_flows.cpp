// SPDX-License-Identifier: GPL-2.0-or-later
#include "write_flows.h"

#include <algorithm>

namespace synth {

void WriteFlows::setup(Sim& sim, const std::vector<int>& side0, const std::vector<int>& side1) {
  struct Plan {
    int64_t t;
    int qps;
    MsgSpec m;
  };
  std::vector<Plan> plan;
  const int n0 = static_cast<int>(side0.size()), n1 = static_cast<int>(side1.size());
  for (int f = 0; f < cfg_.flows; ++f) {
    // Flows 0 and 2 share an IP pair (two QPs between the same NICs); odd flows run from
    // the far side, so losses "after one point" hit both directions.
    const int pair = (f == 2) ? 0 : f;
    const int a = side0[static_cast<size_t>(pair % n0)];
    const int b = side1[static_cast<size_t>((pair + pair / n0) % n1)];
    const bool rev = (f % 2) == 1;
    const int req_ep = rev ? b : a, rsp_ep = rev ? a : b;
    const bool wrap = cfg_.psn_wrap || (cfg_.wrap_some && (f % 2 == 0));
    auto rand_psn = [&]() {
      return wrap ? static_cast<uint32_t>(0xFFFFFF - rng_.range(0, 12))
                  : static_cast<uint32_t>(rng_.range(0, 0xFFFFFF));
    };
    const uint32_t qa = static_cast<uint32_t>(rng_.range(0x100, 0xFFFFFE));
    uint32_t qb = static_cast<uint32_t>(rng_.range(0x100, 0xFFFFFE));
    while (qb == qa) qb = static_cast<uint32_t>(rng_.range(0x100, 0xFFFFFE));
    const auto pa = static_cast<uint16_t>(rng_.range(49152, 65535));
    const auto pb = rng_.chance(0.5) ? pa : static_cast<uint16_t>(rng_.range(49152, 65535));
    const uint32_t psn_a = rand_psn(), psn_b = rand_psn();
    const int qps = sim.connect(req_ep, rsp_ep, qa, qb, psn_a, psn_b, pa, pb, this);
    const uint32_t rkey = static_cast<uint32_t>(rng_.next());
    const uint64_t base_va = 0x7f0000000000ULL + (static_cast<uint64_t>(rng_.range(0, 0xFFFF)) << 24);
    uint64_t off = 0;
    int64_t t = cfg_.t_start + rng_.range(0, 200000);
    const double gap = static_cast<double>(cfg_.duration_ns) / std::max(1, cfg_.messages);
    for (int k = 0; k < cfg_.messages; ++k) {
      // Mostly short messages, a tail of long ones (NCCL chunks), odd lengths need pad.
      const int x = static_cast<int>(rng_.range(0, 99));
      int npk;
      if (x < 55) npk = static_cast<int>(rng_.range(1, 4));
      else if (x < 85) npk = static_cast<int>(rng_.range(5, 32));
      else if (x < 97) npk = static_cast<int>(rng_.range(33, 128));
      else npk = static_cast<int>(rng_.range(129, 256));
      npk = std::min(npk, cfg_.max_pkts);
      const uint32_t len = static_cast<uint32_t>(npk - 1) * cfg_.pmtu +
                           static_cast<uint32_t>(rng_.range(1, cfg_.pmtu));
      MsgSpec m;
      const int kind = static_cast<int>(rng_.range(0, 99));
      m.kind = kind < 85 ? MsgSpec::kWrite : MsgSpec::kSend;
      m.imm = (kind >= 65 && kind < 85) || kind >= 95;
      m.imm_data = static_cast<uint32_t>(k);
      m.len = m.kind == MsgSpec::kSend ? std::min<uint32_t>(len, 8 * cfg_.pmtu) : len;
      m.va = base_va + off;
      m.rkey = rkey;
      m.seed = static_cast<uint32_t>(rng_.next());
      m.solicited = m.imm;
      off += (m.len + 4095) & ~4095ULL;
      plan.push_back(Plan{t, qps, m});
      t += static_cast<int64_t>(rng_.exp_mean(gap));
    }
  }
  if (cfg_.targeted_losses) {
    // Designed losses: between the points (seen at one, not the other), before the first
    // point (seen at none at first), after the last point (seen at both, NAK follows).
    const int last = cfg_.segments - 1, mid = std::min(1, last);
    const int segs[] = {mid, mid, last, 0, mid, last, mid};
    int s = 0;
    for (size_t i = plan.size() / 8; i < plan.size() && s < 7; i += plan.size() / 9 + 1) {
      MsgSpec& m = plan[i].m;
      const uint32_t n = sim.npkts(m.len);
      m.forced_pkt = static_cast<int>(n > 2 ? rng_.range(1, n - 1) : 0);
      m.forced_seg = segs[s++];
    }
  }
  std::stable_sort(plan.begin(), plan.end(), [](const Plan& x, const Plan& y) { return x.t < y.t; });
  for (const Plan& p : plan) {
    const int qps = p.qps;
    const MsgSpec m = p.m;
    sim.at(p.t, [&sim, qps, m]() { sim.post(qps, m); });
  }
}

}  // namespace synth
