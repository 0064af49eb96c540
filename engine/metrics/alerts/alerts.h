// SPDX-License-Identifier: GPL-2.0-or-later
// alerts: a record stage over the I/O and message records (SPEC §7). Threshold rules
// (`--alert 'rtt>50'`, scoped `storage=10.2.0.1:dal>500`) fire once per record that crosses them,
// as the record comes; spikes compare each host's, storage server's, job's and flow's mean per
// period (`--period`) with its rolling baseline, as periods close. Method: docs/metrics.md.
#pragma once

#include <vector>

#include "rdmatel/alert_rule.h"
#include "engine/metrics/alerts/spike_detector.h"
#include "engine/src/core/component.h"

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
  void sample(const std::string& scope, TimeNs t, double v, Ctx& ctx);
  void emit_spikes(const std::vector<Spike>& spikes, Ctx& ctx);

  std::vector<AlertRule> rules_;
  SpikeRule spike_rule_;
  bool spikes_on_;
  DurationNs period_ns_;
  SpikeDetector spikes_;
};

}  // namespace rdmatel::alerts
