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

void IoGroupStats::add(const IoRecord& r) {
  ++ios;
  if (!r.complete) ++incomplete;
  else if (r.status != 0) ++errors;
  if (!r.is_read() && !r.is_write()) {
    ++others;
    return;
  }
  ++(r.is_read() ? reads : writes);
  IoMetrics m = io_metrics(r);
  const std::optional<DurationNs>* values[] = {&m.dal, &m.dpl, &m.rtt, &m.iol1, &m.iol2, &m.iol};
  for (size_t i = 0; i < size_t(IoMetric::kCount); ++i)
    if (*values[i]) metric[i].add(**values[i]);
}

void IoReport::add(const IoRecord& r) {
  total_.add(r);
  by_host_[r.host].add(r);
  by_storage_[r.storage].add(r);
  by_pair_[{r.host, r.storage}].add(r);
}

}  // namespace rdmatel
