// SPDX-License-Identifier: GPL-2.0-or-later
// Which points of one I/O are its compute side and its storage side (SPEC §3): configured roles
// first; otherwise the point that saw the command first is the compute side and the point that
// saw it last the storage side. One point alone has no inferred role.
#pragma once

#include "engine/core/points.h"
#include "engine/metrics/io_quality/io_state.h"

namespace rdmatel::io_quality {

struct IoRoles {
  PointId compute = kNoPoint;
  PointId storage = kNoPoint;
  PointId iol_point = kNoPoint;  ///< where `iol` is measured
  bool inferred = false;         ///< at least one role came from inference
};

IoRoles infer_roles(const Io& io, const PointRegistry& points);

}  // namespace rdmatel::io_quality
