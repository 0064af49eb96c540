// SPDX-License-Identifier: GPL-2.0-or-later
// messages: throughput visibility (SPEC §5). For every RDMA message (WRITE, SEND, READ RESPONSE;
// FIRST..LAST or ONLY, WITH_IMMEDIATE and WITH_INVALIDATE included) at every observation point:
// FCT, bytes, retransmitted bytes and packets, NAKs, FET and FNR; per flow and period: bytes,
// effective bytes, FET, NAKs, retransmitted and out-of-sequence packets.
//
// Rules (per flow, point and PSN space):
//  - a data packet is retransmitted when its PSN is not newer than the newest PSN seen (24-bit
//    serial comparison): go-back-N resends, and resent copies of packets lost before the point;
//  - out of sequence when it skips PSNs (newer than newest + 1);
//  - a packet belongs to the message whose PSN range holds it; a READ RESPONSE FIRST inside an
//    earlier response's range is the answer to a re-issued READ REQUEST: part of that message;
//  - NAKs (AETH 011xxxxx) travel the other way with the requester's QPN: the flow pairing
//    (FlowTable: echoed PSNs) maps them back, and they count for the message holding their PSN;
//  - a message is final once an ACK covers it and the reorder window has passed, or when no
//    packet has touched it for message_timeout, or at the end of the capture.
#pragma once

#include <deque>
#include <memory>
#include <optional>
#include <unordered_map>

#include "engine/core/metric_plugin.h"
#include "engine/metrics/messages/message_state.h"

namespace rdmatel::messages {

struct MessagesStats {
  uint64_t data_packets = 0;
  uint64_t messages = 0;
  uint64_t naks = 0;
  uint64_t naks_unattributed = 0;  ///< reverse flow never paired (counted at the end)
  uint64_t late_packets = 0;       ///< copies after their message was final
  uint64_t evicted = 0;
};

class MessagesPlugin final : public MetricPlugin {
 public:
  explicit MessagesPlugin(const EngineConfig& cfg) : cfg_(cfg) {}
  const char* name() const override { return "messages"; }
  void on_packet(EngineContext& ctx, const PacketContext& p) override;
  void on_housekeeping(EngineContext& ctx) override;
  void finish(EngineContext& ctx) override;
  const MessagesStats& stats() const { return stats_; }

 private:
  void on_data(EngineContext& ctx, const PacketContext& p, Space space);
  void on_aeth(EngineContext& ctx, const PacketContext& p);
  void on_read_request(EngineContext& ctx, const PacketContext& p);
  /// A NAK on the reverse of `forward` (flows known): counts it for the message it names.
  void count_nak(EngineContext& ctx, FlowId forward, PointId point, uint32_t psn, TimeNs ts, uint64_t frame,
                 uint8_t syndrome);
  /// NAKs seen before the two directions were paired, counted once the pairing is known.
  void drain_unpaired_naks(EngineContext& ctx, const Flow& flow);
  /// The (first, last) response PSNs of the READ a READ RESPONSE answers, when known.
  std::optional<std::pair<uint32_t, uint32_t>> read_range(EngineContext& ctx, const PacketContext& p) const;
  uint32_t mtu_of(const Flow& f) const;
  FlowPoint& flow_point(FlowId flow, PointId point);
  FlowPoint* find_flow_point(FlowId flow, PointId point) const;
  Stream& stream(FlowId flow, PointId point, Space space);
  FlowPeriodRecord& period(FlowId flow, PointId point, TimeNs ts, EngineContext& ctx);
  Message* find(Stream& s, uint32_t psn) const;
  Message* open_message(EngineContext& ctx, Stream& s, const PacketContext& p, uint32_t first_psn, bool has_first);
  void claim_pending_naks(Stream& s, Message& m);
  /// Merges `from` (a message seen without its FIRST) into `into` (its resent head).
  void absorb(EngineContext& ctx, Message& into, Message& from);
  void finalize(EngineContext& ctx, Message& m);
  void emit_periods(EngineContext& ctx, bool all);

  const EngineConfig& cfg_;
  std::vector<FlowState> flows_;       ///< by flow id
  std::deque<FlowPoint> flow_points_;  ///< owns them (stable addresses)
  std::deque<Stream> streams_;         ///< owns them
  uint32_t fabric_mtu_ = 0;  ///< largest FIRST/MIDDLE payload anywhere
  struct UnpairedNak {
    PointId point;
    uint32_t psn;
    TimeNs ts;
    uint64_t frame;
    uint8_t syndrome;
  };
  std::unordered_map<FlowId, std::vector<UnpairedNak>> unpaired_naks_;  ///< by the NAK's own flow
  /// Open periods in creation order: (flow-point, period index).
  std::deque<std::pair<FlowPoint*, int64_t>> period_queue_;
  std::deque<Message> pool_;  ///< owns messages (stable addresses); finished ones are recycled
  std::vector<Message*> free_;
  struct Ref {
    Message* m;
    uint64_t id;
    bool live() const { return !m->done && m->rec.id == id; }
  };
  std::deque<Ref> open_;   ///< creation order, for eviction and the end of the capture
  std::deque<Ref> idle_;   ///< by deadline (last packet + message timeout), re-queued on activity
  std::deque<Ref> acked_;  ///< in ACK order: final once the reorder window has passed
  size_t open_count_ = 0;
  uint64_t next_id_ = 1;
  MessagesStats stats_;
};

}  // namespace rdmatel::messages
