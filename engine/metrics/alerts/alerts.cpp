// SPDX-License-Identifier: GPL-2.0-or-later
#include "engine/metrics/alerts/alerts.h"

#include <algorithm>
#include <string>

#include "rdmatel/schema.h"
#include "rdmatel/names.h"

namespace rdmatel::alerts {
namespace {

const SettingSpec kSettings[] = {
    {"alert", SettingType::kList, "", "", 0, 0, "RULE",
     "A threshold alert: [SCOPE=VALUE:]METRIC>VALUE or METRIC<VALUE (metrics dal, dpl, iol1, iol2, rtt, iol and fct "
     "in µs unless the value ends in ns, ms or s, fet in bit/s, fnr; scopes host=IP, storage=IP, src=IP, dst=IP, job=NAME), e.g. rtt>50 or "
     "storage=10.2.0.1:dal>500; fires once per I/O or message that crosses it",
     true, false},
    // Spikes are alert records, which the CLI, the analyzer and live mode show; the Wireshark
    // plugin shows none (its "slow" items evaluate the threshold rules on each frame), so they are
    // no preference there and the plugin turns them off.
    {"spike_factor", SettingType::kCount, "", "3", 0, 1000, "N",
     "A period whose mean IOL1 (per host, storage server and job) or FCT (per flow) is at least N times the median "
     "of its previous periods is a spike alert; 0: no spike alerts",
     true, false},
    {"spike_min_excess", SettingType::kDuration, "us", "50", 0, 1e9, "US",
     "A spike must also exceed its baseline by this much", true, false},
};
const RecordSchema* const kOutputs[] = {&kAlertSchema};
const RecordSchema* const kInputs[] = {&kIoSchema, &kMessageSchema};

std::optional<DurationNs> first_stamp(const IoRecord& r, int preferred) {
  if (r.t.has(preferred)) return r.t[preferred];
  for (int i = 1; i <= 7; ++i)
    if (r.t.has(i)) return r.t[i];
  return std::nullopt;
}

// The part of a threshold alert every record kind shares; the caller adds what fired.
AlertRecord threshold_alert(const AlertRule& rule, double value, TimeNs when) {
  AlertRecord a;
  a.kind = "threshold";
  a.time_ns = when;
  a.metric = metric_name(rule.metric);
  a.value = value;
  a.threshold = rule.threshold;
  a.rule = rule.text;
  return a;
}

int64_t period_of(TimeNs t, DurationNs period) { return t >= 0 ? t / period : (t - period + 1) / period; }

}  // namespace

const ComponentSpec kSpec = {"alerts", 0, kOutputs, kSettings, {}, kInputs};

namespace {
SpikeRule spike_rule(const Settings& s) {
  SpikeRule r;
  r.factor = double(s.count("spike_factor"));
  r.min_excess = double(s.duration("spike_min_excess")) / 1000.0;
  return r;
}

// How many periods a record can lag behind a later one of its scope: the reorder window and the
// I/O timeout (records wait for roles at most that long), at least 2, at most 10000 periods.
int64_t spike_lag(const Settings& s, DurationNs period) {
  const DurationNs late = s.duration("reorder_window") + s.duration("io_timeout");
  return std::clamp<int64_t>((late + period - 1) / period, 2, 10000);
}
}  // namespace

Alerts::Alerts(Ctx& ctx)
    : rules_(alert_rules(ctx.settings.list("alert"))),
      spike_rule_(spike_rule(ctx.settings)),
      spikes_on_(ctx.settings.count("spike_factor") > 0),
      period_ns_(std::max<DurationNs>(1, ctx.settings.duration("period"))),
      spikes_(spike_rule_, spike_lag(ctx.settings, period_ns_)) {
  if (rules_.size() != ctx.settings.list("alert").size())
    ctx.warn("alert_rules", [] { return "some --alert rules do not parse and are left out"; });
}

void Alerts::on_record(const Record& r, Ctx& ctx) {
  if (r.is(kIoSchema)) on_io(r.as<IoRecord>(), ctx);
  else if (r.is(kMessageSchema)) on_message(r.as<MessageRecord>(), ctx);
}

template <typename Map, typename Key, typename Name>
size_t Alerts::series(Map& map, const Key& key, Name&& name) {
  if (const size_t* id = map.find(key)) return *id;
  const size_t made = spikes_.series(name());
  if (made != SpikeDetector::kNoSeries) map[key] = made;
  return made;
}

void Alerts::sample(size_t series, TimeNs t, double v, Ctx& ctx) {
  if (series == SpikeDetector::kNoSeries ||
      !spikes_.add(series, period_of(t, period_ns_), v, spiked_))
    left_out(ctx);
  if (!spiked_.empty()) {
    emit_spikes(spiked_, ctx);
    spiked_.clear();
  }
}

void Alerts::left_out(Ctx& ctx) {
  ctx.warn("spike_samples", [this] {
    return "spike detection left out records of more than " +
           std::to_string(SpikeDetector::kMaxScopes) + " scopes, or more than " +
           std::to_string(spikes_.lag()) + " periods late";
  });
}

void Alerts::emit_spikes(const std::vector<Spike>& spikes, Ctx& ctx) {
  for (const Spike& s : spikes) {
    AlertRecord a;
    a.kind = "spike";
    a.time_ns = s.period * period_ns_;
    a.metric = s.scope.rfind("flow ", 0) == 0 ? "fct" : "iol1";
    a.value = s.value;
    a.baseline = s.baseline;
    a.rule = "period mean >= " + std::to_string(int(spike_rule_.factor)) + " x the median of the previous periods";
    a.scope = s.scope;
    ctx.emit(kAlertSchema, &a);
  }
}

void Alerts::threshold_alerts(const IoRecord& r, const IoMetrics& m, Ctx& ctx) {
  for (const AlertRule& rule : rules_) {
    std::optional<double> v = rule.value(r, m);
    if (!v || !rule.fires(*v)) continue;
    AlertRecord a = threshold_alert(rule, *v, first_stamp(r, 1).value_or(0));
    a.host = r.host;
    a.storage = r.storage;
    a.qpn = r.qpn;
    a.cid = r.cid;
    a.cmd_frame = r.cmd_frame;
    a.frame = r.complete && r.rsp_frame ? r.rsp_frame : r.cmd_frame;
    ctx.emit(kAlertSchema, &a);
  }
}

void Alerts::threshold_alerts(const MessageRecord& msg, Ctx& ctx) {
  for (const AlertRule& rule : rules_) {
    std::optional<double> v = rule.value(msg);
    if (!v || !rule.fires(*v)) continue;
    AlertRecord a = threshold_alert(rule, *v, msg.first_ns);
    a.src = msg.src;
    a.dst = msg.dst;
    a.dst_qpn = msg.dst_qpn;
    a.point = msg.point;
    a.first_psn = msg.first_psn;
    a.frame = msg.last_frame;
    ctx.emit(kAlertSchema, &a);
  }
}

void Alerts::on_io(const IoRecord& r, Ctx& ctx) {
  const IoMetrics m = io_metrics(r);
  if (!rules_.empty()) threshold_alerts(r, m, ctx);
  // Spikes follow the latency at the compute side (IOL1; `iol` where one point saw the I/O).
  if (!spikes_on_ || !(r.is_read() || r.is_write()) || !r.complete) return;
  const std::optional<DurationNs> lat = m.iol1 ? m.iol1 : m.iol;
  if (!lat) return;
  const double us = double(*lat) / 1000.0;
  const IpPair pair{r.host, r.storage};
  EndSeries* ends = series_of_pair_.find(pair);
  EndSeries uncached;  // beyond as many pairs as the detector keeps scopes
  if (!ends)
    ends = series_of_pair_.size() < SpikeDetector::kMaxScopes ? &series_of_pair_[pair] : &uncached;
  if (auto t = first_stamp(r, 1)) {
    if (ends->host == kNotLookedUp)
      ends->host = series(series_of_, ScopeKey{ScopeKey::kHost, r.host},
                          [&] { return "host " + r.host.to_string(); });
    sample(ends->host, *t, us, ctx);
  }
  if (auto t = first_stamp(r, 2)) {
    if (ends->storage == kNotLookedUp)
      ends->storage = series(series_of_, ScopeKey{ScopeKey::kStorage, r.storage},
                             [&] { return "storage " + r.storage.to_string(); });
    sample(ends->storage, *t, us, ctx);
  }
  if (r.job)
    if (auto t = first_stamp(r, 1)) {
      sample(series(series_of_, ScopeKey{ScopeKey::kJob, IpAddress{}, r.job},
                    [&] { return std::string("job ") + r.job; }),
             *t, us, ctx);
    }
}

void Alerts::on_message(const MessageRecord& msg, Ctx& ctx) {
  if (!rules_.empty()) threshold_alerts(msg, ctx);
  if (!spikes_on_ || !msg.complete) return;
  if (!has_last_flow_ || msg.dst_qpn != last_flow_.qpn || msg.point != last_flow_.point ||
      msg.src != last_flow_.src || msg.dst != last_flow_.dst)
    find_flow_series(msg, ctx);
  sample(last_flow_series_, msg.first_ns, double(msg.fct_ns()) / 1000.0, ctx);
}

void Alerts::find_flow_series(const MessageRecord& msg, const Ctx& ctx) {
  auto name = [&] {
    return "flow " + msg.src.to_string() + " > " + msg.dst.to_string() + " QP " +
           qpn_text(msg.dst_qpn) + " at " +
           (msg.point < ctx.points.size() ? ctx.points[msg.point].name : std::string("?"));
  };
  last_flow_ = FlowScope{msg.src, msg.dst, msg.dst_qpn, msg.point};
  last_flow_series_ = series(series_of_flow_, last_flow_, name);
  has_last_flow_ = true;
}

void Alerts::finish(Ctx& ctx) {
  if (!spikes_on_) return;
  std::vector<Spike> spikes;
  spikes_.finish(spikes);
  emit_spikes(spikes, ctx);
}

}  // namespace rdmatel::alerts
