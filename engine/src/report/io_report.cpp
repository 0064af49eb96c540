// SPDX-License-Identifier: GPL-2.0-or-later
#include "rdmatel/report.h"

namespace rdmatel {

const char* io_metric_name(IoMetric m) {
  switch (m) {
    case IoMetric::kDal: return "DAL";
    case IoMetric::kDpl: return "DPL";
    case IoMetric::kRtt: return "RTT";
    case IoMetric::kIol1: return "IOL1";
    case IoMetric::kIol2: return "IOL2";
    case IoMetric::kIol: return "IOL";
    case IoMetric::kCount: break;
  }
  return "?";
}

void IoGroupStats::add(const IoRecord& r) { add(r, io_metrics(r)); }

void IoGroupStats::add(const IoRecord& r, const IoMetrics& m) {
  ++ios;
  if (!r.complete) ++incomplete;
  else if (r.status != 0) ++errors;
  if (!r.is_read() && !r.is_write()) {
    ++others;
    return;
  }
  ++(r.is_read() ? reads : writes);
  const std::optional<DurationNs>* values[] = {&m.dal, &m.dpl, &m.rtt, &m.iol1, &m.iol2, &m.iol};
  for (size_t i = 0; i < size_t(IoMetric::kCount); ++i)
    if (*values[i]) metric[i].add(**values[i]);
}

void IoReport::add(const IoRecord& r) {
  // The metrics once for the four groups; the groups of the previous record first (an I/O's
  // records come in bursts per host-storage pair; map entries never move).
  const IoMetrics m = io_metrics(r);
  total_.add(r, m);
  std::optional<LastGroups>& last = last_.value;
  if (!last || last->host != r.host || last->storage != r.storage)
    last = LastGroups{r.host, r.storage, &by_host_[r.host], &by_storage_[r.storage], &by_pair_[{r.host, r.storage}]};
  last->host_stats->add(r, m);
  last->storage_stats->add(r, m);
  last->pair_stats->add(r, m);
}

}  // namespace rdmatel
