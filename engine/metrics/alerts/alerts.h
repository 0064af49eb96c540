// SPDX-License-Identifier: GPL-2.0-or-later
// alerts: a record stage over the I/O and message records (SPEC §7). Threshold rules
// (`--alert 'rtt>50'`, scoped `storage=10.2.0.1:dal>500`) fire once per record that crosses them,
// as the record comes; spikes compare each host's, storage server's, job's and flow's mean per
// period (`--period`) with its rolling baseline, as periods close. Method: docs/metrics.md.
#pragma once

#include <utility>
#include <vector>

#include "engine/metrics/alerts/spike_detector.h"
#include "engine/src/core/component.h"
#include "engine/src/util/flat_map.h"
#include "engine/src/util/word_hash.h"
#include "rdmatel/alert_rule.h"

namespace rdmatel::alerts {

extern const ComponentSpec kSpec;

class Alerts final : public Component {
 public:
  explicit Alerts(Ctx& ctx);
  void on_packet(const Packet&, Ctx&) override {}
  void on_advance(PointId, Ctx&) override {}
  void on_record(const Record& r, Ctx& ctx) override;
  void finish(Ctx& ctx) override;

 private:
  void on_io(const IoRecord& r, Ctx& ctx);
  void on_message(const MessageRecord& m, Ctx& ctx);
  // Apart from the spikes' per-record path: only with --alert rules.
  void threshold_alerts(const IoRecord& r, const IoMetrics& m, Ctx& ctx);
  void threshold_alerts(const MessageRecord& m, Ctx& ctx);
  /// What names a host's, storage server's or job's spike scope, compared without building its
  /// text ("host A").
  struct ScopeKey {
    enum Kind : uint8_t { kHost, kStorage, kJob } kind = kHost;
    IpAddress ip;
    const char* job = nullptr;  ///< interned (--gpu-map); two pointers of one name find one series
    bool operator==(const ScopeKey&) const = default;
  };
  struct ScopeKeyHash {
    uint64_t operator()(const ScopeKey& k) const {
      return fold_word(fold_ip(k.kind, k.ip), uint64_t(reinterpret_cast<uintptr_t>(k.job)));
    }
  };
  /// A flow's scope ("flow A > B QP n at P"), as a message record names it.
  struct FlowScope {
    IpAddress src, dst;
    uint32_t qpn = 0;
    PointId point = 0;
    bool operator==(const FlowScope&) const = default;
  };
  struct FlowScopeHash {
    uint64_t operator()(const FlowScope& k) const {
      return fold_ip(fold_ip(uint64_t(k.qpn) << 32 | k.point, k.src), k.dst);
    }
  };
  /// The detector's series of a scope kept in `map` (kNoSeries beyond its limit); `name` makes
  /// the scope's text the first time the key comes.
  template <typename Map, typename Key, typename Name>
  size_t series(Map& map, const Key& key, Name&& name);
  void sample(size_t series, TimeNs t, double v, Ctx& ctx);
  /// A sample the detector could not keep (scope limit, or too late).
  void left_out(Ctx& ctx);
  /// Another flow than the last message's: its series (last_flow_series_).
  void find_flow_series(const MessageRecord& m, const Ctx& ctx);
  void emit_spikes(const std::vector<Spike>& spikes, Ctx& ctx);

  std::vector<AlertRule> rules_;
  SpikeRule spike_rule_;
  bool spikes_on_;
  DurationNs period_ns_;
  SpikeDetector spikes_;
  std::vector<Spike> spiked_;  ///< what a sample's add() closed as spikes (kept: one per record)
  FlatMap<ScopeKey, size_t, ScopeKeyHash> series_of_;  ///< the detector's series of each scope
  FlatMap<FlowScope, size_t, FlowScopeHash> series_of_flow_;
  /// The host's and storage server's series of each (host, storage) seen, so that an I/O record
  /// finds both with one lookup; each is looked up by its scope when first needed.
  static constexpr size_t kNotLookedUp = SpikeDetector::kNoSeries - 1;
  struct EndSeries {
    size_t host = kNotLookedUp, storage = kNotLookedUp;
  };
  FlatMap<IpPair, EndSeries, IpPairHash> series_of_pair_;
  /// The flow of the last message and its series: a flow's messages often end one after another.
  FlowScope last_flow_;
  size_t last_flow_series_ = SpikeDetector::kNoSeries;
  bool has_last_flow_ = false;
};

}  // namespace rdmatel::alerts
