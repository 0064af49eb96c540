// SPDX-License-Identifier: GPL-2.0-or-later
#include "engine/metrics/offsets/offsets.h"

#include "engine/src/output/column_line_writer.h"
#include "rdmatel/records.h"
#include "rdmatel/schema.h"

namespace rdmatel {
namespace {

const OffsetRecord& off(const void* p) { return *static_cast<const OffsetRecord*>(p); }

constexpr Column kOffsetColumns[] = {
    {"point", ValueType::kPoint, [](const void* p, Value& v) { v.point = off(p).point; return true; },
     "Observation point"},
    {"reference", ValueType::kPoint, [](const void* p, Value& v) { v.point = off(p).reference; return true; },
     "The point whose clock it is compared with"},
    {"offset_ns", ValueType::kSigned, [](const void* p, Value& v) { v.i = off(p).offset_ns; return true; },
     "Add it to the point's stamps to get the reference's clock (the reference's clock minus the point's), ns; "
     "what --clock-offset takes"},
    {"uncertainty_ns", ValueType::kSigned,
     [](const void* p, Value& v) {
       if (!off(p).uncertainty_ns) return false;
       v.i = *off(p).uncertainty_ns;
       return true;
     },
     "The offset lies within ± this, ns (half the smallest round trip between the points, and at least as "
     "much as the stamps are seen to stray); absent when the packets crossed one way only (the offset then "
     "holds the one-way delay, which nothing in the capture bounds)"},
    {"samples", ValueType::kUnsigned, [](const void* p, Value& v) { v.u = off(p).samples; return true; },
     "Packets seen at both points"},
    {"both_directions", ValueType::kBool, [](const void* p, Value& v) { v.b = off(p).both_directions; return true; },
     "Packets went both ways between the points (else the offset still holds the one-way delay)"},
};

}  // namespace

const RecordSchema kOffsetSchema = {"offsets", "the clock offset between two observation points", kOffsetColumns, copy_as<OffsetRecord>(), line_writers<kOffsetColumns>()};

namespace offsets {
namespace {
const RecordSchema* const kOutputs[] = {&kOffsetSchema};
}  // namespace

// Consumes no packet: the samples come from the component that matches packets across points
// (paths), so it must finish after it (it follows it in the registry).
const ComponentSpec kSpec = {"offsets", 0, kOutputs, {}, {}};

void Offsets::finish(Ctx& ctx) {
  for (const ClockRelations::PairEstimate& e : ctx.clock.pairs()) {
    OffsetRecord r;
    r.point = e.q;
    r.reference = e.p;
    r.offset_ns = -e.estimate.offset;  // the estimate is the point's clock minus the reference's
    // The bracket is exact for exact stamps; noisy ones move its ends by as much as they stray.
    if (e.estimate.both_directions) r.uncertainty_ns = e.estimate.within();
    r.samples = e.estimate.samples;
    r.both_directions = e.estimate.both_directions;
    ctx.emit(kOffsetSchema, &r);
  }
}

}  // namespace offsets
}  // namespace rdmatel
