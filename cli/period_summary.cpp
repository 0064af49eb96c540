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
  std::snprintf(buf, sizeof buf, ", %s avg %.1f max %.1f us", name, ns_to_us(sum) / double(n), ns_to_us(max));
  return buf;
}

}  // namespace

void PeriodSummary::on_record(const Record& r) {
  if (r.provisional) return;
  if (r.is(kIoSchema)) {
    const IoRecord& io = r.as<IoRecord>();
    ++ios_;
    if (io.complete) ++complete_;
    if (io.status_known && io.status != 0) ++errors_;
    IoMetrics m = io_metrics(io);
    if (m.iol1) iol1_.add(*m.iol1);
    if (m.rtt) rtt_.add(*m.rtt);
    if (m.dal) dal_.add(*m.dal);
  } else if (r.is(kMessageSchema)) {
    const MessageRecord& msg = r.as<MessageRecord>();
    ++messages_;
    bytes_ += msg.bytes;
    retrans_packets_ += msg.retrans_packets;
    naks_ += msg.naks;
  }
}

std::string PeriodSummary::line(double seconds, uint64_t packets, uint64_t dropped) {
  char when[32] = "";
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  if (gmtime_r(&now, &tm)) std::strftime(when, sizeof when, "%H:%M:%S", &tm);
  char head[256];
  std::snprintf(head, sizeof head, "%s UTC, %.1f s: %llu packets (%llu dropped), %llu I/Os (%llu complete, %llu errors)",
                when, seconds, (unsigned long long)(packets - last_packets_), (unsigned long long)dropped,
                (unsigned long long)ios_, (unsigned long long)complete_, (unsigned long long)errors_);
  std::string out = head;
  out += stat_text("IOL1", iol1_.sum, iol1_.n, iol1_.max);
  out += stat_text("RTT", rtt_.sum, rtt_.n, rtt_.max);
  out += stat_text("DAL", dal_.sum, dal_.n, dal_.max);
  char tail[192];
  std::snprintf(tail, sizeof tail, "; %llu messages, %llu bytes, %llu retransmitted packets, %llu NAKs",
                (unsigned long long)messages_, (unsigned long long)bytes_, (unsigned long long)retrans_packets_,
                (unsigned long long)naks_);
  out += tail;
  const uint64_t packets_now = packets;
  *this = PeriodSummary{};
  last_packets_ = packets_now;
  return out;
}

}  // namespace rdmatel::cli
