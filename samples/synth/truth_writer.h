// SPDX-License-Identifier: GPL-2.0-or-later
// Ground truth from the generator's own event log: every packet copy it emitted (with
// what it is: which I/O, which message, original or resend) and every point sighting, in
// each point's stamp order (SPEC §3: never the file order). Nothing here looks at packet bytes.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "fabric.h"
#include "nvme_model.h"
#include "rdma_qp.h"

namespace synth {

struct TruthMeta {
  std::string scenario;
  uint64_t seed = 0;
  std::string notes;
  std::string command;
  uint32_t pmtu = 4096;
  int64_t period_ns = 1000000000;
  int vlan_tags = 0, pcp = 0, dscp = 0;  // every packet's tags and traffic class
  int64_t cut_ns = -1;  // mid-stream capture start, -1 when the capture starts with the traffic
  // The PFC bursts the generator wrote (--pfc-pause, --pfc-storm): the PFC truth follows from
  // them by hand (bursts of one point and priority do not overlap).
  struct PfcBurst {
    int point = 0, priority = 0, frames = 0;
    bool resume = true;
  };
  std::vector<PfcBurst> pfc;
  std::vector<uint64_t> capture_dropped;  // by point: packets left out of the file (--capture-drops)
};

// Earliest time >= target at which no data message (at any point) and no NVMe command
// capsule is partly seen: cutting the capture there leaves only whole messages/commands.
int64_t choose_cut(const Fabric& fabric, int64_t target);

// Writes the .truth.json; `frames` is the file order from Fabric::file_order().
bool write_truth(const std::string& path, const TruthMeta& meta, const Fabric& fabric, const Sim& sim,
                 const NvmeModel* nvme, const std::vector<std::pair<uint8_t, uint32_t>>& frames);

}  // namespace synth
