// SPDX-License-Identifier: GPL-2.0-or-later
#include <string>

#include "rdmatel/report.h"

namespace rdmatel {

void DimensionReport::add(const IoRecord& r) {
  const char* key = dim_ == Dimension::kGpu ? r.host_gpu : dim_ == Dimension::kNode ? r.host_node : r.job;
  if (key) ios_[key].add(r);
}

void DimensionReport::add(const MessageRecord& m) {
  const GpuEnds& g = m.gpu;
  if (dim_ == Dimension::kJob) {
    if (!g.job) return;
    messages_[{g.job, m.point}].add(m);
    if (g.src_gpu && g.dst_gpu) job_pairs_[g.job][{std::string(g.src_gpu) + " > " + g.dst_gpu, m.point}].add(m);
    return;
  }
  const char* src = dim_ == Dimension::kGpu ? g.src_gpu : g.src_node;
  const char* dst = dim_ == Dimension::kGpu ? g.dst_gpu : g.dst_node;
  if (src && dst) messages_[{std::string(src) + " > " + dst, m.point}].add(m);
}

}  // namespace rdmatel
