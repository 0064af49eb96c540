// SPDX-License-Identifier: GPL-2.0-or-later
#include "rdma_qp.h"

#include <algorithm>

namespace synth {

Sim::Sim(const SimConfig& cfg, Fabric& f, const WireConfig& w) : fabric(f), wire(w), cfg_(cfg) {}

void Sim::push(int64_t t, uint8_t kind, uint32_t a, uint32_t b) {
  pq_.push(Ev{t, seq_++, kind, a, b});
}

void Sim::at(int64_t t, std::function<void()> fn) {
  uint32_t slot;
  if (!app_free_.empty()) {
    slot = app_free_.back();
    app_free_.pop_back();
    app_[slot] = std::move(fn);
  } else {
    slot = static_cast<uint32_t>(app_.size());
    app_.push_back(std::move(fn));
  }
  push(std::max(t, now_), kApp, slot, 0);
}

void Sim::run(int64_t hard_stop) {
  while (!pq_.empty()) {
    const Ev ev = pq_.top();
    pq_.pop();
    if (ev.t > hard_stop) break;
    now_ = ev.t;
    switch (ev.kind) {
      case kArrive: on_arrive(ev.a, static_cast<int>(ev.b)); break;
      case kTimer: on_timer(static_cast<int>(ev.a)); break;
      case kBurst: run_burst(ev.a); break;
      case kApp: {
        auto fn = std::move(app_[ev.a]);
        app_[ev.a] = nullptr;
        app_free_.push_back(ev.a);
        fn();
        break;
      }
    }
  }
}

int Sim::connect(int ep_a, int ep_b, uint32_t qpn_a, uint32_t qpn_b, uint32_t psn_a, uint32_t psn_b,
                 uint16_t sport_a, uint16_t sport_b, QpOwner* owner) {
  const int ia = static_cast<int>(qps_.size());
  QpSide a, b;
  a.ep = ep_a;
  b.ep = ep_b;
  a.peer = ia + 1;
  b.peer = ia;
  a.qpn = qpn_a;
  b.qpn = qpn_b;
  a.sport = sport_a;
  b.sport = sport_b;
  a.owner = b.owner = owner;
  // Each side's requester starts at its own PSN; the peer's responder expects it.
  a.next_psn = psn_a;
  b.epsn = psn_a;
  b.next_psn = psn_b;
  a.epsn = psn_b;
  qps_.push_back(a);
  qps_.push_back(b);
  return ia;
}

Emission Sim::base(int qps) const {
  const QpSide& q = qps_[static_cast<size_t>(qps)];
  const QpSide& p = qps_[static_cast<size_t>(q.peer)];
  Emission e;
  e.src_ep = static_cast<uint16_t>(q.ep);
  e.dst_ep = static_cast<uint16_t>(p.ep);
  e.sport = q.sport;
  e.dst_qpn = p.qpn;
  e.qps = qps;
  return e;
}

void Sim::transmit(int qps, Emission e, int forced_seg) {
  const uint32_t wl = wire_len(wire, e);
  const int64_t arr = fabric.transmit(e, now_, forced_seg, false, wl);
  if (arr >= 0)
    push(arr, kArrive, static_cast<uint32_t>(fabric.emissions.size() - 1),
         static_cast<uint32_t>(qps_[static_cast<size_t>(qps)].peer));
}

void Sim::send_unit(int qps, const Unit& u, bool resend, int forced_seg) {
  Emission e = u.tmpl;
  e.resend = resend ? 1 : 0;
  transmit(qps, e, forced_seg);
}

int Sim::post(int qps, const MsgSpec& m) {
  QpSide& q = qps_[static_cast<size_t>(qps)];
  if (q.out.empty()) q.last_progress = now_;
  const uint32_t n = npkts(m.len);
  const int msg_id = static_cast<int>(msgs.size());
  if (m.kind == MsgSpec::kRead) {
    Emission e = base(qps);
    e.opcode = op::READ_REQ;
    e.psn = q.next_psn;
    e.ack_req = 1;
    e.reth_va = m.va;
    e.reth_key = m.rkey;
    e.reth_len = m.len;
    e.space = kSpaceReq;
    e.io = m.io;
    e.io_cls = kClsReadReq;
    e.read_npsn = n;
    e.y = static_cast<uint32_t>(m.read_op);
    msgs.push_back(MsgInfo{q.peer, kSpaceResp, 2, q.next_psn, n});
    read_ops_[static_cast<size_t>(m.read_op)].resp_msg = msg_id;
    Unit u;
    u.tmpl = e;
    u.npsn = n;
    u.read_op = m.read_op;
    q.next_psn = psn_add(q.next_psn, n);
    q.out.push_back(u);
    send_unit(qps, u, false, m.forced_pkt == 0 ? m.forced_seg : -1);
    arm_timer(qps);
    return msg_id;
  }
  msgs.push_back(MsgInfo{qps, kSpaceReq, static_cast<uint8_t>(m.kind == MsgSpec::kWrite ? 0 : 1),
                         q.next_psn, n});
  for (uint32_t k = 0; k < n; ++k) {
    const bool first = k == 0, last = k == n - 1;
    Emission e = base(qps);
    uint8_t o;
    if (m.kind == MsgSpec::kWrite) {
      if (first && last) o = m.imm ? op::WRITE_ONLY_IMM : op::WRITE_ONLY;
      else if (first) o = op::WRITE_FIRST;
      else if (last) o = m.imm ? op::WRITE_LAST_IMM : op::WRITE_LAST;
      else o = op::WRITE_MIDDLE;
      if (first) {
        e.reth_va = m.va;
        e.reth_key = m.rkey;
        e.reth_len = m.len;
      }
    } else {
      if (first && last) o = m.inval ? op::SEND_ONLY_INV : (m.imm ? op::SEND_ONLY_IMM : op::SEND_ONLY);
      else if (first) o = op::SEND_FIRST;
      else if (last) o = m.inval ? op::SEND_LAST_INV : (m.imm ? op::SEND_LAST_IMM : op::SEND_LAST);
      else o = op::SEND_MIDDLE;
    }
    if (last && m.imm) e.x = m.imm_data;
    if (last && m.inval) e.x = m.inval_key;
    e.opcode = o;
    e.psn = q.next_psn;
    e.ack_req = last ? 1 : 0;
    e.solicited = (last && m.solicited) ? 1 : 0;
    e.pay_len = std::min(cfg_.pmtu, m.len - k * cfg_.pmtu);
    if (m.len == 0) e.pay_len = 0;
    e.arena_off = m.arena_off;
    e.arena_len = m.arena_len;
    e.seed = m.seed;
    e.msg_off = k * cfg_.pmtu;
    e.space = kSpaceReq;
    e.msg = msg_id;
    e.io = m.io;
    e.io_cls = first ? m.cls_first : m.cls_more;
    Unit u;
    u.tmpl = e;
    q.next_psn = psn_add(q.next_psn, 1);
    q.out.push_back(u);
    send_unit(qps, u, false, static_cast<int>(k) == m.forced_pkt ? m.forced_seg : -1);
  }
  arm_timer(qps);
  return msg_id;
}

int64_t Sim::send_ud(int src_ep, int dst_ep, uint64_t arena_off, uint32_t len) {
  Endpoint& s = fabric.endpoints[static_cast<size_t>(src_ep)];
  Emission e;
  e.src_ep = static_cast<uint16_t>(src_ep);
  e.dst_ep = static_cast<uint16_t>(dst_ep);
  e.sport = s.cm_port;
  e.opcode = op::UD_SEND_ONLY;
  e.dst_qpn = 1;  // QP1: general services (CM)
  e.psn = s.qp1_psn;
  s.qp1_psn = psn_add(s.qp1_psn, 1);
  e.ack_req = 1;
  e.x = 0x80010000;  // well-known GSI Q_Key
  e.y = 1;
  e.pay_len = len;
  e.arena_off = arena_off;
  e.arena_len = len;
  return fabric.transmit(e, now_, -1, true, wire_len(wire, e));
}

void Sim::arm_timer(int qps) {
  QpSide& q = qps_[static_cast<size_t>(qps)];
  if (q.timer_armed || q.out.empty()) return;
  q.timer_armed = true;
  push(std::max(now_, q.last_progress + cfg_.rto_ns), kTimer, static_cast<uint32_t>(qps), 0);
}

void Sim::on_timer(int qps) {
  QpSide& q = qps_[static_cast<size_t>(qps)];
  q.timer_armed = false;
  if (q.out.empty()) return;
  if (now_ - q.last_progress >= cfg_.rto_ns) {
    if (++q.retries > cfg_.max_timeouts) {
      // Retry count exhausted: the QP goes to the error state, as RC does.
      q.out.clear();
      return;
    }
    // Nothing came back for a whole RTO: resend everything from the oldest gap.
    const Unit& u = q.out.front();
    const uint32_t p = u.read_op >= 0 ? psn_add(u.tmpl.psn, u.got) : u.tmpl.psn;
    q.in_retry = false;
    retry_from(qps, p);
  }
  arm_timer(qps);
}

void Sim::on_arrive(uint32_t em, int qps) {
  const Emission e = fabric.emissions[em];  // copy: handlers append emissions
  if (e.ce_arrived && cfg_.cnp && (is_send_op(e.opcode) || is_write_op(e.opcode) || is_read_resp_op(e.opcode)))
    notify_congestion(qps);
  if (e.opcode == op::ACK || is_read_resp_op(e.opcode))
    requester(qps, e);
  else
    responder(qps, e);
}

void Sim::responder(int qps, const Emission& e) {
  QpSide& q = qps_[static_cast<size_t>(qps)];
  if (e.psn == q.epsn) {
    q.nak_gap = false;
    if (e.opcode == op::READ_REQ) {
      const ReadOp& ro = read_ops_[e.y];
      const int64_t start = std::max(now_ + q.owner->read_prep_ns(*this, qps, static_cast<int>(e.y)), q.busy_until);
      q.busy_until = start;
      ++q.pending_bursts;
      bursts_.push_back(Burst{qps, e.psn, static_cast<uint32_t>(e.reth_va - ro.va), e.reth_len,
                              static_cast<int>(e.y), false});
      push(start, kBurst, static_cast<uint32_t>(bursts_.size() - 1), 0);
      q.epsn = psn_add(q.epsn, e.read_npsn);
      ++q.msn;
      q.unacked = 0;  // the responses acknowledge everything before the READ
      return;
    }
    q.epsn = psn_add(q.epsn, 1);
    ++q.unacked;
    if (is_last_op(e.opcode)) {
      q.msn = (q.msn + 1) & kPsnMask;
      q.owner->on_message(*this, qps, e, now_);
    }
    QpSide& q2 = qps_[static_cast<size_t>(qps)];
    if (e.ack_req || q2.unacked >= cfg_.ack_every) send_ack(qps);
  } else if (psn_newer(e.psn, q.epsn)) {
    // A gap: one NAK (PSN sequence error) per gap; everything else is dropped until the
    // expected PSN shows up again.
    if (!q.nak_gap) {
      q.nak_gap = true;
      send_nak(qps);
    }
  } else {
    // Duplicate: a READ is executed again from its PSN, other requests are re-acknowledged.
    if (e.opcode == op::READ_REQ) {
      const ReadOp& ro = read_ops_[e.y];
      const int64_t start = std::max(now_ + q.owner->read_prep_ns(*this, qps, static_cast<int>(e.y)), q.busy_until);
      q.busy_until = start;
      ++q.pending_bursts;
      bursts_.push_back(Burst{qps, e.psn, static_cast<uint32_t>(e.reth_va - ro.va), e.reth_len,
                              static_cast<int>(e.y), true});
      push(start, kBurst, static_cast<uint32_t>(bursts_.size() - 1), 0);
    } else if (e.ack_req) {
      send_ack(qps);
    }
  }
}

void Sim::send_ack(int qps) {
  QpSide& q = qps_[static_cast<size_t>(qps)];
  if (q.pending_bursts > 0) {
    q.deferred_ack = true;
    return;
  }
  Emission e = base(qps);
  e.opcode = op::ACK;
  e.psn = psn_add(q.epsn, -1);
  e.x = (0x1Fu << 24) | (q.msn & kPsnMask);
  q.unacked = 0;
  transmit(qps, e, -1);
}

void Sim::notify_congestion(int qps) {
  QpSide& q = qps_[static_cast<size_t>(qps)];
  if (q.cnp_sent && now_ - q.last_cnp < cfg_.cnp_gap_ns) return;
  q.cnp_sent = true;
  q.last_cnp = now_;
  Emission e = base(qps);  // to the peer's QP: the sender of the marked data
  e.opcode = op::CNP;
  e.psn = 0;
  e.pay_len = 16;
  e.qps = qps;
  fabric.transmit(e, now_, -1, true, wire_len(wire, e));  // never lost; its arrival changes nothing
}

void Sim::send_nak(int qps) {
  QpSide& q = qps_[static_cast<size_t>(qps)];
  if (q.pending_bursts > 0) {
    q.deferred_nak = true;
    return;
  }
  Emission e = base(qps);
  e.opcode = op::ACK;
  e.psn = q.epsn;  // the PSN the responder expects
  e.x = (0x60u << 24) | (q.msn & kPsnMask);
  transmit(qps, e, -1);
}

void Sim::run_burst(uint32_t bi) {
  const Burst b = bursts_[bi];
  QpSide& q = qps_[static_cast<size_t>(b.qps)];
  ReadOp& ro = read_ops_[static_cast<size_t>(b.read_op)];
  const uint32_t n = npkts(b.len);
  for (uint32_t k = 0; k < n; ++k) {
    Emission e = base(b.qps);
    if (n == 1) e.opcode = op::READ_RESP_ONLY;
    else if (k == 0) e.opcode = op::READ_RESP_FIRST;
    else if (k == n - 1) e.opcode = op::READ_RESP_LAST;
    else e.opcode = op::READ_RESP_MIDDLE;
    e.psn = psn_add(b.psn, k);
    e.x = (0x1Fu << 24) | (q.msn & kPsnMask);
    e.pay_len = std::min(cfg_.pmtu, b.len - k * cfg_.pmtu);
    if (b.len == 0) e.pay_len = 0;
    e.arena_off = ro.arena_off;
    e.arena_len = ro.arena_len;
    e.seed = ro.seed;
    e.msg_off = b.off + k * cfg_.pmtu;
    e.space = kSpaceResp;
    e.msg = ro.resp_msg;
    e.io = ro.io;
    e.io_cls = k == 0 ? ro.cls_first : ro.cls_more;
    e.resend = b.resend ? 1 : 0;
    int forced = -1;
    if (!b.resend && b.off == 0 && ro.forced_pkt == static_cast<int>(k)) {
      forced = ro.forced_seg;
      ro.forced_pkt = -1;
    }
    transmit(b.qps, e, forced);
  }
  QpSide& q2 = qps_[static_cast<size_t>(b.qps)];
  if (--q2.pending_bursts == 0) {
    if (q2.deferred_ack) {
      q2.deferred_ack = false;
      send_ack(b.qps);
    }
    if (q2.deferred_nak) {
      q2.deferred_nak = false;
      if (q2.nak_gap) send_nak(b.qps);
    }
  }
}

void Sim::ack_upto(int qps, uint32_t a, bool* retried) {
  QpSide& q = qps_[static_cast<size_t>(qps)];
  bool progress = false;
  while (!q.out.empty()) {
    const Unit& u = q.out.front();
    if (u.read_op >= 0 || psn_newer(u.tmpl.psn, a)) break;
    q.out.pop_front();
    progress = true;
  }
  if (progress) {
    q.last_progress = now_;
    q.in_retry = false;
    q.retries = 0;
  }
  if (!q.out.empty() && q.out.front().read_op >= 0) {
    // An ACK beyond a READ whose responses are missing: they were lost (implied NAK).
    const Unit& u = q.out.front();
    const uint32_t miss = psn_add(u.tmpl.psn, u.got);
    if (!psn_newer(miss, a)) {
      if (!q.in_retry) retry_from(qps, miss);
      *retried = true;
    }
  }
}

void Sim::requester(int qps, const Emission& e) {
  QpSide& q = qps_[static_cast<size_t>(qps)];
  if (e.opcode == op::ACK) {
    const uint32_t syn = e.x >> 24;
    bool retried = false;
    if ((syn & 0xE0) == 0x60) {
      ack_upto(qps, psn_add(e.psn, -1), &retried);
      if (!retried) retry_from(qps, e.psn);
    } else if ((syn & 0xE0) == 0) {
      ack_upto(qps, e.psn, &retried);
    }
    return;
  }
  // READ response: implicitly acknowledges the requests before the READ.
  const uint32_t r = e.psn;
  bool progress = false;
  while (!q.out.empty() && q.out.front().read_op < 0 && psn_newer(r, q.out.front().tmpl.psn)) {
    q.out.pop_front();
    progress = true;
  }
  if (progress) {
    q.last_progress = now_;
    q.in_retry = false;
  }
  if (q.out.empty() || q.out.front().read_op < 0) return;  // stray duplicate
  Unit& u = q.out.front();
  const uint32_t expected = psn_add(u.tmpl.psn, u.got);
  if (r == expected) {
    ++u.got;
    q.last_progress = now_;
    q.in_retry = false;
    q.retries = 0;
    if (u.got == u.npsn) {
      const int ro = u.read_op;
      q.out.pop_front();
      q.owner->on_read_done(*this, qps, ro, now_);
    }
  } else if (psn_newer(r, expected)) {
    // Responses get no NAK: the requester itself asks again for the rest.
    if (!q.in_retry) retry_from(qps, expected);
  }
}

void Sim::retry_from(int qps, uint32_t p) {
  QpSide& q = qps_[static_cast<size_t>(qps)];
  size_t i = 0;
  for (; i < q.out.size(); ++i)
    if (psn_in(p, q.out[i].tmpl.psn, q.out[i].npsn)) break;
  if (i == q.out.size()) return;
  q.in_retry = true;
  q.last_progress = now_;
  for (size_t j = i; j < q.out.size(); ++j) {
    const Unit& u = q.out[j];
    if (j == i && u.read_op >= 0 && p != u.tmpl.psn) {
      // Go-back-N into the middle of a READ: re-issue it for the remaining data, same key.
      const uint32_t k = psn_diff(p, u.tmpl.psn);
      Emission e = u.tmpl;
      e.psn = p;
      e.reth_va += static_cast<uint64_t>(k) * cfg_.pmtu;
      e.reth_len -= k * cfg_.pmtu;
      e.read_npsn = u.npsn - k;
      e.resend = 1;
      transmit(qps, e, -1);
    } else {
      send_unit(qps, u, true, -1);
    }
  }
}

}  // namespace synth
