// SPDX-License-Identifier: GPL-2.0-or-later
// io_quality: tags NVMe-oF-over-RoCEv2 I/Os and measures DAL, DPL, IOL1, IOL2, RTT and iol from
// the first copy of each packet seen at each observation point (SPEC §4).
//
// Matching, per event (a packet is "the same" at every point when its flow and PSN agree):
//  - command: SEND FIRST/ONLY carrying a valid SQE, host→storage; key (queue, CID, PSN). A new
//    PSN with a known CID is a new I/O (CIDs are reused).
//  - data (read) and READ REQUEST (write): storage→host, key (host, storage, RETH r_key = SGL key).
//  - first READ RESPONSE (write): host→storage, PSN = the READ REQUEST's PSN.
//  - completion: 16-byte SEND storage→host, CID on the paired queue; when the two directions
//    are not paired yet, the unique queue with that CID outstanding (IETH key to disambiguate).
// At each point, events are matched in that point's packet order: an event goes to the oldest
// I/O whose command this point has seen and whose event this point has not.
// An I/O is final when its completion has been seen wherever its command was and every point has
// moved past it by the reorder window; or after the I/O timeout; or at the end of the capture.
#pragma once

#include <deque>
#include <memory>
#include <unordered_map>
#include <vector>

#include "engine/core/metric_plugin.h"
#include "engine/core/records.h"
#include "engine/metrics/io_quality/io_state.h"

namespace rdmatel::io_quality {

struct IoQualityStats {
  uint64_t commands = 0;
  uint64_t completions_matched = 0;
  uint64_t orphan_completions = 0;
  uint64_t ambiguous_completions = 0;
  uint64_t unparseable_capsules = 0;
  uint64_t unconfirmed_dropped = 0;  ///< commands on queues never confirmed as NVMe
  uint64_t evicted = 0;
};

class IoQualityPlugin final : public MetricPlugin {
 public:
  explicit IoQualityPlugin(const EngineConfig& cfg) : cfg_(cfg) {}
  const char* name() const override { return "io_quality"; }
  void on_packet(EngineContext& ctx, const PacketContext& p) override;
  void on_housekeeping(EngineContext& ctx) override;
  void finish(EngineContext& ctx) override;
  const IoQualityStats& stats() const { return stats_; }

 private:
  void on_send(EngineContext& ctx, const PacketContext& p);
  void on_command(EngineContext& ctx, const PacketContext& p, const NvmeSqe& sqe);
  void on_completion(EngineContext& ctx, const PacketContext& p, const NvmeCqe& cqe);
  void on_keyed_event(EngineContext& ctx, const PacketContext& p, Stage stage);
  void on_read_response(EngineContext& ctx, const PacketContext& p);

  Queue* queue_of_command_flow(Flow& flow) const;
  Queue& ensure_queue(EngineContext& ctx, Flow& flow);
  /// Records the first copy of `stage` at the packet's point; notes copies. Returns true when new.
  bool observe(EngineContext& ctx, Io& io, Stage stage, const PacketContext& p, bool copy_note = true);
  Io* new_io();
  void finalize(EngineContext& ctx, Io& io, IoEnd end);
  void release(Io& io);
  IoRecord build_record(EngineContext& ctx, const Io& io, bool provisional, IoEnd end) const;
  void note(EngineContext& ctx, uint64_t frame, NoteKind kind, uint64_t ref, uint32_t detail = 0);
  bool ready(EngineContext& ctx, const Io& io) const;
  bool timed_out(EngineContext& ctx, const Io& io) const;

  const EngineConfig& cfg_;
  std::deque<Queue> queues_;
  std::unordered_map<PairValueKey, std::vector<Io*>, PairValueKeyHash> by_key_;
  std::unordered_map<uint64_t, Io*> by_read_psn_;  ///< (command flow, READ REQUEST PSN)
  std::deque<Io> pool_;
  std::vector<Io*> free_;
  /// An I/O reference that survives the I/O's slot being reused (compare ids).
  struct IoRef {
    Io* io;
    uint64_t id;
    bool valid() const { return io->id == id && !io->done; }
  };
  std::deque<IoRef> live_;       ///< creation order, for timeouts and eviction
  std::deque<IoRef> completed_;  ///< completion seen, waiting for the other points
  size_t live_count_ = 0;
  uint64_t next_id_ = 1;
  IoQualityStats stats_;
};

}  // namespace rdmatel::io_quality
