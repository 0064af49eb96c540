// SPDX-License-Identifier: GPL-2.0-or-later
// Shared small types of rdmatel-synth: deterministic RNG, PSN arithmetic, BTH opcodes and
// the Emission record (one transmitted packet copy, plus the generator's own knowledge of
// what it is — the ground truth is computed from these records, never from packet bytes).
#pragma once

#include <cstdint>
#include <string>

namespace synth {

// Our own PRNG and distributions: std::uniform_*_distribution output is implementation
// defined, and captures must be byte-identical for a seed on every platform.
class Rng {
 public:
  explicit Rng(uint64_t seed = 1) { reseed(seed); }
  void reseed(uint64_t seed) {
    uint64_t x = seed;
    for (auto& w : s_) w = splitmix(x);
  }
  uint64_t next() {
    const uint64_t r = rotl(s_[1] * 5, 7) * 9;
    const uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return r;
  }
  // Uniform integer in [lo, hi] (inclusive).
  int64_t range(int64_t lo, int64_t hi) {
    if (hi <= lo) return lo;
    const uint64_t span = static_cast<uint64_t>(hi - lo) + 1;
    return lo + static_cast<int64_t>(next() % span);
  }
  // Uniform double in [0, 1).
  double unit() { return static_cast<double>(next() >> 11) * (1.0 / 9007199254740992.0); }
  bool chance(double p) { return p > 0 && unit() < p; }
  // Exponential with the given mean (for Poisson arrivals).
  double exp_mean(double mean);
  // Log-uniform in [lo, hi]: service times spread over orders of magnitude.
  int64_t log_range(int64_t lo, int64_t hi);

  static uint64_t splitmix(uint64_t& x) {
    uint64_t z = (x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }

 private:
  static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  uint64_t s_[4];
};

// 24-bit PSN serial arithmetic (IBA 9.7.1): "newer" means 1..2^23-1 ahead.
constexpr uint32_t kPsnMask = 0xFFFFFF;
inline uint32_t psn_add(uint32_t p, int64_t n) {
  return static_cast<uint32_t>((static_cast<int64_t>(p) + n) & kPsnMask);
}
inline uint32_t psn_diff(uint32_t a, uint32_t b) { return (a - b) & kPsnMask; }  // a - b mod 2^24
inline bool psn_newer(uint32_t a, uint32_t b) {  // a newer than b
  const uint32_t d = psn_diff(a, b);
  return d >= 1 && d < (1u << 23);
}
inline bool psn_in(uint32_t p, uint32_t first, uint32_t count) {
  return psn_diff(p, first) < count;
}

// BTH opcodes (RC 0x00-0x1F, UD 0x60-0x7F).
namespace op {
constexpr uint8_t SEND_FIRST = 0x00, SEND_MIDDLE = 0x01, SEND_LAST = 0x02, SEND_LAST_IMM = 0x03,
                  SEND_ONLY = 0x04, SEND_ONLY_IMM = 0x05, WRITE_FIRST = 0x06, WRITE_MIDDLE = 0x07,
                  WRITE_LAST = 0x08, WRITE_LAST_IMM = 0x09, WRITE_ONLY = 0x0A,
                  WRITE_ONLY_IMM = 0x0B, READ_REQ = 0x0C, READ_RESP_FIRST = 0x0D,
                  READ_RESP_MIDDLE = 0x0E, READ_RESP_LAST = 0x0F, READ_RESP_ONLY = 0x10,
                  ACK = 0x11, SEND_LAST_INV = 0x16, SEND_ONLY_INV = 0x17, UD_SEND_ONLY = 0x64,
                  CNP = 0x81;  // RoCEv2 congestion notification: BTH (BECN set) + 16 reserved bytes
// Not a BTH opcode: the generator's marker for an 802.1Qbb PFC frame seen at one point
// (Emission::y indexes Fabric::pfc_frames); never on a RoCE packet.
constexpr uint8_t PFC_FRAME = 0xFF;
}  // namespace op

inline bool is_send_op(uint8_t o) { return o <= 0x05 || o == op::SEND_LAST_INV || o == op::SEND_ONLY_INV; }
inline bool is_write_op(uint8_t o) { return o >= 0x06 && o <= 0x0B; }
inline bool is_read_resp_op(uint8_t o) { return o >= 0x0D && o <= 0x10; }
// First packet of a message (FIRST or ONLY of its kind).
inline bool is_first_op(uint8_t o) {
  switch (o) {
    case op::SEND_FIRST: case op::SEND_ONLY: case op::SEND_ONLY_IMM: case op::SEND_ONLY_INV:
    case op::WRITE_FIRST: case op::WRITE_ONLY: case op::WRITE_ONLY_IMM:
    case op::READ_RESP_FIRST: case op::READ_RESP_ONLY:
      return true;
    default:
      return false;
  }
}
inline bool is_last_op(uint8_t o) {
  switch (o) {
    case op::SEND_LAST: case op::SEND_LAST_IMM: case op::SEND_ONLY: case op::SEND_ONLY_IMM:
    case op::SEND_LAST_INV: case op::SEND_ONLY_INV: case op::WRITE_LAST: case op::WRITE_LAST_IMM:
    case op::WRITE_ONLY: case op::WRITE_ONLY_IMM: case op::READ_RESP_LAST: case op::READ_RESP_ONLY:
      return true;
    default:
      return false;
  }
}

// What a packet is to an NVMe I/O: the truth needs "first copy of class X at point P".
enum IoClass : uint8_t {
  kClsNone = 0,
  kClsCmdFirst,    // SEND FIRST/ONLY carrying the SQE
  kClsCmdMore,     // SEND MIDDLE/LAST of an in-capsule command
  kClsDataFirst,   // RDMA WRITE FIRST/ONLY of controller-to-host data
  kClsDataMore,
  kClsReadReq,     // RDMA READ REQUEST fetching host data
  kClsRespFirst,   // READ RESPONSE FIRST/ONLY
  kClsRespMore,
  kClsCompletion,  // SEND (ONLY / ONLY_INV) carrying the CQE
};

// PSN space of a data packet: requests (SEND/WRITE, and READ REQUEST ranges) vs READ
// RESPONSEs, which carry the PSNs of the peer's READ REQUEST, i.e. another sequence.
enum Space : uint8_t { kSpaceReq = 0, kSpaceResp = 1, kSpaceCtl = 2 };

// One transmitted packet copy. The wire image is derived from it lazily at write time, so
// even multi-million-packet captures need only these compact records.
struct Emission {
  // --- wire ---
  uint16_t src_ep = 0, dst_ep = 0;
  uint16_t sport = 0;
  uint16_t ip_id = 0;
  uint8_t opcode = 0;
  uint8_t ack_req = 0;  // BTH A bit
  uint8_t solicited = 0;
  uint8_t space = kSpaceCtl;
  uint32_t dst_qpn = 0;
  uint32_t psn = 0;
  uint32_t pay_len = 0;   // payload bytes on the wire, pad excluded
  uint64_t reth_va = 0;   // RETH virtual address
  uint32_t reth_key = 0;  // RETH r_key
  uint32_t reth_len = 0;  // RETH DMA length
  uint32_t x = 0;         // AETH (syndrome<<24 | MSN), ImmDt, IETH r_key or DETH Q_Key
  uint32_t y = 0;         // DETH source QP
  // Payload = arena[arena_off .. arena_off+arena_len) of the message, then a pattern
  // seeded by `seed`; this packet carries message bytes [msg_off, msg_off+pay_len).
  uint64_t arena_off = 0;
  uint32_t arena_len = 0;
  uint32_t msg_off = 0;
  uint32_t seed = 0;
  // --- generator knowledge (truth) ---
  int32_t qps = -1;   // sending QP side (flow id), -1 for UD/CM
  int32_t msg = -1;   // data message id, -1 if not a data packet
  int32_t io = -1;    // NVMe I/O id
  uint8_t io_cls = kClsNone;
  uint8_t resend = 0;  // a retransmitted copy (go-back-N, re-executed READ, re-issued READ)
  uint8_t ce_arrived = 0;  // reached its destination marked congestion experienced (--ecn-mark)
  uint32_t read_npsn = 0;  // READ REQUEST: PSNs it consumes
};

std::string ip_to_string(const uint8_t ip[16], bool v6);

// --pfc-pause / --pfc-storm: pause frames (and the resume) of a burst are this far apart, well
// within one pause of 0xFFFF quanta (335.5 us at 100 Gb/s): the priority stays paused.
constexpr int64_t kPfcRefreshNs = 100000;

// An 802.1Qbb priority flow control frame as one observation point records it.
struct PfcFrame {
  int point = 0;
  uint8_t enabled = 0;       // class-enable vector: bit p = priority p
  uint16_t quanta[8] = {};   // pause time per priority, 512 bit times each (0: resume)
};

}  // namespace synth
