// SPDX-License-Identifier: GPL-2.0-or-later
// NVMe-oF over RDMA, host and target, modelled on Linux nvme-rdma / nvmet-rdma: RDMA CM
// connection per queue, fabrics Connect (admin: data fetched by RDMA READ; I/O queues:
// in-capsule), controller bring-up (Property Get/Set, Identify, Set Features, Get Log
// Page), keep-alives, and reads/writes/flushes with keyed SGLs or in-capsule data.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "common.h"
#include "rdma_qp.h"

namespace synth {

struct NvmeConfig {
  int hosts = 2, storages = 2;
  int queues_min = 2, queues_max = 3;  // I/O queues per host-storage pair
  int ios = 300;                       // I/O-queue commands (read/write/flush)
  int64_t t_start = 0;
  int64_t duration_ns = 20000000;      // span of the I/O arrivals
  bool connect = true;                 // RDMA CM + fabrics Connect + bring-up in the capture
  double incomplete = 0.0;             // fraction of I/Os never completed by the target
  bool targeted_losses = false;        // preset: a designed set of command/data/completion losses
  bool errors = false;                 // preset: a couple of non-zero completion statuses
  bool psn_wrap = false;
  int segments = 3;
  int depth = 32;                      // queue depth (tags per queue)
  uint32_t pmtu = 4096;
  bool ipv6 = false;
  int size_profile = 0;                // 0: 4 KiB-128 KiB mix, 1: small (benchmarks)
  std::vector<int64_t> storage_extra_ns;  // per storage index: added to every data access (DAL)
  std::vector<std::pair<int64_t, int64_t>> storage_extra_window;  // per storage: [from, to) ns into the workload; to 0 = always
  std::vector<int64_t> host_extra_ns;     // per host index: added to every write-data preparation (DPL)
};

struct NvmeIo {
  int queue = -1;
  uint16_t cid = 0;
  uint16_t tag = 0;
  uint8_t opcode = 0;
  int fctype = -1;  // fabrics command type, -1 otherwise
  const char* op = "";
  bool admin = false;
  bool in_capsule = false;
  uint32_t length = 0;
  uint16_t status = 0;
  uint32_t result = 0;
  int incomplete_stage = -1;  // -1 completes; 0 target does nothing; 1 data moved, no CQE
  bool keyed = false;         // keyed SGL with length > 0
  bool inval = false;         // host asked for remote invalidation (SGL id 0x4F)
  uint32_t rkey = 0;
  uint64_t va = 0;
  int mr = -1;
  uint32_t nsid = 0, cdw10 = 0, cdw11 = 0, cdw12 = 0;
  uint64_t slba = 0;
  uint64_t prop_value = 0;
  uint32_t seed = 0;
  uint32_t cmd_psn = 0, rsp_psn = 0;
  bool posted = false, rsp_posted = false;
  int setup_step = -1;  // bring-up script position, -1 for workload commands
  struct Loss {
    uint8_t cls;
    int pkt;
    int seg;
  };
  std::vector<Loss> losses;
  int64_t t_arrival = 0;
};

class NvmeModel : public QpOwner {
 public:
  NvmeModel(const NvmeConfig& cfg, uint64_t seed);
  // Creates endpoints, QPs and schedules all activity.
  void setup(Sim& sim, std::vector<int>& host_eps, std::vector<int>& stor_eps);

  void on_message(Sim& sim, int qps, const Emission& last, int64_t t) override;
  void on_read_done(Sim& sim, int qps, int read_op, int64_t t) override;
  int64_t read_prep_ns(Sim& sim, int qps, int read_op) override;

  struct Queue {
    int ctrl = 0;
    int qid = 0;
    int host_qps = -1, stor_qps = -1;
    uint16_t sqsize = 31;
    uint16_t sq_head = 0;
    std::vector<uint16_t> free_tags;  // sorted descending: back() is the lowest free tag
    std::vector<int> free_mrs;        // LIFO, as the kernel MR pool list
    std::deque<int> waiting;
    bool ready = false;
  };
  struct Ctrl {
    int host = 0, stor = 0;  // indices into hosts_/stors_
    int host_ep = 0, stor_ep = 0;
    uint16_t cntlid = 0;
    std::vector<int> queues;  // [0] admin
    uint64_t connect_data = 0;  // arena offset of the 1024-byte Connect data
    int step = 0;               // bring-up script position
  };

  const std::vector<NvmeIo>& ios() const { return ios_; }
  const std::vector<int>& issue_order() const { return issue_order_; }
  const std::vector<Queue>& queues() const { return queues_; }
  const std::vector<Ctrl>& ctrls() const { return ctrls_; }

 private:
  struct HostState {
    int ep = 0;
    uint64_t va_base = 0;
    std::vector<uint8_t> mr_counter;
  };
  int new_io(int queue, uint8_t opcode, int fctype, const char* name, uint32_t length);
  void submit(Sim& sim, int io);
  void dispatch(Sim& sim, int queue);
  void start_io(Sim& sim, int io);
  void target_execute(Sim& sim, int io);
  void post_completion(Sim& sim, int io);
  void host_complete(Sim& sim, int io);
  void setup_step(Sim& sim, int ctrl);
  void cm_connect(Sim& sim, int queue, int64_t t, std::function<void(int64_t)> done);
  uint64_t build_sqe(Sim& sim, const NvmeIo& io, uint32_t extra_arena_from, uint32_t extra_len);
  uint64_t build_cqe(Sim& sim, const NvmeIo& io);
  uint64_t cm_mad(Sim& sim, uint16_t attr, const Queue& q, bool from_host, uint32_t local_comm,
                  uint32_t remote_comm, uint32_t start_psn);
  int forced_pkt(const NvmeIo& io, uint8_t cls, int* seg) const;
  void plan_workload(Sim& sim);
  void plan_losses();

  NvmeConfig cfg_;
  Rng rng_;      // topology and workload
  Rng svc_;      // service times
  std::vector<HostState> hosts_;
  std::vector<int> stor_eps_;
  std::vector<Ctrl> ctrls_;
  std::vector<Queue> queues_;
  std::vector<NvmeIo> ios_;
  std::vector<int> issue_order_;
  std::vector<int> qps_queue_;  // qps index -> queue
  uint64_t zero_block_ = 0;     // arena offset of zeros used as admin data
  uint64_t io_window_start_ = 0;
  std::vector<int> workload_;   // I/O-queue commands in arrival order
};

}  // namespace synth
