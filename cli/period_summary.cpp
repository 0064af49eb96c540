// SPDX-License-Identifier: GPL-2.0-or-later
#include "cli/period_summary.h"

#include <ctime>

#include "rdmatel/records.h"
#include "rdmatel/schema.h"

namespace rdmatel::cli {
namespace {

std::string stat_text(const char* name, DurationNs sum, uint64_t n, DurationNs max) {
  if (!n) return "";
  char buf[128];
  std::snprintf(buf, sizeof buf, ", %s avg %.1f max %.1f us", name, ns_to_us(sum) / double(n),
                ns_to_us(max));
  return buf;
}

}  // namespace

void PeriodSummary::on_record(const Record& r) {
  if (r.provisional) return;
  std::lock_guard<std::mutex> lock(mutex_);
  if (r.is(kIoSchema)) {
    const IoRecord& io = r.as<IoRecord>();
    ++c_.ios;
    if (io.complete) ++c_.complete;
    if (io.status_known && io.status != 0) ++c_.errors;
    IoMetrics m = io_metrics(io);
    if (m.iol1) c_.iol1.add(*m.iol1);
    if (m.rtt) c_.rtt.add(*m.rtt);
    if (m.dal) c_.dal.add(*m.dal);
  } else if (r.is(kMessageSchema)) {
    const MessageRecord& msg = r.as<MessageRecord>();
    ++c_.messages;
    c_.bytes += msg.bytes;
    c_.retrans_packets += msg.retrans_packets;
    c_.naks += msg.naks;
  }
}

std::string PeriodSummary::line(double seconds, uint64_t packets, uint64_t dropped) {
  std::lock_guard<std::mutex> lock(mutex_);
  char when[32] = "";
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  if (gmtime_r(&now, &tm)) std::strftime(when, sizeof when, "%H:%M:%S", &tm);
  char head[256];
  std::snprintf(
      head, sizeof head,
      "%s UTC, %.1f s: %llu packets (%llu dropped), %llu I/Os (%llu complete, %llu errors)", when,
      seconds, (unsigned long long)(packets - last_packets_), (unsigned long long)dropped,
      (unsigned long long)c_.ios, (unsigned long long)c_.complete, (unsigned long long)c_.errors);
  std::string out = head;
  out += stat_text("IOL1", c_.iol1.sum, c_.iol1.n, c_.iol1.max);
  out += stat_text("RTT", c_.rtt.sum, c_.rtt.n, c_.rtt.max);
  out += stat_text("DAL", c_.dal.sum, c_.dal.n, c_.dal.max);
  char tail[192];
  std::snprintf(tail, sizeof tail,
                "; %llu messages, %llu bytes, %llu retransmitted packets, %llu NAKs",
                (unsigned long long)c_.messages, (unsigned long long)c_.bytes,
                (unsigned long long)c_.retrans_packets, (unsigned long long)c_.naks);
  out += tail;
  c_ = Counts{};
  last_packets_ = packets;
  return out;
}

}  // namespace rdmatel::cli
