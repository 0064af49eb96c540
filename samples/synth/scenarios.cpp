// SPDX-License-Identifier: GPL-2.0-or-later
#include "scenarios.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>

#include "fabric.h"
#include "nvme_model.h"
#include "pcapng_writer.h"
#include "rdma_qp.h"
#include "truth_writer.h"
#include "write_flows.h"

namespace synth {
namespace {

// 2026-11-29 14:00:00 UTC.
constexpr int64_t kEpochSec = 1795960800;

struct Preset {
  const char* name;
  const char* summary;
};
const Preset kPresets[] = {
    {"nvme-2point", "NVMe-oF/RoCEv2 seen at compute (leafA-gpu) and storage (leafB-stor) leaf ports; CM, Connect, bring-up, ~300 I/Os, losses, incomplete I/Os"},
    {"nvme-1point", "the nvme-2point traffic seen at the compute leaf only"},
    {"nvme-3point", "the nvme-2point traffic seen at compute, spine (spine1) and storage"},
    {"nvme-midstream", "capture starts mid-stream: no CM, no Connect; IPv6, two VLAN tags, time order"},
    {"nvme-large", "benchmark: 4 hosts x 4 storages x 4 queues, millions of packets, snaplen 256"},
    {"write-flows", "NCCL-like GPU<->GPU RDMA WRITE flows, NAKs, go-back-N, PSN wrap, pad bytes, SENDs"},
    {"mixed", "NVMe-oF I/Os and GPU write flows in one capture"},
};

void nvme_base(Config& c) {
  c.nvme = true;
  c.ios = 300;
  c.hosts = 2;
  c.storages = 2;
  c.queues_min = 2;
  c.queues_max = 3;
  c.incomplete = 0.007;
  c.connect = true;
  c.targeted_losses = true;
  c.errors = true;
  c.points = 2;
  c.loss = 0.0005;
  c.vlan = 1;
  c.order_blocks = true;
  c.jitter_ns = 150;
  c.duration_s = 0.02;
}

}  // namespace

std::vector<std::string> preset_names() {
  std::vector<std::string> v;
  for (const auto& p : kPresets) v.push_back(p.name);
  return v;
}

std::string preset_summary(const std::string& name) {
  for (const auto& p : kPresets)
    if (name == p.name) return p.summary;
  return "";
}

bool apply_preset(const std::string& name, Config& c) {
  c.scenario = name;
  if (name == "nvme-2point") {
    nvme_base(c);
  } else if (name == "nvme-1point") {
    nvme_base(c);
    c.points = 1;
  } else if (name == "nvme-3point") {
    nvme_base(c);
    c.points = 3;
  } else if (name == "nvme-midstream") {
    nvme_base(c);
    c.connect = false;
    c.ipv6 = true;
    c.vlan = 2;
    c.order_blocks = false;
  } else if (name == "nvme-large") {
    nvme_base(c);
    c.ios = 150000;
    c.hosts = 4;
    c.storages = 4;
    c.queues_min = c.queues_max = 4;
    c.incomplete = 0;
    c.targeted_losses = false;
    c.errors = false;
    c.loss = 0.00002;
    c.jitter_ns = 100;
    c.snaplen = 256;
    c.duration_s = 2.0;
    c.size_profile = 1;
  } else if (name == "write-flows") {
    c.nvme = false;
    c.ios = 0;
    c.flows = 6;
    c.messages = 20;
    c.wrap_some = true;
    c.targeted_losses = true;
    c.points = 2;
    c.loss = 0.001;
    c.vlan = 1;
    c.order_blocks = true;
    c.jitter_ns = 100;
    c.duration_s = 0.003;
    c.flows_far_gpu = true;
  } else if (name == "mixed") {
    nvme_base(c);
    c.ios = 150;
    c.incomplete = 0.01;
    c.flows = 4;
    c.messages = 15;
    c.max_msg_pkts = 64;  // keep the GPU traffic from drowning the NVMe I/Os
    c.wrap_some = true;
    c.order_blocks = false;
    c.jitter_ns = 100;
    c.duration_s = 0.015;
  } else {
    return false;
  }
  return true;
}

std::vector<PointInfo> point_list(const Config& c) {
  const bool nvme = c.nvme && c.ios > 0;
  // Write-flows-only captures: the far leaf faces GPUs too (both compute). With --cross
  // each leaf's host port is the compute side of its hosts and the storage side of its
  // storage servers.
  const bool far_gpu = !nvme && c.flows_far_gpu;
  const std::string near_role = (nvme && c.cross) ? "mixed" : "compute";
  const std::string far_role = (nvme && c.cross) ? "mixed" : (far_gpu ? "compute" : "storage");
  std::vector<PointInfo> pts;
  pts.push_back({"leafA-gpu", near_role});
  if (c.points >= 4) pts.push_back({"leafA-up", "fabric"});
  if (c.points >= 3) pts.push_back({"spine1", "fabric"});
  if (c.points >= 5) pts.push_back({"leafB-up", "fabric"});
  if (c.points >= 2) pts.push_back({far_gpu ? "leafB-gpu" : "leafB-stor", far_role});
  return pts;
}

int generate(const Config& c, RunStats* stats) {
  const auto t_begin = std::chrono::steady_clock::now();
  const bool nvme = c.nvme && c.ios > 0;
  const bool flows = c.flows > 0 && c.messages > 0;
  const int64_t duration = static_cast<int64_t>(c.duration_s * 1e9);
  const int64_t setup = (nvme && c.connect) ? 2500000 : 0;
  // Centre the traffic on a second boundary so the 1-second flow periods are exercised.
  const int64_t t_start = kEpochSec * 1000000000LL + 1000000000LL - (setup + duration) / 2 - 200000;

  const std::vector<PointInfo> pts = point_list(c);
  FabricConfig fc;
  fc.points = c.points;
  fc.loss = c.loss;
  fc.jitter_ns = c.jitter_ns;
  fc.routed = c.routed;
  fc.clock_offset_ns.assign(pts.size(), 0);
  for (const auto& [name, ns] : c.clock_offsets) {
    size_t p = 0;
    while (p < pts.size() && pts[p].name != name) ++p;
    if (p == pts.size()) {
      std::fprintf(stderr, "rdmatel-synth: --clock-offset: no point named %s\n", name.c_str());
      return 2;
    }
    fc.clock_offset_ns[p] = ns;
  }
  // --drop-between and --ecn-mark name two points: resolved to point ids.
  const std::pair<const std::vector<Config::Drop>*, std::vector<FabricConfig::Drop>*> between[] = {
      {&c.drops, &fc.drops}, {&c.marks, &fc.marks}};
  for (const auto& [given, resolved] : between)
    for (const Config::Drop& d : *given) {
      FabricConfig::Drop fd;
      for (size_t p = 0; p < pts.size(); ++p) {
        if (pts[p].name == d.from) fd.from = static_cast<int>(p);
        if (pts[p].name == d.to) fd.to = static_cast<int>(p);
      }
      if (fd.from < 0 || fd.to < 0 || fd.from == fd.to) {
        std::fprintf(stderr, "rdmatel-synth: %s %s:%s: not two points of the run\n",
                     given == &c.drops ? "--drop-between" : "--ecn-mark", d.from.c_str(), d.to.c_str());
        return 2;
      }
      fd.rate = d.rate;
      resolved->push_back(fd);
    }
  std::vector<int> pfc_points;
  for (const Config::PfcBurst& b : c.pfc) {
    size_t p = 0;
    while (p < pts.size() && pts[p].name != b.point) ++p;
    if (p == pts.size()) {
      std::fprintf(stderr, "rdmatel-synth: --pfc-pause / --pfc-storm: no point named %s\n", b.point.c_str());
      return 2;
    }
    pfc_points.push_back(static_cast<int>(p));
  }
  Fabric fabric(fc, c.seed);
  fabric.set_points(pts);

  auto make_ip = [&](int net, int host) {
    uint8_t ip[16] = {0};
    if (c.ipv6) {
      ip[0] = 0xfd;
      ip[1] = 0x00;
      ip[3] = static_cast<uint8_t>(net);
      ip[14] = static_cast<uint8_t>(host >> 8);
      ip[15] = static_cast<uint8_t>(host);
    } else {
      ip[10] = ip[11] = 0xFF;
      ip[12] = 10;
      ip[13] = static_cast<uint8_t>(net);
      ip[14] = 0;
      ip[15] = static_cast<uint8_t>(host);
    }
    return std::vector<uint8_t>(ip, ip + 16);
  };
  std::vector<int> host_eps, stor_eps, gpu0, gpu1;
  if (nvme) {
    // --cross: odd-numbered hosts sit behind leaf B, odd-numbered storage servers behind
    // leaf A; the NVMe model only pairs endpoints on opposite sides.
    for (int h = 0; h < c.hosts; ++h)
      host_eps.push_back(fabric.add_endpoint(c.cross ? h % 2 : 0, make_ip(1, h + 1).data(), c.ipv6));
    for (int s = 0; s < c.storages; ++s)
      stor_eps.push_back(fabric.add_endpoint(c.cross ? 1 - s % 2 : 1, make_ip(2, s + 1).data(), c.ipv6));
  }
  if (flows) {
    const int n = std::max(2, (c.flows + 1) / 2);
    for (int i = 0; i < n; ++i) gpu0.push_back(fabric.add_endpoint(0, make_ip(3, i + 1).data(), c.ipv6));
    for (int i = 0; i < n; ++i) gpu1.push_back(fabric.add_endpoint(1, make_ip(4, i + 1).data(), c.ipv6));
  }

  for (const Config::PathFault& f : c.path_faults)
    fabric.set_path_fault(host_eps[static_cast<size_t>(f.host - 1)], stor_eps[static_cast<size_t>(f.storage - 1)],
                          f.extra_ns, f.loss);

  WireConfig wc;
  wc.vlan_tags = c.vlan;
  wc.pcp = static_cast<uint8_t>(c.pcp);
  wc.ipv6 = c.ipv6;
  SimConfig sc;
  sc.pmtu = c.pmtu;
  sc.snaplen = c.snaplen;
  sc.cnp = !c.marks.empty();
  Sim sim(sc, fabric, wc);

  std::unique_ptr<NvmeModel> nm;
  std::unique_ptr<WriteFlows> wf;
  if (nvme) {
    NvmeConfig nc;
    nc.hosts = c.hosts;
    nc.storages = c.storages;
    nc.queues_min = c.queues_min;
    nc.queues_max = c.queues_max;
    nc.ios = c.ios;
    nc.t_start = t_start;
    nc.duration_ns = duration;
    nc.connect = c.connect;
    nc.incomplete = c.incomplete;
    nc.targeted_losses = c.targeted_losses && c.loss > 0;
    nc.errors = c.errors;
    nc.psn_wrap = c.psn_wrap;
    nc.segments = fabric.segments();
    nc.pmtu = c.pmtu;
    nc.ipv6 = c.ipv6;
    nc.size_profile = c.size_profile;
    nc.storage_extra_ns.assign(static_cast<size_t>(c.storages), 0);
    nc.host_extra_ns.assign(static_cast<size_t>(c.hosts), 0);
    nc.storage_extra_window.assign(static_cast<size_t>(c.storages), {0, 0});
    for (size_t i = 0; i < c.slow_storages.size(); ++i) {
      const auto [n, ns] = c.slow_storages[i];
      nc.storage_extra_ns[static_cast<size_t>(n - 1)] += ns;
      const auto [from, to] = c.slow_storage_windows[i];
      nc.storage_extra_window[static_cast<size_t>(n - 1)] = {static_cast<int64_t>(from * 1e9), static_cast<int64_t>(to * 1e9)};
    }
    for (const auto& [n, ns] : c.slow_hosts) nc.host_extra_ns[static_cast<size_t>(n - 1)] += ns;
    nm = std::make_unique<NvmeModel>(nc, c.seed);
    nm->setup(sim, host_eps, stor_eps);
  }
  if (flows) {
    FlowsConfig fcfg;
    fcfg.flows = c.flows;
    fcfg.messages = c.messages;
    fcfg.t_start = t_start + setup;
    fcfg.duration_ns = duration;
    fcfg.psn_wrap = c.psn_wrap;
    fcfg.wrap_some = c.wrap_some;
    fcfg.targeted_losses = c.targeted_losses && c.loss > 0;
    fcfg.segments = fabric.segments();
    fcfg.pmtu = c.pmtu;
    fcfg.max_pkts = c.max_msg_pkts;
    wf = std::make_unique<WriteFlows>(fcfg, c.seed);
    wf->setup(sim, gpu0, gpu1);
  }
  sim.run(t_start + setup + duration + 10000000000LL);
  for (size_t i = 0; i < c.pfc.size(); ++i) {
    const Config::PfcBurst& b = c.pfc[i];
    uint16_t pause[8] = {}, resume[8] = {};
    pause[b.priority] = 0xFFFF;
    const auto enabled = static_cast<uint8_t>(1u << b.priority);
    const int64_t t0 = t_start + setup + static_cast<int64_t>(b.at_s * 1e9);
    for (int k = 0; k < b.frames; ++k) fabric.add_pfc(pfc_points[i], t0 + k * kPfcRefreshNs, enabled, pause);
    if (b.resume) fabric.add_pfc(pfc_points[i], t0 + b.frames * kPfcRefreshNs, enabled, resume);
  }
  fabric.sort_points();

  TruthMeta meta;
  meta.scenario = c.scenario;
  meta.seed = c.seed;
  meta.notes = c.notes;
  meta.command = c.command;
  meta.pmtu = c.pmtu;
  meta.vlan_tags = wc.vlan_tags;
  meta.pcp = wc.pcp;
  meta.dscp = wc.dscp;
  if (nvme && !c.connect) {
    // Mid-stream: the capture starts once ~20% of the I/Os have arrived, at an instant
    // where no message and no command capsule is half seen.
    meta.cut_ns = choose_cut(fabric, t_start + setup + duration / 5);
    fabric.cut_before(meta.cut_ns);
  }
  auto frames = fabric.file_order(c.order_blocks, c.seed);
  // --capture-drops: packets the network delivered past a point that its capture missed. The
  // truth stays the network's; the file lacks them, and says how many (interface statistics).
  meta.capture_dropped.assign(pts.size(), 0);
  if (!c.capture_drops.empty()) {
    std::vector<double> rate(pts.size(), 0.0);
    for (const auto& [name, r] : c.capture_drops)
      for (size_t p = 0; p < pts.size(); ++p)
        if (pts[p].name == name) rate[p] = r;
    Rng rng(c.seed ^ 0x63617074757265ull);  // its own stream: the rest of the capture is unchanged
    std::erase_if(frames, [&](const auto& fr) {
      const bool dropped = rng.chance(rate[fr.first]);
      meta.capture_dropped[fr.first] += dropped;
      return dropped;
    });
  }

  // pcapng
  std::vector<EndpointWire> wires;
  for (const auto& e : fabric.endpoints) wires.push_back(e.wire);
  PacketEncoder enc(wc, wires, sim.arena);
  enc.set_pfc_frames(&fabric.pfc_frames);
  // Transport headers are always captured whole: a snap length that would cut into the
  // longest header of this configuration (IPv6 with VLAN tags) is raised to cover it.
  const uint32_t snap = std::max(c.snaplen, max_header_len(wc));
  if (snap != c.snaplen)
    std::fprintf(stderr, "rdmatel-synth: snap length %u raised to %u (longest transport header)\n", c.snaplen, snap);
  // What the file would take, checked before anything is written: a disk filled half way helps
  // nobody.
  uint64_t file_bytes = 0;
  for (const auto& fr : frames)
    file_bytes += PcapngWriter::packet_block_bytes(
        std::min(snap, wire_len(wc, fabric.emissions[fabric.obs[fr.first][fr.second].em])));
  const double file_gb = static_cast<double>(file_bytes) / 1e9;
  if (file_gb > c.max_size_gb) {
    std::fprintf(stderr,
                 "rdmatel-synth: the capture would take %.3g GB (%zu packets, %llu copies sent, resends included), "
                 "more than --max-size %g GB; nothing written. Lower --loss, --messages, "
                 "--ios or --snaplen, or raise --max-size\n",
                 file_gb, frames.size(), static_cast<unsigned long long>(fabric.emissions.size()), c.max_size_gb);
    return 2;
  }
  PcapngWriter w;
  if (!w.open(c.out)) {
    std::fprintf(stderr, "rdmatel-synth: cannot write %s\n", c.out.c_str());
    return 1;
  }
  for (const auto& p : pts) w.add_interface(p.name, "rdmatel-synth " + p.role + " point", snap);
  std::vector<uint8_t> buf;
  for (const auto& fr : frames) {
    const Obs& o = fabric.obs[fr.first][fr.second];
    const Emission& e = fabric.emissions[o.em];
    const uint32_t wl = enc.encode(e, snap, fabric.ttl_at(fr.first, e), buf, o.ce != 0);
    w.add_packet(fr.first, static_cast<uint64_t>(o.stamp), buf.data(), static_cast<uint32_t>(buf.size()), wl);
  }
  if (!c.capture_drops.empty()) {
    const uint64_t end = frames.empty() ? 0 : static_cast<uint64_t>(fabric.obs[frames.back().first][frames.back().second].stamp);
    for (size_t p = 0; p < pts.size(); ++p) w.add_interface_statistics(static_cast<uint32_t>(p), end, meta.capture_dropped[p]);
  }
  if (!w.close()) {
    std::fprintf(stderr, "rdmatel-synth: write error on %s\n", c.out.c_str());
    return 1;
  }
  std::string truth = c.out;
  const std::string ext = ".pcapng";
  if (truth.size() > ext.size() && truth.compare(truth.size() - ext.size(), ext.size(), ext) == 0)
    truth.resize(truth.size() - ext.size());
  truth += ".truth.json";
  for (size_t i = 0; i < c.pfc.size(); ++i)
    meta.pfc.push_back({pfc_points[i], c.pfc[i].priority, c.pfc[i].frames, c.pfc[i].resume});
  if (!write_truth(truth, meta, fabric, sim, nm.get(), frames)) {
    std::fprintf(stderr, "rdmatel-synth: cannot write %s\n", truth.c_str());
    return 1;
  }
  if (stats) {
    stats->packets = frames.size();
    stats->emissions = fabric.emissions.size();
    stats->ios = nm ? nm->issue_order().size() : 0;
    stats->messages = sim.msgs.size();
    stats->seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_begin).count();
  }
  return 0;
}

}  // namespace synth
