// SPDX-License-Identifier: GPL-2.0-or-later
#include "adapters/prometheus/exporter.h"

#include <httplib.h>

#include "rdmatel/records.h"
#include "rdmatel/schema.h"

namespace rdmatel::prometheus {
namespace {

// Latency buckets in seconds, 1 µs to 10 s: NVMe-oF latencies span µs (network) to seconds
// (a stalled target), so the buckets follow a 1-2.5-5 progression over seven decades.
constexpr double kLatencyBuckets[] = {1e-6, 2.5e-6, 5e-6,   1e-5, 2.5e-5, 5e-5,   1e-4, 2.5e-4,
                                      5e-4, 1e-3,   2.5e-3, 5e-3, 1e-2,   2.5e-2, 5e-2, 0.1,
                                      0.25, 0.5,    1,      2.5,  5,      10};

double seconds(DurationNs ns) {
  return double(ns) / 1e9;
}

}  // namespace

struct Exporter::Families {
  size_t ios, ios_incomplete, io_errors, io_bytes, dal, dpl, rtt, iol1, iol2, iol;
  size_t messages, msg_bytes, msg_packets, retrans_packets, retrans_bytes, naks, fct;
  size_t ect, ce, cnp;
  size_t pfc_frames, pfc_pauses, pfc_pause_seconds, pfc_storms;
  size_t packets, dropped, roce, malformed, late;
  size_t series, series_limit, series_dropped;
};

Exporter::Exporter(uint64_t max_series, PointNamer names)
    : reg_(max_series), names_(std::move(names)), f_(std::make_unique<Families>()) {
  declare();
}

Exporter::~Exporter() {
  stop();
}

void Exporter::declare() {
  using T = MetricType;
  Families& f = *f_;
  const std::vector<std::string> pair = {"host", "storage"}, pair_op = {"host", "storage", "op"},
                                 flow = {"src", "dst", "point", "kind"},
                                 cflow = {"src", "dst", "point"};
  f.ios = reg_.family("rdmatel_nvme_ios_total", "NVMe I/Os whose command was seen (final records).",
                      T::kCounter, pair_op);
  f.ios_incomplete =
      reg_.family("rdmatel_nvme_ios_incomplete_total",
                  "NVMe I/Os that ended without a completion (timeout, end of capture, evicted).",
                  T::kCounter, pair_op);
  f.io_errors = reg_.family("rdmatel_nvme_io_errors_total",
                            "NVMe I/Os completed with an error status.", T::kCounter, pair_op);
  f.io_bytes =
      reg_.family("rdmatel_nvme_io_bytes_total",
                  "Data length of NVMe I/Os (from their SGL), in bytes.", T::kCounter, pair_op);
  f.dal =
      reg_.family("rdmatel_nvme_dal_seconds", "Device access latency (storage side) of NVMe I/Os.",
                  T::kHistogram, pair, kLatencyBuckets);
  f.dpl = reg_.family("rdmatel_nvme_dpl_seconds", "Data path latency of NVMe I/Os.", T::kHistogram,
                      pair, kLatencyBuckets);
  f.rtt = reg_.family("rdmatel_nvme_rtt_seconds", "Network round trip of NVMe I/Os (IOL1 - IOL2).",
                      T::kHistogram, pair, kLatencyBuckets);
  f.iol1 = reg_.family("rdmatel_nvme_iol1_seconds", "I/O latency at the compute side of NVMe I/Os.",
                       T::kHistogram, pair, kLatencyBuckets);
  f.iol2 = reg_.family("rdmatel_nvme_iol2_seconds", "I/O latency at the storage side of NVMe I/Os.",
                       T::kHistogram, pair, kLatencyBuckets);
  f.iol = reg_.family(
      "rdmatel_nvme_iol_seconds",
      "I/O latency (command to completion) at the point nearest the host that saw both.",
      T::kHistogram, {"host", "storage", "point"}, kLatencyBuckets);
  f.messages = reg_.family("rdmatel_rdma_messages_total",
                           "RDMA messages seen at an observation point.", T::kCounter, flow);
  f.msg_bytes = reg_.family("rdmatel_rdma_bytes_total",
                            "Bytes of RDMA messages on the wire, retransmissions included.",
                            T::kCounter, flow);
  f.msg_packets =
      reg_.family("rdmatel_rdma_packets_total",
                  "Packets of RDMA messages, retransmissions included.", T::kCounter, flow);
  f.retrans_packets = reg_.family("rdmatel_rdma_retransmitted_packets_total",
                                  "Retransmitted packets of RDMA messages.", T::kCounter, flow);
  f.retrans_bytes = reg_.family("rdmatel_rdma_retransmitted_bytes_total",
                                "Retransmitted bytes of RDMA messages.", T::kCounter, flow);
  f.naks =
      reg_.family("rdmatel_rdma_naks_total", "NAKs answering RDMA messages.", T::kCounter, flow);
  f.fct = reg_.family("rdmatel_rdma_fct_seconds", "Flow completion time of RDMA messages.",
                      T::kHistogram, {"point", "kind"}, kLatencyBuckets);
  f.ect = reg_.family("rdmatel_ecn_capable_packets_total",
                      "ECN-capable RoCE packets of a flow at a point (congestion records).",
                      T::kCounter, cflow);
  f.ce = reg_.family("rdmatel_ecn_ce_packets_total",
                     "CE-marked RoCE packets of a flow at a point (congestion records).",
                     T::kCounter, cflow);
  f.cnp =
      reg_.family("rdmatel_cnp_packets_total",
                  "CNPs carried by a flow at a point (congestion records).", T::kCounter, cflow);
  f.pfc_frames = reg_.family("rdmatel_pfc_frames_total", "PFC frames with the priority enabled.",
                             T::kCounter, {"point", "priority"});
  f.pfc_pauses = reg_.family("rdmatel_pfc_pauses_total", "PFC pauses (quanta > 0).", T::kCounter,
                             {"point", "priority"});
  f.pfc_pause_seconds = reg_.family("rdmatel_pfc_pause_seconds_total",
                                    "Pause time PFC frames asked for at the link speed.",
                                    T::kCounter, {"point", "priority"});
  f.pfc_storms = reg_.family("rdmatel_pfc_storms_total",
                             "Priorities paused without a break for the storm threshold.",
                             T::kCounter, {"point", "priority"});
  f.packets = reg_.own_family("rdmatel_capture_packets_total", "Packets captured.", T::kCounter);
  f.dropped = reg_.own_family("rdmatel_capture_dropped_packets_total",
                              "Packets the kernel dropped before rdmatel read them.", T::kCounter);
  f.roce = reg_.own_family("rdmatel_roce_packets_total", "RoCEv2 packets decoded.", T::kCounter);
  f.malformed = reg_.own_family("rdmatel_malformed_packets_total",
                                "Packets that could not be decoded.", T::kCounter);
  f.late = reg_.own_family("rdmatel_late_packets_total",
                           "Packets later than the reorder window at their point.", T::kCounter);
  f.series = reg_.own_family("rdmatel_prometheus_series",
                             "Label sets held over all rdmatel metrics.", T::kGauge);
  f.series_limit = reg_.own_family("rdmatel_prometheus_series_limit",
                                   "The limit on label sets (--prometheus-max-series).", T::kGauge);
  f.series_dropped = reg_.own_family(
      "rdmatel_prometheus_dropped_total",
      "Observations not recorded because their label set would exceed the limit.", T::kCounter);
  update(CaptureCounters{});
}

void Exporter::on_record(const Record& r) {
  if (r.provisional) return;
  std::lock_guard<std::mutex> lock(mutex_);
  if (r.is(kIoSchema))
    add_io(r);
  else if (r.is(kMessageSchema))
    add_message(r);
  else if (r.is(kCongestionSchema)) {
    if (const auto* e = congestion_as<EcnRecord>(r.as<CongestionHead>())) add_congestion(*e);
    else if (const auto* p = congestion_as<PfcRecord>(r.as<CongestionHead>())) add_pfc(*p);
  }
}

void Exporter::add_io(const Record& rec) {
  const IoRecord& io = rec.as<IoRecord>();
  const Families& f = *f_;
  const std::vector<std::string> pair = {io.host.to_string(), io.storage.to_string()};
  const std::vector<std::string> pair_op = {pair[0], pair[1], io.op};
  reg_.add(f.ios, pair_op, 1);
  if (!io.complete) reg_.add(f.ios_incomplete, pair_op, 1);
  if (io.status_known && io.status != 0) reg_.add(f.io_errors, pair_op, 1);
  reg_.add(f.io_bytes, pair_op, double(io.length));
  const IoMetrics m = io_metrics(io);
  if (m.dal) reg_.observe(f.dal, pair, seconds(*m.dal));
  if (m.dpl) reg_.observe(f.dpl, pair, seconds(*m.dpl));
  if (m.rtt) reg_.observe(f.rtt, pair, seconds(*m.rtt));
  if (m.iol1) reg_.observe(f.iol1, pair, seconds(*m.iol1));
  if (m.iol2) reg_.observe(f.iol2, pair, seconds(*m.iol2));
  if (m.iol) reg_.observe(f.iol, {pair[0], pair[1], names_(io.iol_point)}, seconds(*m.iol));
}

void Exporter::add_message(const Record& rec) {
  const MessageRecord& m = rec.as<MessageRecord>();
  const Families& f = *f_;
  const std::string point = names_(m.point);
  const std::vector<std::string> flow = {m.src.to_string(), m.dst.to_string(), point,
                                         message_kind_name(m.kind)};
  reg_.add(f.messages, flow, 1);
  reg_.add(f.msg_bytes, flow, double(m.bytes));
  reg_.add(f.msg_packets, flow, double(m.packets));
  reg_.add(f.retrans_packets, flow, double(m.retrans_packets));
  reg_.add(f.retrans_bytes, flow, double(m.retrans_bytes));
  reg_.add(f.naks, flow, double(m.naks));
  if (m.complete) reg_.observe(f.fct, {point, message_kind_name(m.kind)}, seconds(m.fct_ns()));
}

void Exporter::add_congestion(const EcnRecord& c) {
  const Families& f = *f_;
  const std::vector<std::string> flow = {c.src.to_string(), c.dst.to_string(), names_(c.point)};
  reg_.add(f.ect, flow, double(c.ect_packets));
  reg_.add(f.ce, flow, double(c.ce_packets));
  reg_.add(f.cnp, flow, double(c.cnp_packets));
}

void Exporter::add_pfc(const PfcRecord& p) {
  const Families& f = *f_;
  const std::vector<std::string> key = {names_(p.point), std::to_string(p.priority)};
  reg_.add(f.pfc_frames, key, double(p.frames));
  reg_.add(f.pfc_pauses, key, double(p.pause_frames));
  if (p.pause_ns) reg_.add(f.pfc_pause_seconds, key, seconds(*p.pause_ns));
  if (p.storm) reg_.add(f.pfc_storms, key, 1);
}

void Exporter::update(const CaptureCounters& c) {
  std::lock_guard<std::mutex> lock(mutex_);
  const Families& f = *f_;
  reg_.set(f.packets, {}, double(c.packets));
  reg_.set(f.dropped, {}, double(c.dropped));
  reg_.set(f.roce, {}, double(c.roce));
  reg_.set(f.malformed, {}, double(c.malformed));
  reg_.set(f.late, {}, double(c.late));
}

std::string Exporter::scrape() {
  std::lock_guard<std::mutex> lock(mutex_);
  const Families& f = *f_;
  reg_.set(f.series_limit, {}, double(reg_.max_series()));
  reg_.set(f.series_dropped, {}, double(reg_.dropped()));
  reg_.set(f.series, {}, double(reg_.series()));
  return reg_.render();
}

bool Exporter::listen(const std::string& address, std::string& error) {
  const size_t colon = address.rfind(':');
  std::string host = address.substr(0, colon);
  const std::string port_text = address.substr(colon + 1);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);
  char* end = nullptr;
  long port = std::strtol(port_text.c_str(), &end, 10);
  if (host.empty() || port_text.empty() || *end || port < 0 || port > 65535) {
    error = "--prometheus takes ADDR:PORT with a port from 0 to 65535 (got '" + address + "')";
    return false;
  }
  server_ = std::make_unique<httplib::Server>();
  server_->Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
    res.set_content(scrape(), "text/plain; version=0.0.4; charset=utf-8");
  });
  if (port == 0) {
    port_ = server_->bind_to_any_port(host);
  } else if (server_->bind_to_port(host, int(port))) {
    port_ = int(port);
  } else {
    port_ = -1;
  }
  if (port_ <= 0) {
    error = "cannot listen on " + address +
            " for Prometheus (address in use, or not an address of this machine)";
    server_.reset();
    return false;
  }
  thread_ = std::thread([this] { server_->listen_after_bind(); });
  return true;
}

void Exporter::stop() {
  if (server_) server_->stop();
  if (thread_.joinable()) thread_.join();
  server_.reset();
}

}  // namespace rdmatel::prometheus
