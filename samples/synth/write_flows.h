// SPDX-License-Identifier: GPL-2.0-or-later
// GPU-to-GPU RDMA WRITE traffic as NCCL produces it: several RC flows between GPU NICs on
// both leaves, messages of 1-256 packets, WRITE and WRITE WITH IMMEDIATE, some SENDs.
#pragma once

#include <cstdint>
#include <vector>

#include "common.h"
#include "rdma_qp.h"

namespace synth {

struct FlowsConfig {
  int flows = 6;
  int messages = 25;            // per flow
  int64_t t_start = 0;
  int64_t duration_ns = 3000000;
  bool psn_wrap = false;        // every QP starts a few PSNs before 0xFFFFFF
  bool wrap_some = false;       // preset: about half the flows start near the wrap
  bool targeted_losses = false;
  int segments = 3;
  uint32_t pmtu = 4096;
  int max_pkts = 256;
};

class WriteFlows : public QpOwner {
 public:
  WriteFlows(const FlowsConfig& cfg, uint64_t seed) : cfg_(cfg), rng_(seed ^ 0x6770u) {}
  // side0/side1: GPU endpoints behind the compute leaf and behind the far leaf.
  void setup(Sim& sim, const std::vector<int>& side0, const std::vector<int>& side1);

  void on_message(Sim&, int, const Emission&, int64_t) override {}
  void on_read_done(Sim&, int, int, int64_t) override {}
  int64_t read_prep_ns(Sim&, int, int) override { return 1000; }

 private:
  FlowsConfig cfg_;
  Rng rng_;
};

}  // namespace synth
