// SPDX-License-Identifier: GPL-2.0-or-later
// The paths record's schema (channel "paths"): one per flow and hop.
#include "rdmatel/records.h"
#include "engine/src/output/column_line_writer.h"
#include "rdmatel/schema.h"

namespace rdmatel {
namespace {

const PathRecord& pr(const void* p) { return *static_cast<const PathRecord*>(p); }

template <uint64_t PathRecord::*F>
bool pr_u(const void* p, Value& v) {
  v.u = pr(p).*F;
  return true;
}
bool delay(const void* p, DurationNs PathRecord::*f, Value& v) {
  if (!pr(p).delivered) return false;
  v.i = pr(p).*f;
  return true;
}

constexpr Column kPathColumns[] = {
    {"src", ValueType::kAddress, [](const void* p, Value& v) { v.ip = &pr(p).src; return true; }, "Source IP"},
    {"dst", ValueType::kAddress, [](const void* p, Value& v) { v.ip = &pr(p).dst; return true; }, "Destination IP"},
    {"dst_qpn", ValueType::kUnsigned, [](const void* p, Value& v) { v.u = pr(p).dst_qpn; return true; },
     "Destination QPN"},
    {"from_point", ValueType::kPoint, [](const void* p, Value& v) { v.point = pr(p).from_point; return true; },
     "Observation point A: where the hop starts"},
    {"to_point", ValueType::kPoint, [](const void* p, Value& v) { v.point = pr(p).to_point; return true; },
     "Observation point B: the next point of the flow's path"},
    {"packets", ValueType::kUnsigned, pr_u<&PathRecord::packets>,
     "Packets seen at A whose path goes on to B (each copy of a retransmitted packet counts)"},
    {"lost", ValueType::kUnsigned, pr_u<&PathRecord::lost>,
     "Of which never seen at B within --path-timeout: lost between A and B"},
    {"min_us", ValueType::kMicros, [](const void* p, Value& v) { return delay(p, &PathRecord::min_ns, v); },
     "Shortest hop delay t_B - t_A, µs (absent when no packet reached B)"},
    {"avg_us", ValueType::kMicros,
     [](const void* p, Value& v) {
       auto a = pr(p).avg_ns();
       if (!a) return false;
       v.i = *a;
       return true;
     },
     "Average hop delay, µs"},
    {"max_us", ValueType::kMicros, [](const void* p, Value& v) { return delay(p, &PathRecord::max_ns, v); },
     "Longest hop delay, µs"},
    {"offset_applied_ns", ValueType::kSigned,
     [](const void* p, Value& v) {
       if (!pr(p).offset_applied_ns) return false;
       v.i = *pr(p).offset_applied_ns;
       return true;
     },
     "Added to every stamp difference t_B - t_A to correct the two clocks (the --clock-offset of B minus that "
     "of A, or the estimate of --estimate-offsets), ns; absent when no offset is known: the delays are raw"},
    {"offset_estimated", ValueType::kBool, [](const void* p, Value& v) { v.b = pr(p).offset_estimated; return true; },
     "offset_applied_ns is the engine's estimate (--estimate-offsets), not a given --clock-offset"},
    {"raw", ValueType::kBool, [](const void* p, Value& v) { v.b = !pr(p).offset_applied_ns; return true; },
     "The delays are raw stamp differences of two unsynchronised clocks (no --clock-offset for A or B, no "
     "estimate)"},
    {"path_inferred", ValueType::kBool, [](const void* p, Value& v) { v.b = pr(p).path_inferred; return true; },
     "No packet of the flow reached a second point, so its path was never seen: the hop is on the path the other "
     "flows show (between the same endpoints, or between the points next to them); its packets are lost on it"},
    {"first_ns", ValueType::kSigned, [](const void* p, Value& v) { v.i = pr(p).first_ns; return true; },
     "First packet at A, ns since the epoch (A's clock)"},
    {"last_ns", ValueType::kSigned, [](const void* p, Value& v) { v.i = pr(p).last_ns; return true; },
     "Last packet at A, ns"},
    {"first_frame", ValueType::kUnsigned, pr_u<&PathRecord::first_frame>, "Frame of the first packet at A"},
};

}  // namespace

const RecordSchema kPathSchema = {"paths", "the packets of one flow over one hop, from one observation point to the "
                                           "next point of their path",
                                  kPathColumns, copy_as<PathRecord>(), line_writers<kPathColumns>()};

}  // namespace rdmatel
