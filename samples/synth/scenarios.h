// SPDX-License-Identifier: GPL-2.0-or-later
// Scenario presets and the run that turns a configuration into FILE.pcapng + truth.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "fabric.h"

namespace synth {

struct Config {
  std::string scenario;
  std::string out;
  std::string command;  // the command line, recorded in the truth
  uint64_t seed = 1;
  // NVMe-oF
  bool nvme = true;
  int ios = 300, hosts = 2, storages = 2, queues_min = 2, queues_max = 3;
  double incomplete = 0.0;
  bool connect = true;
  bool targeted_losses = false;
  bool errors = false;
  int size_profile = 0;
  // RDMA WRITE flows
  int flows = 0, messages = 0;
  int max_msg_pkts = 256;  // longest RDMA message, packets
  bool wrap_some = false;
  // fabric and capture
  int points = 2;  // 1-5, see point_list()
  std::vector<std::pair<std::string, int64_t>> clock_offsets;  // --clock-offset NAME=NS
  struct Drop {
    std::string from, to;  // point names
    double rate = 0;
  };
  std::vector<Drop> drops;  // --drop-between A:B=RATE
  std::vector<Drop> marks;  // --ecn-mark A:B=RATE
  // --capture-drops POINT=RATE: the capture at POINT misses RATE of the packets that passed it (the
  // network delivered them); every interface gets a statistics block with its count at the end.
  std::vector<std::pair<std::string, double>> capture_drops;
  // --pfc-pause POINT:PRIO=N@T: N pause frames (quanta 0xFFFF) 100 us apart from T seconds into
  // the workload, then a resume 100 us after the last; --pfc-storm: the same without the resume.
  struct PfcBurst {
    std::string point;
    int priority = 0;
    int frames = 0;
    double at_s = 0;
    bool resume = true;
  };
  std::vector<PfcBurst> pfc;
  bool routed = false;  // --routed: TTL / hop limit decremented per switch
  bool cross = false;   // --cross: NVMe hosts and storages on both leaves
  double loss = 0.0;
  int vlan = 0;
  int pcp = 3;  // the tags' 802.1p priority
  bool ipv6 = false;
  bool order_blocks = true;
  int64_t jitter_ns = 0;
  uint32_t snaplen = 262144;
  bool psn_wrap = false;
  double duration_s = 0.02;
  uint32_t pmtu = 4096;
  // --max-size GB: the largest capture written. Losses resend whole go-back-N windows, so a
  // lossy flow with many messages can grow to tens of GB; refused before a byte is written.
  double max_size_gb = 16;
  bool flows_far_gpu = false;  // write-flows: far leaf faces GPUs (role compute)
  std::string notes;
  // Injected faults (ground truth for the diagnosis): 1-based host / storage numbers, as in
  // their IPs (host N is 10.1.0.N, storage N is 10.2.0.N).
  std::vector<std::pair<int, int64_t>> slow_storages;  // --slow-storage N=US: + US to its data access
  // --slow-storage N=US@FROM-TO: only for I/Os arriving FROM to TO seconds into the workload
  std::vector<std::pair<double, double>> slow_storage_windows;
  std::vector<std::pair<int, int64_t>> slow_hosts;     // --slow-host N=US: + US to its write-data preparation
  struct PathFault {
    int host = 0, storage = 0;
    int64_t extra_ns = 0;  // each way, on the leaf-spine hop
    double loss = 0;       // per packet and lossy segment, both ways
  };
  std::vector<PathFault> path_faults;  // --slow-path H:S=US, --lossy-path H:S=RATE
};

// The observation points of a configuration, in interface-id order (= path order from
// leaf A to leaf B), with their roles.
std::vector<PointInfo> point_list(const Config& c);

// Fills `c` with preset `name`; false if unknown.
bool apply_preset(const std::string& name, Config& c);
std::vector<std::string> preset_names();
std::string preset_summary(const std::string& name);

struct RunStats {
  uint64_t packets = 0;
  uint64_t emissions = 0;
  uint64_t ios = 0;
  uint64_t messages = 0;
  double seconds = 0;
};

// Generates the capture and its truth; returns 0 on success, prints the reason otherwise.
int generate(const Config& c, RunStats* stats);

}  // namespace synth
