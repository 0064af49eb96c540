// SPDX-License-Identifier: GPL-2.0-or-later
#include "engine/metrics/io_quality/role_inference.h"

namespace rdmatel::io_quality {

IoRoles infer_roles(const Io& io, const PointRegistry& points) {
  IoRoles r;
  const PointObs* earliest_compute = nullptr;
  const PointObs* latest_storage = nullptr;
  const PointObs* earliest_free = nullptr;
  const PointObs* latest_free = nullptr;
  const PointObs* only = nullptr;
  int with_command = 0, free_points = 0;
  auto earlier = [](const PointObs* a, const PointObs& b) { return !a || b.ts[kCommand] < a->ts[kCommand]; };
  auto later = [](const PointObs* a, const PointObs& b) { return !a || b.ts[kCommand] >= a->ts[kCommand]; };
  for (const PointObs& o : io.obs) {
    if (!o.has(kCommand)) continue;
    ++with_command;
    only = &o;
    switch (points[o.point].configured) {
      case PointRole::kCompute:
        if (earlier(earliest_compute, o)) earliest_compute = &o;
        break;
      case PointRole::kStorage:
        if (later(latest_storage, o)) latest_storage = &o;
        break;
      case PointRole::kFabric:
        break;
      case PointRole::kUnknown:
        ++free_points;
        if (earlier(earliest_free, o)) earliest_free = &o;
        if (later(latest_free, o)) latest_free = &o;
        break;
    }
  }
  if (earliest_compute) r.compute = earliest_compute->point;
  if (latest_storage) r.storage = latest_storage->point;
  if (r.compute == kNoPoint && r.storage == kNoPoint) {
    if (free_points >= 2) {
      r.compute = earliest_free->point;
      r.storage = latest_free->point;
      r.inferred = true;
    }
  } else if (r.compute == kNoPoint && earliest_free) {
    r.compute = earliest_free->point;
    r.inferred = true;
  } else if (r.storage == kNoPoint && latest_free) {
    r.storage = latest_free->point;
    r.inferred = true;
  }
  if (r.compute != kNoPoint) r.iol_point = r.compute;
  else if (with_command == 1) r.iol_point = only->point;
  else r.iol_point = r.storage;
  return r;
}

}  // namespace rdmatel::io_quality
