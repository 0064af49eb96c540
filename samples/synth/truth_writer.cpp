// SPDX-License-Identifier: GPL-2.0-or-later
#include "truth_writer.h"

#include <algorithm>
#include <array>
#include <cinttypes>
#include <cstdio>
#include <map>
#include <string>
#include <tuple>
#include <unordered_map>

namespace synth {
namespace {

// ns difference as microseconds with exactly three decimals (exact, no floating point).
std::string us3(int64_t ns) {
  char b[48];
  const bool neg = ns < 0;
  const uint64_t a = neg ? static_cast<uint64_t>(-ns) : static_cast<uint64_t>(ns);
  std::snprintf(b, sizeof b, "%s%" PRIu64 ".%03" PRIu64, neg ? "-" : "", a / 1000, a % 1000);
  return b;
}

struct Sight {
  int64_t stamp = 0;
  uint32_t frame = 0;  // 0: not seen
};

constexpr int kCls = 9;  // IoClass values

struct MsgRec {
  uint32_t packets = 0, retrans_packets = 0;
  uint64_t bytes = 0, retrans_bytes = 0;
  int64_t first_ns = 0, last_ns = 0;
  uint32_t first_frame = 0, last_frame = 0;
  uint32_t distinct = 0;
  uint64_t bitmap_off = 0;
  bool used = false;
};

struct FlowRec {
  uint64_t packets = 0, bytes = 0, retrans_packets = 0, retrans_bytes = 0, naks = 0, oos = 0;
  uint64_t ce = 0, cnps = 0;  // the congestion timeline: CE-marked data packets, CNPs to the sender
};

// SPEC §6 ECN per flow (source IP, destination IP, destination QPN) and point: every RoCE
// packet of the flow, CE-marked ones, CNPs it carries.
struct EcnRec {
  uint64_t packets = 0, ce = 0, cnps = 0;
};

struct PsnState {
  bool valid = false;
  uint32_t newest = 0;
};

class Out {
 public:
  explicit Out(std::FILE* f) : f_(f) {}
  void s(const std::string& x) { buf_ += x; flush_if(); }
  void raw(const char* x) { buf_ += x; flush_if(); }
  void key(const char* k) { buf_ += '"'; buf_ += k; buf_ += "\":"; }
  void str(const char* k, const std::string& v) {
    key(k);
    buf_ += '"';
    for (char c : v) {
      if (c == '"' || c == '\\') buf_ += '\\';
      if (static_cast<unsigned char>(c) < 0x20) continue;
      buf_ += c;
    }
    buf_ += '"';
  }
  void num(const char* k, uint64_t v) {
    key(k);
    buf_ += std::to_string(v);
  }
  void inum(const char* k, int64_t v) {
    key(k);
    buf_ += std::to_string(v);
  }
  void boolean(const char* k, bool v) {
    key(k);
    buf_ += v ? "true" : "false";
  }
  void rawnum(const char* k, const std::string& v) {
    key(k);
    buf_ += v;
  }
  bool finish() {
    std::fwrite(buf_.data(), 1, buf_.size(), f_);
    buf_.clear();
    return std::ferror(f_) == 0;
  }

 private:
  void flush_if() {
    if (buf_.size() > (1u << 20)) {
      std::fwrite(buf_.data(), 1, buf_.size(), f_);
      buf_.clear();
    }
  }
  std::FILE* f_;
  std::string buf_;
};

}  // namespace

int64_t choose_cut(const Fabric& fabric, int64_t target) {
  std::vector<std::pair<int64_t, int64_t>> iv;
  // (message, point) spans
  std::unordered_map<uint64_t, std::pair<int64_t, int64_t>> span;
  std::unordered_map<int32_t, std::pair<int64_t, int64_t>> cmd;
  for (size_t p = 0; p < fabric.obs.size(); ++p) {
    for (const Obs& o : fabric.obs[p]) {
      const Emission& e = fabric.emissions[o.em];
      if (e.msg >= 0) {
        const uint64_t k = (static_cast<uint64_t>(e.msg) << 2) | p;
        auto it = span.find(k);
        if (it == span.end()) span.emplace(k, std::make_pair(o.t, o.t));
        else {
          it->second.first = std::min(it->second.first, o.t);
          it->second.second = std::max(it->second.second, o.t);
        }
      }
      if (e.io >= 0 && (e.io_cls == kClsCmdFirst || e.io_cls == kClsCmdMore)) {
        auto it = cmd.find(e.io);
        if (it == cmd.end()) cmd.emplace(e.io, std::make_pair(o.t, o.t));
        else {
          it->second.first = std::min(it->second.first, o.t);
          it->second.second = std::max(it->second.second, o.t);
        }
      }
    }
  }
  for (const auto& kv : span) iv.push_back(kv.second);
  for (const auto& kv : cmd) iv.push_back(kv.second);
  std::sort(iv.begin(), iv.end());
  int64_t cand = target;
  for (const auto& x : iv) {
    if (x.first >= cand) break;
    if (x.second >= cand) cand = x.second + 1;
  }
  return cand;
}

// SPEC §6 paths: per flow (source IP, destination IP, destination QPN) and hop between two
// consecutive points of a packet's path. Every copy the generator emitted is followed through
// the points that recorded it (in passage order, which is the path's order): each pair of
// consecutive sightings is a hop the copy made, with delay = (stamp at B - B's clock offset) -
// (stamp at A - A's clock offset), i.e. the delay the fabric applied plus the stamp jitter; a
// copy whose last sighting is not the last point of its direction was lost on the hop to the
// next point (random loss, a lossy path, --drop-between).
static void write_hops(Out& out, const Fabric& fabric) {
  struct Hop {
    uint64_t packets = 0, lost = 0, delivered = 0;
    int64_t min_ns = 0, max_ns = 0;
    double sum_ns = 0;
  };
  struct Sighting {
    int64_t t, stamp;
    size_t point;
  };
  const size_t np = fabric.obs.size();
  std::vector<std::vector<Sighting>> by_em(fabric.emissions.size());
  for (size_t p = 0; p < np; ++p)
    for (const Obs& o : fabric.obs[p]) by_em[o.em].push_back(Sighting{o.t, o.stamp, p});
  std::map<std::tuple<std::string, std::string, uint32_t, size_t, size_t>, Hop> hops;
  for (size_t em = 0; em < by_em.size(); ++em) {
    std::vector<Sighting>& v = by_em[em];
    const Emission& e = fabric.emissions[em];
    if (v.empty() || e.opcode == op::PFC_FRAME) continue;  // a PFC frame stays on its link
    std::stable_sort(v.begin(), v.end(), [](const Sighting& a, const Sighting& b) { return a.t < b.t; });
    const Endpoint& src = fabric.endpoints[e.src_ep];
    const std::string& s_ip = src.ip_str;
    const std::string& d_ip = fabric.endpoints[e.dst_ep].ip_str;
    for (size_t i = 0; i + 1 < v.size(); ++i) {
      Hop& h = hops[{s_ip, d_ip, e.dst_qpn, v[i].point, v[i + 1].point}];
      const int64_t d = (v[i + 1].stamp - fabric.clock_offset(v[i + 1].point)) - (v[i].stamp - fabric.clock_offset(v[i].point));
      if (h.delivered == 0) h.min_ns = h.max_ns = d;
      h.min_ns = std::min(h.min_ns, d);
      h.max_ns = std::max(h.max_ns, d);
      h.sum_ns += static_cast<double>(d);
      ++h.delivered;
      ++h.packets;
    }
    // Point ids run side 0 -> side 1: a side-0 sender's packets pass them in increasing order.
    const size_t last = v.back().point;
    const bool up = src.side == 0;
    if (up ? last + 1 < np : last > 0) {
      Hop& h = hops[{s_ip, d_ip, e.dst_qpn, last, up ? last + 1 : last - 1}];
      ++h.packets;
      ++h.lost;
    }
  }
  const auto& pts = fabric.points();
  bool first = true;
  for (const auto& [k, h] : hops) {
    const auto& [s_ip, d_ip, qpn, from, to] = k;
    out.raw(first ? "\n{" : ",\n{");
    first = false;
    out.str("src", s_ip);
    out.raw(",");
    out.str("dst", d_ip);
    out.raw(",");
    out.num("dst_qpn", qpn);
    out.raw(",");
    out.str("from_point", pts[from].name);
    out.raw(",");
    out.str("to_point", pts[to].name);
    out.raw(",");
    out.num("packets", h.packets);
    out.raw(",");
    out.num("lost", h.lost);
    out.raw(",");
    out.num("delivered", h.delivered);
    if (h.delivered) {
      out.raw(",");
      out.inum("min_ns", h.min_ns);
      out.raw(",");
      out.inum("max_ns", h.max_ns);
      char b[64];
      std::snprintf(b, sizeof b, "%.3f", h.sum_ns / static_cast<double>(h.delivered));
      out.raw(",");
      out.rawnum("avg_ns", b);
    }
    out.raw("}");
  }
}

bool write_truth(const std::string& path, const TruthMeta& meta, const Fabric& fabric, const Sim& sim,
                 const NvmeModel* nvme, const std::vector<std::pair<uint8_t, uint32_t>>& frames) {
  const size_t np = fabric.obs.size();
  // Frame number of every sighting.
  std::vector<std::vector<uint32_t>> frame_of(np);
  for (size_t p = 0; p < np; ++p) frame_of[p].assign(fabric.obs[p].size(), 0);
  for (size_t i = 0; i < frames.size(); ++i) frame_of[frames[i].first][frames[i].second] = static_cast<uint32_t>(i + 1);

  const auto& qps = sim.qps();
  const size_t nio = nvme ? nvme->ios().size() : 0;
  std::vector<Sight> sight(nio * np * kCls);
  auto S = [&](size_t io, size_t p, int cls) -> Sight& { return sight[(io * np + p) * kCls + static_cast<size_t>(cls)]; };

  const size_t nmsg = sim.msgs.size();
  std::vector<MsgRec> mrec(nmsg * np);
  std::vector<uint64_t> bitmaps;
  std::vector<PsnState> psn(qps.size() * np * 2);
  std::map<std::tuple<int, size_t, int64_t>, FlowRec> flows;  // (flow, point, period)
  std::map<std::pair<int, size_t>, std::vector<uint32_t>> naks;  // (flow, point) -> NAK PSNs
  std::map<std::tuple<std::string, std::string, uint32_t, size_t>, EcnRec> ecn;  // (src, dst, dst_qpn, point)
  std::map<std::tuple<std::string, std::string, size_t>, uint64_t> cnp_pairs;   // (src, dst, point)
  // (point, period) -> pause frames pausing priority q (index q), and pausing any (index 8)
  std::map<std::pair<size_t, int64_t>, std::array<uint64_t, 9>> pfc_pauses;
  uint64_t nak_total = 0, packets = 0;

  std::vector<uint32_t> by_stamp;
  for (size_t p = 0; p < np; ++p) {
    const auto& ob = fabric.obs[p];
    // SPEC §3: results are those of the point's packets sorted by their stamps, whatever
    // the file order. Stable, so equal stamps keep passage (= file) order; every "first
    // copy", message first/last packet and retransmission / out-of-sequence decision below
    // follows this order. Frame numbers stay file positions.
    by_stamp.resize(ob.size());
    for (size_t i = 0; i < ob.size(); ++i) by_stamp[i] = static_cast<uint32_t>(i);
    std::stable_sort(by_stamp.begin(), by_stamp.end(),
                     [&ob](uint32_t a, uint32_t b) { return ob[a].stamp < ob[b].stamp; });
    for (const uint32_t i : by_stamp) {
      const Obs& o = ob[i];
      const Emission& e = fabric.emissions[o.em];
      const uint32_t fr = frame_of[p][i];
      ++packets;
      if (e.io >= 0 && e.io_cls != kClsNone) {
        Sight& s = S(static_cast<size_t>(e.io), p, e.io_cls);
        if (!s.frame) s = Sight{o.stamp, fr};
      }
      const int64_t period = (o.stamp / meta.period_ns) * meta.period_ns;
      if (e.opcode == op::PFC_FRAME) {
        const PfcFrame& f = fabric.pfc_frames[e.y];
        std::array<uint64_t, 9>& counts = pfc_pauses[{p, period}];
        bool pause = false;
        for (int q = 0; q < 8; ++q)
          if ((f.enabled >> q & 1) && f.quanta[q]) {
            pause = true;
            ++counts[q];
          }
        if (pause) ++counts[8];
        continue;
      }
      {
        const std::string& s_ip = fabric.endpoints[e.src_ep].ip_str;
        const std::string& d_ip = fabric.endpoints[e.dst_ep].ip_str;
        EcnRec& ec = ecn[{s_ip, d_ip, e.dst_qpn, p}];
        ++ec.packets;
        if (o.ce) ++ec.ce;
        if (e.opcode == op::CNP) {
          ++ec.cnps;
          ++cnp_pairs[{s_ip, d_ip, p}];
          // Sent by the data's receiver: the data flow is its peer side's.
          ++flows[{qps[static_cast<size_t>(e.qps)].peer, p, period}].cnps;
          continue;
        }
      }
      if (e.opcode == op::ACK && ((e.x >> 24) & 0xE0) == 0x60) {
        ++nak_total;
        const int rev = qps[static_cast<size_t>(e.qps)].peer;  // the flow this NAK is about
        naks[{rev, p}].push_back(e.psn);
        ++flows[{rev, p, period}].naks;
        continue;
      }
      if (e.qps < 0) continue;
      if (e.opcode == op::READ_REQ) {
        // A READ consumes a PSN per response packet of the request sequence.
        PsnState& st = psn[(static_cast<size_t>(e.qps) * np + p) * 2 + kSpaceReq];
        const uint32_t end = psn_add(e.psn, static_cast<int64_t>(e.read_npsn) - 1);
        if (!st.valid || psn_newer(end, st.newest)) st = PsnState{true, end};
        continue;
      }
      if (e.msg < 0) continue;
      const MsgInfo& mi = sim.msgs[static_cast<size_t>(e.msg)];
      PsnState& st = psn[(static_cast<size_t>(e.qps) * np + p) * 2 + e.space];
      bool retrans = false, oos = false;
      if (!st.valid) {
        st = PsnState{true, e.psn};
      } else if (psn_newer(e.psn, st.newest)) {
        // READ RESPONSE PSNs jump between READs: a new response message is no gap.
        oos = e.psn != psn_add(st.newest, 1) && !(e.space == kSpaceResp && is_first_op(e.opcode));
        st.newest = e.psn;
      } else {
        retrans = true;
      }
      FlowRec& fr2 = flows[{e.qps, p, period}];
      ++fr2.packets;
      fr2.bytes += e.pay_len;
      if (retrans) {
        ++fr2.retrans_packets;
        fr2.retrans_bytes += e.pay_len;
      }
      if (oos) ++fr2.oos;
      if (o.ce) ++fr2.ce;
      MsgRec& m = mrec[static_cast<size_t>(e.msg) * np + p];
      if (!m.used) {
        m.used = true;
        m.first_ns = m.last_ns = o.stamp;
        m.first_frame = fr;
        m.bitmap_off = bitmaps.size();
        bitmaps.resize(bitmaps.size() + (mi.npkts + 63) / 64, 0);
      }
      ++m.packets;
      m.bytes += e.pay_len;
      if (retrans) {
        ++m.retrans_packets;
        m.retrans_bytes += e.pay_len;
      }
      m.first_ns = std::min(m.first_ns, o.stamp);
      m.last_ns = std::max(m.last_ns, o.stamp);
      m.last_frame = fr;
      const uint32_t k = psn_diff(e.psn, mi.first_psn);
      if (k < mi.npkts) {
        uint64_t& w = bitmaps[m.bitmap_off + k / 64];
        if (!(w & (1ULL << (k % 64)))) {
          w |= 1ULL << (k % 64);
          ++m.distinct;
        }
      }
    }
  }

  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return false;
  Out out(f);
  out.raw("{");
  out.str("generator", "rdmatel-synth");
  out.raw(",");
  out.num("version", 1);
  out.raw(",");
  out.str("scenario", meta.scenario);
  out.raw(",");
  out.num("seed", meta.seed);
  out.raw(",");
  out.num("packets", packets);
  out.raw(",");
  out.num("pmtu", meta.pmtu);
  out.raw(",");
  out.boolean("routed", fabric.routed());
  out.raw(",");
  out.num("period_ns", static_cast<uint64_t>(meta.period_ns));
  if (meta.cut_ns >= 0) {
    out.raw(",");
    out.num("capture_start_ns", static_cast<uint64_t>(meta.cut_ns));
  }
  out.raw(",");
  out.str("command", meta.command);
  out.raw(",\n\"points\":[");
  const auto& pts = fabric.points();
  for (size_t p = 0; p < np; ++p) {
    out.raw(p ? ",{" : "{");
    out.num("id", p);
    out.raw(",");
    out.str("name", pts[p].name);
    out.raw(",");
    out.str("role", pts[p].role);
    out.raw(",");
    out.inum("clock_offset_ns", fabric.clock_offset(p));
    out.raw(",");
    out.num("capture_dropped", p < meta.capture_dropped.size() ? meta.capture_dropped[p] : 0);
    out.raw("}");
  }
  out.raw("],\n\"ios\":[");

  // --- I/Os ---
  std::vector<char> resent(nio, 0);
  for (const Emission& e : fabric.emissions)
    if (e.io >= 0 && e.resend) resent[static_cast<size_t>(e.io)] = 1;
  bool first_io = true;
  if (nvme) {
    const auto& ios = nvme->ios();
    for (int id : nvme->issue_order()) {
      const NvmeIo& io = ios[static_cast<size_t>(id)];
      const size_t u = static_cast<size_t>(id);
      bool seen_cmd = false;
      for (size_t p = 0; p < np; ++p)
        if (S(u, p, kClsCmdFirst).frame || S(u, p, kClsCmdMore).frame) seen_cmd = true;
      if (meta.cut_ns >= 0 && !seen_cmd) continue;  // issued before the capture started
      const auto& q = nvme->queues()[static_cast<size_t>(io.queue)];
      const auto& c = nvme->ctrls()[static_cast<size_t>(q.ctrl)];
      // Roles per I/O: the host-facing port of the host's leaf is its compute side, that of
      // the storage server's leaf its storage side (--cross swaps them for some I/Os). With
      // one point there are no roles: everything refers to that point.
      int compute = 0, storage = -1;
      if (np >= 2) {
        compute = fabric.host_port_point(fabric.endpoints[static_cast<size_t>(c.host_ep)].side);
        storage = fabric.host_port_point(fabric.endpoints[static_cast<size_t>(c.stor_ep)].side);
      }
      out.raw(first_io ? "\n{" : ",\n{");
      first_io = false;
      out.str("op", io.op);
      out.raw(",");
      out.num("opcode", io.opcode);
      if (io.fctype >= 0) {
        out.raw(",");
        out.num("fctype", static_cast<uint64_t>(io.fctype));
      }
      out.raw(",");
      out.boolean("admin", io.admin);
      out.raw(",");
      out.str("host", fabric.endpoints[static_cast<size_t>(c.host_ep)].ip_str);
      out.raw(",");
      out.str("storage", fabric.endpoints[static_cast<size_t>(c.stor_ep)].ip_str);
      out.raw(",");
      out.num("qpn", qps[static_cast<size_t>(q.stor_qps)].qpn);
      out.raw(",");
      out.num("host_qpn", qps[static_cast<size_t>(q.host_qps)].qpn);
      out.raw(",");
      out.num("qid", static_cast<uint64_t>(q.qid));
      out.raw(",");
      out.num("cid", io.cid);
      const bool is_write = io.opcode == 0x01 && !io.admin;
      const bool is_read = io.opcode == 0x02 && !io.admin;
      int64_t t[8] = {0};
      bool h[8] = {false};
      auto setT = [&](int n, int p, int cls) {
        if (p < 0) return;
        const Sight& s = S(u, static_cast<size_t>(p), cls);
        if (s.frame) {
          t[n] = s.stamp;
          h[n] = true;
        }
      };
      const Sight& cmdC = S(u, static_cast<size_t>(compute), kClsCmdFirst);
      const Sight& cplC = S(u, static_cast<size_t>(compute), kClsCompletion);
      const bool complete = cplC.frame != 0;
      if (storage >= 0) {
        out.raw(",");
        out.str("compute_point", pts[static_cast<size_t>(compute)].name);
        out.raw(",");
        out.str("storage_point", pts[static_cast<size_t>(storage)].name);
      }
      out.raw(",");
      out.boolean("complete", complete);
      out.raw(",");
      out.num("status", io.status);
      if (storage >= 0) {
        setT(1, compute, kClsCmdFirst);
        setT(2, storage, kClsCmdFirst);
        if (is_write) {
          setT(3, storage, kClsReadReq);
          setT(4, compute, kClsReadReq);
          setT(5, compute, kClsRespFirst);
          setT(6, storage, kClsCompletion);
          setT(7, compute, kClsCompletion);
        } else {
          if (is_read) setT(3, storage, kClsDataFirst);
          setT(4, storage, kClsCompletion);
          setT(5, compute, kClsCompletion);
        }
        for (int n = 1; n <= 7; ++n) {
          if (!h[n]) continue;
          char k[8];
          std::snprintf(k, sizeof k, "t%d_ns", n);
          out.raw(",");
          out.inum(k, t[n]);
        }
        const int cmpC = is_write ? 7 : 5, cmpS = is_write ? 6 : 4;
        if ((is_read || is_write) && h[3] && h[2]) {
          out.raw(",");
          out.rawnum("dal_us", us3(t[3] - t[2]));
        }
        if (is_write && h[5] && h[4]) {
          out.raw(",");
          out.rawnum("dpl_us", us3(t[5] - t[4]));
        }
        const bool i1 = h[cmpC] && h[1], i2 = h[cmpS] && h[2];
        if (i1) {
          out.raw(",");
          out.rawnum("iol1_us", us3(t[cmpC] - t[1]));
        }
        if (i2) {
          out.raw(",");
          out.rawnum("iol2_us", us3(t[cmpS] - t[2]));
        }
        if (i1 && i2) {
          out.raw(",");
          out.rawnum("rtt_us", us3((t[cmpC] - t[1]) - (t[cmpS] - t[2])));
        }
        if (i1) {
          out.raw(",");
          out.rawnum("iol_us", us3(t[cmpC] - t[1]));
        }
      } else if (cmdC.frame && cplC.frame) {
        out.raw(",");
        out.rawnum("iol_us", us3(cplC.stamp - cmdC.stamp));
      }
      if (cmdC.frame) {
        out.raw(",");
        out.num("cmd_frame", cmdC.frame);
      }
      if (cplC.frame) {
        out.raw(",");
        out.num("rsp_frame", cplC.frame);
      }
      out.raw(",");
      out.boolean("in_capsule", io.in_capsule);
      out.raw(",");
      out.boolean("retransmitted", resent[u] != 0);
      out.raw(",");
      out.num("length", io.length);
      out.raw(",");
      out.num("cmd_psn", io.cmd_psn);
      if (io.rsp_posted) {
        out.raw(",");
        out.num("rsp_psn", io.rsp_psn);
      }
      if (io.keyed) {
        out.raw(",");
        out.num("rkey", io.rkey);
      }
      out.raw("}");
    }
  }
  out.raw("],\n\"messages\":[");

  // --- messages ---
  auto flow_fields = [&](int flow) {
    const QpSide& s = qps[static_cast<size_t>(flow)];
    const QpSide& d = qps[static_cast<size_t>(s.peer)];
    out.str("src", fabric.endpoints[static_cast<size_t>(s.ep)].ip_str);
    out.raw(",");
    out.str("dst", fabric.endpoints[static_cast<size_t>(d.ep)].ip_str);
    out.raw(",");
    out.num("dst_qpn", d.qpn);
  };
  static const char* kinds[] = {"write", "send", "read_response"};
  bool first_msg = true;
  for (size_t mid = 0; mid < nmsg; ++mid) {
    const MsgInfo& mi = sim.msgs[mid];
    for (size_t p = 0; p < np; ++p) {
      const MsgRec& m = mrec[mid * np + p];
      if (!m.used) continue;
      out.raw(first_msg ? "\n{" : ",\n{");
      first_msg = false;
      flow_fields(mi.qps);
      out.raw(",");
      out.str("point", pts[p].name);
      out.raw(",");
      out.str("kind", kinds[mi.kind]);
      const uint32_t last_psn = psn_add(mi.first_psn, static_cast<int64_t>(mi.npkts) - 1);
      out.raw(",");
      out.num("first_psn", mi.first_psn);
      out.raw(",");
      out.num("last_psn", last_psn);
      out.raw(",");
      out.boolean("complete", m.distinct == mi.npkts);
      out.raw(",");
      out.num("packets", m.packets);
      out.raw(",");
      out.num("retrans_packets", m.retrans_packets);
      out.raw(",");
      out.num("bytes", m.bytes);
      out.raw(",");
      out.num("retrans_bytes", m.retrans_bytes);
      out.raw(",");
      out.inum("first_ns", m.first_ns);
      out.raw(",");
      out.inum("last_ns", m.last_ns);
      const int64_t fct = m.last_ns - m.first_ns;
      out.raw(",");
      out.rawnum("fct_us", us3(fct));
      uint64_t nk = 0;
      if (mi.space == kSpaceReq) {
        auto it = naks.find({mi.qps, p});
        if (it != naks.end())
          for (uint32_t x : it->second)
            if (psn_in(x, mi.first_psn, mi.npkts)) ++nk;
      }
      out.raw(",");
      out.num("naks", nk);
      if (fct > 0) {
        char b[64];
        const double fet = static_cast<double>(m.bytes - m.retrans_bytes) * 8.0 * 1e9 / static_cast<double>(fct);
        std::snprintf(b, sizeof b, "%.3f", fet);
        out.raw(",");
        out.rawnum("fet_bps", b);
      }
      const uint32_t orig = m.packets - m.retrans_packets;
      if (orig > 0) {
        char b[64];
        std::snprintf(b, sizeof b, "%.12g", static_cast<double>(nk) / orig);
        out.raw(",");
        out.rawnum("fnr", b);
      }
      out.raw(",");
      out.num("first_frame", m.first_frame);
      out.raw(",");
      out.num("last_frame", m.last_frame);
      out.raw("}");
    }
  }
  out.raw("],\n\"flows\":[");
  bool first_flow = true;
  for (const auto& kv : flows) {
    const auto& [flow, p, period] = kv.first;
    const FlowRec& r = kv.second;
    out.raw(first_flow ? "\n{" : ",\n{");
    first_flow = false;
    flow_fields(flow);
    out.raw(",");
    out.str("point", pts[p].name);
    out.raw(",");
    out.inum("period_start_ns", period);
    out.raw(",");
    out.num("packets", r.packets);
    out.raw(",");
    out.num("bytes", r.bytes);
    out.raw(",");
    out.num("retrans_packets", r.retrans_packets);
    out.raw(",");
    out.num("retrans_bytes", r.retrans_bytes);
    out.raw(",");
    out.num("naks", r.naks);
    out.raw(",");
    out.num("oos_packets", r.oos);
    out.raw(",");
    out.num("ce_packets", r.ce);
    out.raw(",");
    out.num("cnps", r.cnps);
    out.raw(",");
    // Pauses of the flow's priority (every packet carries the tags' PCP); of any where untagged.
    auto pp = pfc_pauses.find({p, period});
    out.num("pfc_pauses", pp == pfc_pauses.end() ? 0 : pp->second[meta.vlan_tags ? meta.pcp : 8]);
    out.raw("}");
  }
  // --- congestion (SPEC §6): ecn per flow and point, cnp per IP pair and point, pfc per point
  // and priority. PFC from the bursts the generator wrote, worked out by hand: at 100 Gb/s (the
  // points record no if_speed) 0xFFFF quanta ask for 65535 x 512 / 100 ns = 335,539 ns each
  // (truncated per frame); a burst with a resume stays paused from its first frame to the
  // resume (N x 100 us), a storm to the expiry of its last pause ((N-1) x 100 us + 335,539 ns).
  out.raw("],\n\"congestion\":[");
  bool first_cong = true;
  auto next_cong = [&] {
    out.raw(first_cong ? "\n{" : ",\n{");
    first_cong = false;
  };
  // The fields an ecn and a cnp record begin with (then a comma).
  auto cong_ends = [&](const char* kind, size_t p, const std::string& s_ip, const std::string& d_ip) {
    next_cong();
    out.str("kind", kind);
    out.raw(",");
    out.str("point", pts[p].name);
    out.raw(",");
    out.str("src", s_ip);
    out.raw(",");
    out.str("dst", d_ip);
    out.raw(",");
  };
  for (const auto& [k, r] : ecn) {
    const auto& [s_ip, d_ip, qpn, p] = k;
    cong_ends("ecn", p, s_ip, d_ip);
    out.num("dst_qpn", qpn);
    out.raw(",");
    if (meta.vlan_tags) {
      out.num("priority", static_cast<uint64_t>(meta.pcp));
      out.raw(",");
    }
    out.num("dscp", static_cast<uint64_t>(meta.dscp));
    out.raw(",");
    out.num("packets", r.packets);
    out.raw(",");
    out.num("ce_packets", r.ce);
    out.raw(",");
    out.num("cnp_packets", r.cnps);
    out.raw("}");
  }
  for (const auto& [k, n] : cnp_pairs) {
    const auto& [s_ip, d_ip, p] = k;
    cong_ends("cnp", p, s_ip, d_ip);
    out.num("cnps", n);
    out.raw("}");
  }
  struct PfcTruth {
    uint64_t frames = 0, pauses = 0, resumes = 0, quanta = 0;
    int64_t pause_ns = 0, longest_ns = 0;
  };
  constexpr int64_t kFullPauseNs = 335539;  // 0xFFFF quanta at 100 Gb/s
  std::map<std::pair<int, int>, PfcTruth> pfc;
  for (const TruthMeta::PfcBurst& b : meta.pfc) {
    PfcTruth& t = pfc[{b.point, b.priority}];
    t.frames += static_cast<uint64_t>(b.frames) + (b.resume ? 1 : 0);
    t.pauses += static_cast<uint64_t>(b.frames);
    t.resumes += b.resume ? 1 : 0;
    t.quanta += static_cast<uint64_t>(b.frames) * 0xFFFF;
    t.pause_ns += b.frames * kFullPauseNs;
    const int64_t length = b.resume ? b.frames * kPfcRefreshNs : (b.frames - 1) * kPfcRefreshNs + kFullPauseNs;
    t.longest_ns = std::max(t.longest_ns, length);
  }
  for (const auto& [k, t] : pfc) {
    next_cong();
    out.str("kind", "pfc");
    out.raw(",");
    out.str("point", pts[static_cast<size_t>(k.first)].name);
    out.raw(",");
    out.num("priority", static_cast<uint64_t>(k.second));
    out.raw(",");
    out.num("frames", t.frames);
    out.raw(",");
    out.num("pause_frames", t.pauses);
    out.raw(",");
    out.num("resume_frames", t.resumes);
    out.raw(",");
    out.num("quanta", t.quanta);
    out.raw(",");
    out.num("pause_ns", static_cast<uint64_t>(t.pause_ns));
    out.raw(",");
    out.num("longest_pause_ns", static_cast<uint64_t>(t.longest_ns));
    out.raw(",");
    out.boolean("storm", t.longest_ns >= 10000000);  // the default --pfc-storm, 10 ms
    out.raw("}");
  }
  out.raw("],\n\"hops\":[");
  write_hops(out, fabric);
  out.raw("],\n");
  out.num("naks", nak_total);
  out.raw(",");
  out.str("notes", meta.notes);
  out.raw("}\n");
  const bool ok = out.finish();
  return std::fclose(f) == 0 && ok;
}

}  // namespace synth
