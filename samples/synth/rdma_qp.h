// SPDX-License-Identifier: GPL-2.0-or-later
// Discrete-event core and the RC transport: PSN assignment, segmentation at the path MTU,
// ACK coalescing, NAK (PSN sequence error) with go-back-N, RDMA READ responses with the
// "re-issue the READ for the rest" recovery, retransmission timeouts.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <queue>
#include <vector>

#include "common.h"
#include "fabric.h"
#include "packet_encoder.h"

namespace synth {

class Sim;

// The application above a QP (NVMe host/target, NCCL-like flow).
class QpOwner {
 public:
  virtual ~QpOwner() = default;
  // A SEND or RDMA WRITE message was received in order at the responder side `qps`.
  virtual void on_message(Sim& sim, int qps, const Emission& last, int64_t t) = 0;
  // The requester side `qps` received every response of READ `read_op`.
  virtual void on_read_done(Sim& sim, int qps, int read_op, int64_t t) = 0;
  // Delay before the responder side `qps` starts answering READ `read_op`.
  virtual int64_t read_prep_ns(Sim& sim, int qps, int read_op) = 0;
};

// What a READ returns: lives at the responder, described here so a re-executed READ
// reproduces the same bytes.
struct ReadOp {
  uint64_t va = 0;
  uint32_t key = 0;
  uint32_t len = 0;
  int32_t io = -1;
  int32_t resp_msg = -1;
  uint64_t arena_off = 0;
  uint32_t arena_len = 0;
  uint32_t seed = 0;
  int forced_pkt = -1;  // first execution: lose response packet #forced_pkt ...
  int forced_seg = -1;  // ... on this segment
  uint8_t cls_first = kClsNone, cls_more = kClsNone;
};

// A message to post on a QP.
struct MsgSpec {
  enum Kind : uint8_t { kSend, kWrite, kRead } kind = kSend;
  uint32_t len = 0;
  uint64_t arena_off = 0;
  uint32_t arena_len = 0;
  uint32_t seed = 0;
  uint64_t va = 0;    // RETH
  uint32_t rkey = 0;
  bool imm = false;
  uint32_t imm_data = 0;
  bool inval = false;  // SEND with invalidate
  uint32_t inval_key = 0;
  bool solicited = false;
  int32_t io = -1;
  uint8_t cls_first = kClsNone, cls_more = kClsNone;
  int forced_pkt = -1;  // lose the first copy of packet #forced_pkt on segment forced_seg
  int forced_seg = -1;
  int32_t read_op = -1;  // kRead
};

// A request the requester has sent and not yet seen acknowledged.
struct Unit {
  Emission tmpl;
  uint32_t npsn = 1;  // PSNs consumed (READ: number of response packets)
  uint32_t got = 0;   // READ: responses received in order
  int32_t read_op = -1;
};

struct QpSide {
  int ep = 0;
  int peer = -1;
  uint32_t qpn = 0;
  uint16_t sport = 0;
  QpOwner* owner = nullptr;
  // requester
  uint32_t next_psn = 0;
  std::deque<Unit> out;
  int64_t last_progress = 0;
  bool timer_armed = false;
  bool in_retry = false;
  // responder
  uint32_t epsn = 0;
  uint32_t msn = 0;
  bool nak_gap = false;
  int unacked = 0;
  int pending_bursts = 0;   // READ responses scheduled but not yet sent
  bool deferred_ack = false;  // responses leave in order: ACK/NAK wait for pending READs
  bool deferred_nak = false;
  int64_t busy_until = 0;
  uint32_t retries = 0;
  bool cnp_sent = false;  // notification point: a CNP went out, at last_cnp
  int64_t last_cnp = 0;
};

// Truth about one data message (what the sender meant to send).
struct MsgInfo {
  int32_t qps;        // sending side of the data packets = flow
  uint8_t space;      // kSpaceReq / kSpaceResp
  uint8_t kind;       // 0 write, 1 send, 2 read_response
  uint32_t first_psn;
  uint32_t npkts;
};

struct SimConfig {
  uint32_t pmtu = 4096;
  int ack_every = 4;           // coalesce: ACK after this many unacknowledged packets
  int64_t rto_ns = 400000;     // retransmission timeout
  uint32_t max_timeouts = 64;  // consecutive timeouts before a QP gives up (error state)
  uint32_t snaplen = 262144;
  // DCQCN's notification point: a data packet arriving CE-marked makes its receiver send a CNP
  // to the sender's QP, at most one per QP per cnp_gap_ns (mlx5's default 50 us ... 4 us;
  // the sender's rate reaction is not modelled).
  bool cnp = false;
  int64_t cnp_gap_ns = 50000;
};

class Sim {
 public:
  Sim(const SimConfig& cfg, Fabric& fabric, const WireConfig& wire);

  // --- event loop ---
  void at(int64_t t, std::function<void()> fn);
  void run(int64_t hard_stop);
  int64_t now() const { return now_; }

  // --- QPs ---
  // Creates a connected QP pair; returns the index of side a (side b = a + 1).
  int connect(int ep_a, int ep_b, uint32_t qpn_a, uint32_t qpn_b, uint32_t psn_a, uint32_t psn_b,
              uint16_t sport_a, uint16_t sport_b, QpOwner* owner);
  QpSide& qp(int i) { return qps_[static_cast<size_t>(i)]; }
  const std::vector<QpSide>& qps() const { return qps_; }
  // Posts a message on requester side `qps`; returns the data message id.
  int post(int qps, const MsgSpec& m);
  int add_read_op(const ReadOp& r) {
    read_ops_.push_back(r);
    return static_cast<int>(read_ops_.size() - 1);
  }
  ReadOp& read_op(int i) { return read_ops_[static_cast<size_t>(i)]; }
  // Unreliable datagram (RDMA CM MAD to QP1), never lost; returns the arrival time.
  int64_t send_ud(int src_ep, int dst_ep, uint64_t arena_off, uint32_t len);

  uint32_t npkts(uint32_t len) const { return len == 0 ? 1 : (len + cfg_.pmtu - 1) / cfg_.pmtu; }
  const SimConfig& config() const { return cfg_; }

  std::vector<uint8_t> arena;
  std::vector<MsgInfo> msgs;
  Fabric& fabric;
  WireConfig wire;

 private:
  struct Ev {
    int64_t t;
    uint64_t seq;
    uint8_t kind;
    uint32_t a;
    uint32_t b;
    bool operator>(const Ev& o) const { return t != o.t ? t > o.t : seq > o.seq; }
  };
  enum : uint8_t { kArrive, kTimer, kBurst, kApp };
  struct Burst {
    int qps;
    uint32_t psn;
    uint32_t off;  // byte offset into the READ's data
    uint32_t len;
    int read_op;
    bool resend;
  };
  void push(int64_t t, uint8_t kind, uint32_t a, uint32_t b);
  void transmit(int qps, Emission e, int forced_seg);
  void send_unit(int qps, const Unit& u, bool resend, int forced_seg);
  void arm_timer(int qps);
  void on_timer(int qps);
  void on_arrive(uint32_t em, int qps);
  void responder(int qps, const Emission& e);
  void requester(int qps, const Emission& e);
  void send_ack(int qps);
  // The receiving side `qps` got a CE-marked data packet: a CNP to its peer, rate-limited.
  void notify_congestion(int qps);
  void send_nak(int qps);
  Emission base(int qps) const;
  void ack_upto(int qps, uint32_t a, bool* retried);
  void retry_from(int qps, uint32_t p);
  void run_burst(uint32_t b);

  SimConfig cfg_;
  int64_t now_ = 0;
  uint64_t seq_ = 0;
  std::priority_queue<Ev, std::vector<Ev>, std::greater<Ev>> pq_;
  std::vector<std::function<void()>> app_;
  std::vector<uint32_t> app_free_;
  std::vector<QpSide> qps_;
  std::vector<ReadOp> read_ops_;
  std::vector<Burst> bursts_;
};

}  // namespace synth
