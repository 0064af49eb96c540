// SPDX-License-Identifier: GPL-2.0-or-later
#include "nvme_model.h"

#include <algorithm>
#include <cstring>

namespace synth {
namespace {

constexpr uint8_t kOpFlush = 0x00, kOpWrite = 0x01, kOpRead = 0x02, kOpGetLog = 0x02,
                  kOpIdentify = 0x06, kOpSetFeatures = 0x09, kOpKeepAlive = 0x18, kOpFabrics = 0x7F;
constexpr uint32_t kInlineMax = 4096;  // target's in-capsule data size (ioccsz), as Linux

void le16(uint8_t* p, uint32_t v) {
  p[0] = static_cast<uint8_t>(v);
  p[1] = static_cast<uint8_t>(v >> 8);
}
void le32(uint8_t* p, uint32_t v) {
  le16(p, v & 0xFFFF);
  le16(p + 2, v >> 16);
}
void le64(uint8_t* p, uint64_t v) {
  le32(p, static_cast<uint32_t>(v));
  le32(p + 4, static_cast<uint32_t>(v >> 32));
}
void be16(uint8_t* p, uint32_t v) {
  p[0] = static_cast<uint8_t>(v >> 8);
  p[1] = static_cast<uint8_t>(v);
}
void be24(uint8_t* p, uint32_t v) {
  p[0] = static_cast<uint8_t>(v >> 16);
  be16(p + 1, v & 0xFFFF);
}
void be32(uint8_t* p, uint32_t v) {
  be16(p, v >> 16);
  be16(p + 2, v & 0xFFFF);
}
void be64(uint8_t* p, uint64_t v) {
  be32(p, static_cast<uint32_t>(v >> 32));
  be32(p + 4, static_cast<uint32_t>(v));
}

uint64_t arena_add(std::vector<uint8_t>& a, const uint8_t* p, size_t n) {
  const uint64_t off = a.size();
  a.insert(a.end(), p, p + n);
  return off;
}

uint32_t pick_size(Rng& r, const uint32_t* sizes, const int* weights, int n) {
  int total = 0;
  for (int i = 0; i < n; ++i) total += weights[i];
  int x = static_cast<int>(r.range(0, total - 1));
  for (int i = 0; i < n; ++i) {
    if (x < weights[i]) return sizes[i];
    x -= weights[i];
  }
  return sizes[n - 1];
}

}  // namespace

NvmeModel::NvmeModel(const NvmeConfig& cfg, uint64_t seed)
    : cfg_(cfg), rng_(seed ^ 0x4E564D45u), svc_(seed ^ 0x5E2Fu) {}

int NvmeModel::new_io(int queue, uint8_t opcode, int fctype, const char* name, uint32_t length) {
  NvmeIo io;
  io.queue = queue;
  io.opcode = opcode;
  io.fctype = fctype;
  io.op = name;
  io.admin = queues_[static_cast<size_t>(queue)].qid == 0;
  io.length = length;
  io.seed = static_cast<uint32_t>(rng_.next());
  ios_.push_back(io);
  return static_cast<int>(ios_.size() - 1);
}

void NvmeModel::setup(Sim& sim, std::vector<int>& host_eps, std::vector<int>& stor_eps) {
  // Arena block of zeros: admin data (Identify, log pages) mostly is zeros, and it keeps
  // Wireshark's field-by-field decoding of those structures plausible.
  std::vector<uint8_t> zeros(16384, 0);
  zero_block_ = arena_add(sim.arena, zeros.data(), zeros.size());

  for (int h = 0; h < cfg_.hosts; ++h) {
    HostState hs;
    hs.ep = host_eps[static_cast<size_t>(h)];
    hs.va_base = 0xffff888100000000ULL + (static_cast<uint64_t>(rng_.range(0, 255)) << 32);
    hosts_.push_back(hs);
  }
  stor_eps_ = stor_eps;
  uint16_t next_cntlid = static_cast<uint16_t>(rng_.range(1, 16));
  for (int h = 0; h < cfg_.hosts; ++h) {
    int mr_next = static_cast<int>(rng_.range(0x10, 0x40));
    for (int s = 0; s < cfg_.storages; ++s) {
      // I/Os only cross the fabric: a host talks to the storage servers behind the other
      // leaf (all of them unless --cross put endpoints on both sides).
      if (sim.fabric.endpoints[static_cast<size_t>(host_eps[static_cast<size_t>(h)])].side ==
          sim.fabric.endpoints[static_cast<size_t>(stor_eps[static_cast<size_t>(s)])].side)
        continue;
      Ctrl c;
      c.host = h;
      c.stor = s;
      c.host_ep = host_eps[static_cast<size_t>(h)];
      c.stor_ep = stor_eps[static_cast<size_t>(s)];
      c.cntlid = next_cntlid++;
      const int nq = static_cast<int>(rng_.range(cfg_.queues_min, cfg_.queues_max));
      const int ci = static_cast<int>(ctrls_.size());
      for (int qid = 0; qid <= nq; ++qid) {
        Queue q;
        q.ctrl = ci;
        q.qid = qid;
        q.sqsize = qid == 0 ? 31 : 127;
        q.sq_head = cfg_.connect ? 0 : static_cast<uint16_t>(rng_.range(0, q.sqsize));
        const int depth = qid == 0 ? 16 : cfg_.depth;
        for (int t = depth - 1; t >= 0; --t) q.free_tags.push_back(static_cast<uint16_t>(t));
        for (int m = depth - 1; m >= 0; --m) q.free_mrs.push_back(mr_next + m);
        mr_next += depth;
        // Each side has its own random QPN and initial PSN; the target often answers
        // from the same UDP source port, but not always.
        auto rand_qpn = [&]() { return static_cast<uint32_t>(rng_.range(0x100, 0xFFFFFE)); };
        auto rand_psn = [&]() {
          return cfg_.psn_wrap ? static_cast<uint32_t>(0xFFFFFF - rng_.range(0, 6))
                               : static_cast<uint32_t>(rng_.range(0, 0xFFFFFF));
        };
        const uint32_t hq = rand_qpn();
        uint32_t sq = rand_qpn();
        while (sq == hq) sq = rand_qpn();
        const uint32_t hpsn = rand_psn(), spsn = rand_psn();
        const auto hport = static_cast<uint16_t>(rng_.range(49152, 65535));
        const auto sport = rng_.chance(0.7) ? hport : static_cast<uint16_t>(rng_.range(49152, 65535));
        q.host_qps = sim.connect(c.host_ep, c.stor_ep, hq, sq, hpsn, spsn, hport, sport, this);
        q.stor_qps = q.host_qps + 1;
        q.ready = !cfg_.connect;
        const int qi = static_cast<int>(queues_.size());
        queues_.push_back(q);
        c.queues.push_back(qi);
        if (static_cast<int>(qps_queue_.size()) < q.stor_qps + 1) qps_queue_.resize(q.stor_qps + 1, -1);
        qps_queue_[static_cast<size_t>(q.host_qps)] = qi;
        qps_queue_[static_cast<size_t>(q.stor_qps)] = qi;
      }
      hosts_[static_cast<size_t>(h)].mr_counter.resize(static_cast<size_t>(mr_next) + 1, 0);
      for (auto& v : hosts_[static_cast<size_t>(h)].mr_counter) v = static_cast<uint8_t>(rng_.next());
      // Connect data: HOSTID, CNTLID (0xFFFF: dynamic), SUBNQN, HOSTNQN.
      uint8_t cd[1024] = {0};
      for (int i = 0; i < 16; ++i) cd[i] = static_cast<uint8_t>(rng_.next());
      le16(cd + 16, 0xFFFF);
      char nqn[256];
      std::snprintf(nqn, sizeof nqn, "nqn.2026-11.io.rdmatel:stor%d", s + 1);
      std::memcpy(cd + 256, nqn, std::strlen(nqn));
      std::snprintf(nqn, sizeof nqn, "nqn.2014-08.org.nvmexpress:uuid:5eed%04x-0000-4000-8000-%012x",
                    h + 1, static_cast<unsigned>(rng_.next() & 0xFFFFFFFF));
      std::memcpy(cd + 512, nqn, std::strlen(nqn));
      c.connect_data = arena_add(sim.arena, cd, sizeof cd);
      ctrls_.push_back(c);
    }
  }

  io_window_start_ = static_cast<uint64_t>(cfg_.t_start + (cfg_.connect ? 2500000 : 0));
  if (cfg_.connect) {
    for (size_t c = 0; c < ctrls_.size(); ++c) {
      const int64_t t = cfg_.t_start + static_cast<int64_t>(c) * rng_.range(40000, 150000);
      const int ci = static_cast<int>(c);
      sim.at(t, [this, &sim, ci]() { setup_step(sim, ci); });
    }
  }
  plan_workload(sim);
}

// Controller bring-up as Linux does it: CM + Connect on the admin queue, controller
// properties, Identify, number of queues, a log page, the namespace, then every I/O queue.
void NvmeModel::setup_step(Sim& sim, int ci) {
  Ctrl& c = ctrls_[static_cast<size_t>(ci)];
  const int admin = c.queues[0];
  const int step = c.step;
  auto mk = [&](uint8_t opc, int fct, const char* name, uint32_t len) {
    const int io = new_io(admin, opc, fct, name, len);
    ios_[static_cast<size_t>(io)].setup_step = step;
    return io;
  };
  const int nio = static_cast<int>(c.queues.size()) - 1;
  int io = -1;
  switch (step) {
    case 0: {
      const int q = admin;
      cm_connect(sim, q, sim.now(), [this, &sim, q, step](int64_t) {
        const int i = new_io(q, kOpFabrics, 0x01, "connect", 1024);
        ios_[static_cast<size_t>(i)].setup_step = step;
        submit(sim, i);
      });
      return;
    }
    case 1:
      io = mk(kOpFabrics, 0x04, "property_get", 0);
      ios_[static_cast<size_t>(io)].cdw10 = 1;  // 8-byte property
      ios_[static_cast<size_t>(io)].cdw11 = 0x00;  // CAP
      break;
    case 2:
      io = mk(kOpFabrics, 0x00, "property_set", 0);
      ios_[static_cast<size_t>(io)].cdw10 = 0;
      ios_[static_cast<size_t>(io)].cdw11 = 0x14;  // CC
      ios_[static_cast<size_t>(io)].prop_value = 0x00460001;
      break;
    case 3:
      io = mk(kOpFabrics, 0x04, "property_get", 0);
      ios_[static_cast<size_t>(io)].cdw10 = 0;
      ios_[static_cast<size_t>(io)].cdw11 = 0x1C;  // CSTS
      break;
    case 4:
      io = mk(kOpIdentify, -1, "identify", 4096);
      ios_[static_cast<size_t>(io)].cdw10 = 1;  // CNS: controller
      break;
    case 5:
      io = mk(kOpSetFeatures, -1, "set_features", 0);
      ios_[static_cast<size_t>(io)].cdw10 = 0x07;  // number of queues
      ios_[static_cast<size_t>(io)].cdw11 = static_cast<uint32_t>((nio - 1) | ((nio - 1) << 16));
      break;
    case 6:
      io = mk(kOpGetLog, -1, "get_log_page", 512);
      ios_[static_cast<size_t>(io)].nsid = 0xFFFFFFFF;
      ios_[static_cast<size_t>(io)].cdw10 = 0x02 | ((512 / 4 - 1) << 16);  // SMART / health
      break;
    case 7:
      io = mk(kOpIdentify, -1, "identify", 4096);
      ios_[static_cast<size_t>(io)].nsid = 1;
      ios_[static_cast<size_t>(io)].cdw10 = 0;  // CNS: namespace
      break;
    default: {
      const int k = step - 8 + 1;  // I/O queue id
      if (k > nio) return;
      const int q = c.queues[static_cast<size_t>(k)];
      cm_connect(sim, q, sim.now(), [this, &sim, q, step](int64_t) {
        const int i = new_io(q, kOpFabrics, 0x01, "connect", 1024);
        ios_[static_cast<size_t>(i)].setup_step = step;
        ios_[static_cast<size_t>(i)].in_capsule = true;
        submit(sim, i);
      });
      return;
    }
  }
  submit(sim, io);
}

void NvmeModel::cm_connect(Sim& sim, int qi, int64_t t, std::function<void(int64_t)> done) {
  // REQ -> REP -> RTU on QP1, then the queue's own QPs are usable.
  const Queue& q = queues_[static_cast<size_t>(qi)];
  const Ctrl& c = ctrls_[static_cast<size_t>(q.ctrl)];
  const auto lc = static_cast<uint32_t>(rng_.next()), rc = static_cast<uint32_t>(rng_.next());
  const uint32_t hpsn = sim.qp(q.host_qps).next_psn, spsn = sim.qp(q.stor_qps).next_psn;
  const uint64_t req = cm_mad(sim, 0x0010, q, true, lc, 0, hpsn);
  const uint64_t rep = cm_mad(sim, 0x0013, q, false, rc, lc, spsn);
  const uint64_t rtu = cm_mad(sim, 0x0014, q, true, lc, rc, 0);
  const int he = c.host_ep, se = c.stor_ep;
  sim.at(t, [this, &sim, he, se, req, rep, rtu, done]() {
    const int64_t t_rep = sim.send_ud(he, se, req, 256) + svc_.range(20000, 60000);
    sim.at(t_rep, [this, &sim, he, se, rep, rtu, done]() {
      const int64_t t_rtu = sim.send_ud(se, he, rep, 256) + svc_.range(5000, 20000);
      sim.at(t_rtu, [this, &sim, he, se, rtu, done]() {
        sim.send_ud(he, se, rtu, 256);
        const int64_t t_go = sim.now() + svc_.range(2000, 5000);
        sim.at(t_go, [done, t_go]() { done(t_go); });
      });
    });
  });
}

uint64_t NvmeModel::cm_mad(Sim& sim, uint16_t attr, const Queue& q, bool from_host, uint32_t local_comm,
                           uint32_t remote_comm, uint32_t start_psn) {
  uint8_t m[256] = {0};
  const Ctrl& c = ctrls_[static_cast<size_t>(q.ctrl)];
  const Endpoint& he = sim.fabric.endpoints[static_cast<size_t>(c.host_ep)];
  const Endpoint& se = sim.fabric.endpoints[static_cast<size_t>(c.stor_ep)];
  // MAD common header: CM class (7), version 2, method Send.
  m[0] = 1;
  m[1] = 0x07;
  m[2] = 2;
  m[3] = 0x03;
  be32(m + 8, 0);
  be32(m + 12, (attr == 0x0013 ? remote_comm : local_comm));  // transaction id: the requester's
  be16(m + 16, attr);
  uint8_t* d = m + 24;
  auto guid = [](const Endpoint& e) {
    return 0x00000afffe000000ULL | (static_cast<uint64_t>(e.wire.ip[14]) << 8) | e.wire.ip[15];
  };
  auto gid = [&](uint8_t* dst, const Endpoint& e) {
    if (cfg_.ipv6) {
      std::memcpy(dst, e.wire.ip, 16);
    } else {
      dst[10] = dst[11] = 0xFF;  // IPv4-mapped GID, as RoCEv2 over IPv4 uses
      std::memcpy(dst + 12, e.wire.ip + 12, 4);
    }
  };
  const QpSide& hq = sim.qp(q.host_qps);
  const QpSide& sq = sim.qp(q.stor_qps);
  uint8_t mtu_code = 5;
  for (uint32_t v = 4096; v > sim.config().pmtu && mtu_code > 1; v >>= 1) --mtu_code;
  if (attr == 0x0010) {  // ConnectRequest
    be32(d + 0, local_comm);
    be64(d + 8, 0x0000000001060000ULL | 4420);  // RDMA IP CM service: TCP port space, port 4420
    be64(d + 16, guid(he));
    be24(d + 32, hq.qpn);
    d[35] = 0x80;  // responder resources
    d[43] = 0xA1;  // remote CM response timeout 20, RC, end-to-end flow control
    be24(d + 44, start_psn);
    d[47] = 0xA7;  // local CM response timeout 20, retry count 7
    be16(d + 48, 0xFFFF);
    d[50] = static_cast<uint8_t>((mtu_code << 4) | 0x07);
    d[51] = 0xF0;
    be16(d + 52, 0xFFFF);
    be16(d + 54, 0xFFFF);
    gid(d + 56, he);
    gid(d + 72, se);
    be32(d + 88, 0x00000000);
    d[93] = 0x40;  // hop limit
    d[95] = 0x98;  // local ACK timeout
    // IP CM private data: version, IP version, source port, addresses.
    uint8_t* p = d + 140;  // after the 44-byte alternate path
    p[1] = static_cast<uint8_t>((cfg_.ipv6 ? 6 : 4) << 4);
    be16(p + 2, static_cast<uint16_t>(he.cm_port));
    if (cfg_.ipv6) {
      std::memcpy(p + 4, he.wire.ip, 16);
      std::memcpy(p + 20, se.wire.ip, 16);
    } else {
      std::memcpy(p + 16, he.wire.ip + 12, 4);
      std::memcpy(p + 32, se.wire.ip + 12, 4);
    }
    // NVMe/RDMA CM request private data: recfmt, qid, hrqsize, hsqsize.
    le16(p + 36, 0);
    le16(p + 38, static_cast<uint32_t>(q.qid));
    le16(p + 40, static_cast<uint32_t>(q.sqsize + 1));
    le16(p + 42, q.sqsize);
  } else if (attr == 0x0013) {  // ConnectReply
    be32(d + 0, local_comm);
    be32(d + 4, remote_comm);
    be24(d + 12, sq.qpn);
    be24(d + 20, start_psn);
    d[25] = 0x80;  // initiator depth
    d[26] = 0x79;  // target ACK delay 15, failover rejected, e2e flow control
    d[27] = 0xE0;  // RNR retry 7
    be64(d + 28, guid(se));
    le16(d + 36, 0);  // NVMe/RDMA: recfmt
    le16(d + 38, static_cast<uint32_t>(q.sqsize + 1));  // crqsize
  } else {  // ReadyToUse
    be32(d + 0, local_comm);
    be32(d + 4, remote_comm);
  }
  (void)from_host;
  return arena_add(sim.arena, m, sizeof m);
}

void NvmeModel::plan_workload(Sim& sim) {
  // Commands arrive in small bursts on random I/O queues, spread over the duration.
  std::vector<int> ioq;
  for (size_t i = 0; i < queues_.size(); ++i)
    if (queues_[i].qid > 0) ioq.push_back(static_cast<int>(i));
  static const uint32_t rsz[] = {4096, 8192, 16384, 32768, 65536, 131072};
  static const int rw_std[] = {30, 15, 20, 15, 12, 8};
  static const int ww_std[] = {40, 15, 15, 12, 10, 8};
  static const int rw_small[] = {55, 25, 12, 4, 3, 1};
  static const int ww_small[] = {55, 25, 12, 4, 3, 1};
  const int* rw = cfg_.size_profile ? rw_small : rw_std;
  const int* ww = cfg_.size_profile ? ww_small : ww_std;
  int made = 0;
  std::vector<std::pair<int64_t, int>> arrivals;
  while (made < cfg_.ios) {
    const int burst = std::min(cfg_.ios - made, static_cast<int>(rng_.range(1, 6)));
    const int64_t t = static_cast<int64_t>(io_window_start_) + rng_.range(0, cfg_.duration_ns);
    const int q = ioq[static_cast<size_t>(rng_.range(0, static_cast<int64_t>(ioq.size()) - 1))];
    for (int k = 0; k < burst; ++k) {
      const int x = static_cast<int>(rng_.range(0, 99));
      int io;
      if (x < 3) {
        io = new_io(q, kOpFlush, -1, "flush", 0);
        ios_[static_cast<size_t>(io)].nsid = 1;
      } else if (x < 58) {
        io = new_io(q, kOpRead, -1, "read", pick_size(rng_, rsz, rw, 6));
      } else {
        const uint32_t len = pick_size(rng_, rsz, ww, 6);
        io = new_io(q, kOpWrite, -1, "write", len);
        ios_[static_cast<size_t>(io)].in_capsule = len <= kInlineMax;
      }
      NvmeIo& r = ios_[static_cast<size_t>(io)];
      if (r.opcode != kOpFlush) {
        r.nsid = 1;
        r.slba = static_cast<uint64_t>(rng_.range(0, (1 << 26) - 1)) * (r.length / 512);
        r.cdw12 = r.length / 512 - 1;
      }
      r.t_arrival = t + k * 200;
      arrivals.emplace_back(r.t_arrival, io);
    }
    made += burst;
  }
  std::stable_sort(arrivals.begin(), arrivals.end());
  for (const auto& a : arrivals) workload_.push_back(a.second);

  // Admin traffic during the run: keep-alives (KATO/2) and the odd Identify/Get Log Page.
  const int64_t ka = std::max<int64_t>(cfg_.duration_ns / 3, 1000000);
  for (size_t c = 0; c < ctrls_.size(); ++c) {
    const int admin = ctrls_[c].queues[0];
    for (int64_t t = static_cast<int64_t>(io_window_start_) + rng_.range(0, ka);
         t < static_cast<int64_t>(io_window_start_) + cfg_.duration_ns; t += ka) {
      const int io = new_io(admin, kOpKeepAlive, -1, "keep_alive", 0);
      ios_[static_cast<size_t>(io)].t_arrival = t;
      arrivals.emplace_back(t, io);
    }
    if (cfg_.ios >= 50 || cfg_.errors) {
      int io = new_io(admin, kOpIdentify, -1, "identify", 4096);
      ios_[static_cast<size_t>(io)].nsid = 1;
      ios_[static_cast<size_t>(io)].t_arrival = static_cast<int64_t>(io_window_start_) + rng_.range(0, cfg_.duration_ns);
      arrivals.emplace_back(ios_[static_cast<size_t>(io)].t_arrival, io);
      const uint32_t lens[] = {512, 4096, 12288};
      const uint32_t len = lens[rng_.range(0, 2)];
      io = new_io(admin, kOpGetLog, -1, "get_log_page", len);
      NvmeIo& g = ios_[static_cast<size_t>(io)];
      g.nsid = 0xFFFFFFFF;
      // Log pages that span several packets are ANA logs (as in the real capture):
      // Wireshark 4.0 cannot reassemble the fixed-layout ones across RDMA WRITEs.
      uint32_t lid = len == 512 ? 0x02u : 0x05u;
      if (len > cfg_.pmtu) lid = 0x0Cu;
      g.cdw10 = lid | ((len / 4 - 1) << 16);
      g.t_arrival = static_cast<int64_t>(io_window_start_) + rng_.range(0, cfg_.duration_ns);
      if (cfg_.errors && c == 0) g.status = 0x4002;  // Invalid Field in Command, DNR
      arrivals.emplace_back(g.t_arrival, io);
    }
  }

  // Incomplete I/Os: reads/writes in the middle of the run whose completion never comes.
  std::vector<int> rwio;
  for (size_t i = workload_.size() / 5; i < workload_.size() * 4 / 5; ++i) {
    const NvmeIo& r = ios_[static_cast<size_t>(workload_[i])];
    if (r.opcode == kOpRead || r.opcode == kOpWrite) rwio.push_back(workload_[i]);
  }
  int nin = static_cast<int>(cfg_.incomplete * cfg_.ios + 0.5);
  if (cfg_.incomplete > 0 && nin == 0) nin = 1;
  for (int k = 0; k < nin && !rwio.empty(); ++k) {
    const size_t j = static_cast<size_t>(rng_.range(0, static_cast<int64_t>(rwio.size()) - 1));
    NvmeIo& r = ios_[static_cast<size_t>(rwio[j])];
    r.incomplete_stage = k % 2;  // alternate: stuck before the data, stuck after it
    rwio.erase(rwio.begin() + static_cast<long>(j));
  }
  if (cfg_.errors) {
    for (int id : rwio) {
      NvmeIo& r = ios_[static_cast<size_t>(id)];
      if (r.opcode == kOpRead && r.incomplete_stage < 0) {
        r.status = 0x0281;  // Unrecovered Read Error (media error)
        break;
      }
    }
  }
  if (cfg_.targeted_losses) plan_losses();

  for (const auto& a : arrivals) {
    const int io = a.second;
    sim.at(a.first, [this, &sim, io]() { submit(sim, io); });
  }
}

void NvmeModel::plan_losses() {
  // A designed set of losses so every recovery path shows up in every preset capture:
  // segment 0 = before the first point, 1 = after it, last = after the last point.
  const int last = cfg_.segments - 1;
  const int mid = std::min(1, last);
  struct Want {
    uint8_t opcode;
    bool in_capsule;
    uint32_t min_len;
    uint8_t cls;
    int pkt, seg;
  };
  const Want wants[] = {
      {kOpRead, false, 0, kClsCmdFirst, 0, mid},        {kOpRead, false, 0, kClsCmdFirst, 0, 0},
      {kOpRead, false, 8192, kClsDataFirst, 0, 0},      {kOpRead, false, 16384, kClsDataFirst, 1, mid},
      {kOpRead, false, 0, kClsCompletion, 0, mid},      {kOpRead, false, 0, kClsCompletion, 0, last},
      {kOpWrite, false, 0, kClsReadReq, 0, mid},        {kOpWrite, false, 16384, kClsRespFirst, 1, mid},
      {kOpWrite, false, 8192, kClsRespFirst, 0, 0},     {kOpWrite, false, 0, kClsCompletion, 0, 0},
      {kOpWrite, true, 0, kClsCmdFirst, 1, last},       {kOpRead, false, 0, kClsDataFirst, 0, last},
  };
  std::vector<char> used(ios_.size(), 0);
  size_t start = workload_.size() / 10;
  for (const Want& w : wants) {
    for (size_t k = 0; k < workload_.size(); ++k) {
      const int id = workload_[(start + k * 7) % workload_.size()];
      NvmeIo& r = ios_[static_cast<size_t>(id)];
      if (used[static_cast<size_t>(id)] || r.opcode != w.opcode || r.in_capsule != w.in_capsule ||
          r.length < w.min_len || r.incomplete_stage >= 0 || r.status != 0)
        continue;
      used[static_cast<size_t>(id)] = 1;
      r.losses.push_back(NvmeIo::Loss{w.cls, w.pkt, w.seg});
      start += 13;
      break;
    }
  }
}

int NvmeModel::forced_pkt(const NvmeIo& io, uint8_t cls, int* seg) const {
  for (const auto& l : io.losses)
    if (l.cls == cls) {
      *seg = l.seg;
      return l.pkt;
    }
  *seg = -1;
  return -1;
}

void NvmeModel::submit(Sim& sim, int io) {
  Queue& q = queues_[static_cast<size_t>(ios_[static_cast<size_t>(io)].queue)];
  // Connect is what makes a queue usable; everything else waits for it.
  if (ios_[static_cast<size_t>(io)].fctype == 0x01 && !q.free_tags.empty()) {
    start_io(sim, io);
    return;
  }
  q.waiting.push_back(io);
  dispatch(sim, ios_[static_cast<size_t>(io)].queue);
}

void NvmeModel::dispatch(Sim& sim, int qi) {
  Queue& q = queues_[static_cast<size_t>(qi)];
  while (q.ready && !q.free_tags.empty() && !q.waiting.empty()) {
    const int io = q.waiting.front();
    q.waiting.pop_front();
    start_io(sim, io);
  }
}

uint64_t NvmeModel::build_sqe(Sim& sim, const NvmeIo& io, uint32_t extra_from, uint32_t extra_len) {
  uint8_t s[64] = {0};
  s[0] = io.opcode;
  s[1] = 0x40;  // PSDT = 01b: SGL, metadata buffer
  le16(s + 2, io.cid);
  if (io.fctype >= 0) {
    s[4] = static_cast<uint8_t>(io.fctype);
  } else {
    le32(s + 4, io.nsid);
  }
  // DPTR: SGL descriptor at bytes 24..39.
  uint8_t* g = s + 24;
  if (io.in_capsule) {
    le64(g, 0);  // offset into the capsule
    le32(g + 8, io.length);
    g[15] = 0x01;  // data block, subtype offset
  } else if (io.keyed) {
    le64(g, io.va);
    g[8] = static_cast<uint8_t>(io.length);
    g[9] = static_cast<uint8_t>(io.length >> 8);
    g[10] = static_cast<uint8_t>(io.length >> 16);
    le32(g + 11, io.rkey);
    g[15] = io.inval ? 0x4F : 0x40;  // keyed data block, invalidate key
  } else {
    g[15] = 0x40;  // keyed data block of length 0 (no data)
  }
  const Queue& q = queues_[static_cast<size_t>(io.queue)];
  if (io.fctype == 0x01) {  // Connect
    le16(s + 40, 0);
    le16(s + 42, static_cast<uint32_t>(q.qid));
    le16(s + 44, q.sqsize);
    s[46] = 0;
    le32(s + 48, q.qid == 0 ? 5000 : 0);  // KATO (ms), admin queue only
  } else if (io.fctype == 0x04) {  // Property Get
    s[40] = static_cast<uint8_t>(io.cdw10);
    le32(s + 44, io.cdw11);
  } else if (io.fctype == 0x00) {  // Property Set
    s[40] = static_cast<uint8_t>(io.cdw10);
    le32(s + 44, io.cdw11);
    le64(s + 48, io.prop_value);
  } else if (!io.admin && (io.opcode == kOpRead || io.opcode == kOpWrite)) {
    le64(s + 40, io.slba);  // CDW10-11: starting LBA
    le32(s + 48, io.cdw12);  // CDW12: number of blocks, 0-based
  } else {
    le32(s + 40, io.cdw10);
    le32(s + 44, io.cdw11);
  }
  const uint64_t off = arena_add(sim.arena, s, sizeof s);
  if (extra_len) {
    std::vector<uint8_t> tmp(sim.arena.begin() + static_cast<long>(extra_from),
                             sim.arena.begin() + static_cast<long>(extra_from + extra_len));
    arena_add(sim.arena, tmp.data(), tmp.size());
  }
  return off;
}

void NvmeModel::start_io(Sim& sim, int id) {
  NvmeIo& io = ios_[static_cast<size_t>(id)];
  Queue& q = queues_[static_cast<size_t>(io.queue)];
  const Ctrl& c = ctrls_[static_cast<size_t>(q.ctrl)];
  HostState& h = hosts_[static_cast<size_t>(c.host)];
  io.tag = q.free_tags.back();
  q.free_tags.pop_back();
  io.cid = io.tag;
  // Data that the controller moves by RDMA needs a registered buffer: keyed SGL whose
  // r_key is (MR index << 8 | 8-bit generation), as Linux fast registration does.
  const bool data_rdma = io.length > 0 && !io.in_capsule;
  if (data_rdma) {
    io.keyed = true;
    io.mr = q.free_mrs.back();
    q.free_mrs.pop_back();
    const uint8_t gen = ++h.mr_counter[static_cast<size_t>(io.mr)];
    io.rkey = (static_cast<uint32_t>(io.mr) << 8) | gen;
    io.va = h.va_base + (static_cast<uint64_t>(rng_.range(1, (1 << 20) - 1)) << 12);
    io.inval = rng_.chance(0.85);
  }
  const QpSide& hq = sim.qp(q.host_qps);
  io.cmd_psn = hq.next_psn;
  io.posted = true;
  issue_order_.push_back(id);

  MsgSpec m;
  m.kind = MsgSpec::kSend;
  m.io = id;
  m.cls_first = kClsCmdFirst;
  m.cls_more = kClsCmdMore;
  if (io.in_capsule && io.fctype == 0x01) {
    m.arena_off = build_sqe(sim, io, static_cast<uint32_t>(c.connect_data), 1024);
    m.arena_len = 64 + 1024;
    m.len = 64 + 1024;
  } else if (io.in_capsule) {
    m.arena_off = build_sqe(sim, io, 0, 0);
    m.arena_len = 64;
    m.len = 64 + io.length;
    m.seed = io.seed;
  } else {
    m.arena_off = build_sqe(sim, io, 0, 0);
    m.arena_len = 64;
    m.len = 64;
  }
  int seg;
  m.forced_pkt = forced_pkt(io, kClsCmdFirst, &seg);
  m.forced_seg = seg;
  sim.post(q.host_qps, m);
}

void NvmeModel::on_message(Sim& sim, int qps, const Emission& last, int64_t t) {
  if (last.io < 0) return;
  const int qi = qps_queue_[static_cast<size_t>(qps)];
  const Queue& q = queues_[static_cast<size_t>(qi)];
  if (qps == q.stor_qps && last.io_cls == kClsCmdMore) {
    target_execute(sim, last.io);
  } else if (qps == q.stor_qps && last.io_cls == kClsCmdFirst) {
    target_execute(sim, last.io);  // single-packet capsule
  } else if (qps == q.host_qps && last.io_cls == kClsCompletion) {
    host_complete(sim, last.io);
  }
  (void)t;
}

void NvmeModel::target_execute(Sim& sim, int id) {
  NvmeIo& io = ios_[static_cast<size_t>(id)];
  Queue& q = queues_[static_cast<size_t>(io.queue)];
  q.sq_head = static_cast<uint16_t>((q.sq_head + 1) % (q.sqsize + 1));
  if (io.incomplete_stage == 0) return;  // lost inside the target: nothing ever happens
  const bool to_host = io.keyed && (io.opcode == kOpRead || io.opcode == kOpIdentify ||
                                    (io.admin && io.opcode == kOpGetLog));
  const bool from_host = io.keyed && !to_host;  // write, admin Connect
  int64_t svc;
  if (io.opcode == kOpRead && !io.admin) svc = svc_.log_range(10000, 500000);
  else if (io.opcode == kOpWrite && !io.admin) svc = io.in_capsule ? svc_.log_range(10000, 300000) : svc_.log_range(10000, 100000);
  else if (io.opcode == kOpFlush && !io.admin) svc = svc_.log_range(50000, 500000);
  else if (io.opcode == kOpKeepAlive) svc = svc_.range(2000, 10000);
  else if (io.fctype == 0x01) svc = svc_.range(20000, 100000);
  else svc = svc_.range(5000, 50000);
  const Ctrl& ctrl = ctrls_[static_cast<size_t>(q.ctrl)];
  if (!io.admin && static_cast<size_t>(ctrl.stor) < cfg_.storage_extra_ns.size()) {
    const auto [from, to] = cfg_.storage_extra_window[static_cast<size_t>(ctrl.stor)];
    const int64_t at = sim.now() - static_cast<int64_t>(io_window_start_);
    if (to == 0 || (at >= from && at < to)) svc += cfg_.storage_extra_ns[static_cast<size_t>(ctrl.stor)];
  }
  const int q_stor = q.stor_qps;
  if (to_host && io.status == 0) {
    sim.at(sim.now() + svc, [this, &sim, id, q_stor]() {
      NvmeIo& r = ios_[static_cast<size_t>(id)];
      MsgSpec m;
      m.kind = MsgSpec::kWrite;
      m.len = r.length;
      m.va = r.va;
      m.rkey = r.rkey;
      if (r.admin) {
        m.arena_off = zero_block_;
        m.arena_len = r.length;
      } else {
        m.seed = r.seed;
      }
      m.io = id;
      m.cls_first = kClsDataFirst;
      m.cls_more = kClsDataMore;
      int seg;
      m.forced_pkt = forced_pkt(r, kClsDataFirst, &seg);
      m.forced_seg = seg;
      sim.post(q_stor, m);
      if (r.incomplete_stage < 0) post_completion(sim, id);
    });
  } else if (from_host && io.status == 0) {
    sim.at(sim.now() + svc, [this, &sim, id, q_stor]() {
      NvmeIo& r = ios_[static_cast<size_t>(id)];
      const Ctrl& c = ctrls_[static_cast<size_t>(queues_[static_cast<size_t>(r.queue)].ctrl)];
      ReadOp ro;
      ro.va = r.va;
      ro.key = r.rkey;
      ro.len = r.length;
      ro.io = id;
      if (r.fctype == 0x01) {
        ro.arena_off = c.connect_data;
        ro.arena_len = 1024;
      } else {
        ro.seed = r.seed;
      }
      ro.cls_first = kClsRespFirst;
      ro.cls_more = kClsRespMore;
      ro.forced_pkt = forced_pkt(r, kClsRespFirst, &ro.forced_seg);
      MsgSpec m;
      m.kind = MsgSpec::kRead;
      m.len = r.length;
      m.va = r.va;
      m.rkey = r.rkey;
      m.io = id;
      m.read_op = sim.add_read_op(ro);
      int seg;
      m.forced_pkt = forced_pkt(r, kClsReadReq, &seg);
      m.forced_seg = seg;
      sim.post(q_stor, m);
    });
  } else if (io.incomplete_stage < 0) {
    sim.at(sim.now() + svc, [this, &sim, id]() { post_completion(sim, id); });
  }
}

void NvmeModel::on_read_done(Sim& sim, int qps, int read_op, int64_t t) {
  (void)qps;
  (void)t;
  const int id = sim.read_op(read_op).io;
  if (id < 0) return;
  NvmeIo& io = ios_[static_cast<size_t>(id)];
  if (io.incomplete_stage >= 0) return;
  // The data is in the target: write it to media (or consume the Connect data), then reply.
  const int64_t svc = io.admin ? svc_.range(10000, 50000) : svc_.log_range(10000, 300000);
  sim.at(sim.now() + svc, [this, &sim, id]() { post_completion(sim, id); });
}

int64_t NvmeModel::read_prep_ns(Sim& sim, int qps, int read_op) {
  int64_t prep = svc_.range(5000, 50000);  // host data preparation before the READ responses
  const int id = sim.read_op(read_op).io;
  const int qi = qps >= 0 && static_cast<size_t>(qps) < qps_queue_.size() ? qps_queue_[static_cast<size_t>(qps)] : -1;
  if (id >= 0 && qi >= 0 && !ios_[static_cast<size_t>(id)].admin) {
    const Ctrl& c = ctrls_[static_cast<size_t>(queues_[static_cast<size_t>(qi)].ctrl)];
    if (static_cast<size_t>(c.host) < cfg_.host_extra_ns.size()) prep += cfg_.host_extra_ns[static_cast<size_t>(c.host)];
  }
  return prep;
}

uint64_t NvmeModel::build_cqe(Sim& sim, const NvmeIo& io) {
  const Queue& q = queues_[static_cast<size_t>(io.queue)];
  uint8_t c[16] = {0};
  le32(c + 0, io.result);
  le32(c + 4, 0);
  le32(c + 8, static_cast<uint32_t>(q.sq_head) | (static_cast<uint32_t>(q.qid) << 16));
  le32(c + 12, static_cast<uint32_t>(io.cid) | (static_cast<uint32_t>(io.status) << 17));
  return arena_add(sim.arena, c, sizeof c);
}

void NvmeModel::post_completion(Sim& sim, int id) {
  NvmeIo& io = ios_[static_cast<size_t>(id)];
  const Queue& q = queues_[static_cast<size_t>(io.queue)];
  if (io.fctype == 0x01) io.result = ctrls_[static_cast<size_t>(q.ctrl)].cntlid;
  if (io.fctype == 0x04) io.result = io.cdw11 == 0 ? 0x0F0103FFu : 0x00000001u;  // CAP / CSTS.RDY
  MsgSpec m;
  m.kind = MsgSpec::kSend;
  m.len = 16;
  m.arena_off = build_cqe(sim, io);
  m.arena_len = 16;
  m.io = id;
  m.cls_first = m.cls_more = kClsCompletion;
  // nvmet-rdma invalidates the host's r_key remotely when the host asked for it.
  if (io.keyed && io.inval) {
    m.inval = true;
    m.inval_key = io.rkey;
  }
  int seg;
  m.forced_pkt = forced_pkt(io, kClsCompletion, &seg);
  m.forced_seg = seg;
  io.rsp_psn = sim.qp(q.stor_qps).next_psn;
  io.rsp_posted = true;
  sim.post(q.stor_qps, m);
}

void NvmeModel::host_complete(Sim& sim, int id) {
  NvmeIo& io = ios_[static_cast<size_t>(id)];
  Queue& q = queues_[static_cast<size_t>(io.queue)];
  q.free_tags.push_back(io.tag);
  std::sort(q.free_tags.begin(), q.free_tags.end(), std::greater<uint16_t>());
  if (io.mr >= 0) q.free_mrs.push_back(io.mr);
  if (io.fctype == 0x01) q.ready = true;
  const int qi = io.queue;
  if (io.setup_step >= 0) {
    const int ci = q.ctrl;
    ctrls_[static_cast<size_t>(ci)].step = io.setup_step + 1;
    sim.at(sim.now() + svc_.range(3000, 15000), [this, &sim, ci]() { setup_step(sim, ci); });
  }
  dispatch(sim, qi);
}

}  // namespace synth
