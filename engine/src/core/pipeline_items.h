// SPDX-License-Identifier: GPL-2.0-or-later
// What crosses between the engine's threads (threads > 1, core/pair_local_worker.h):
//  - work for the pair-local components: the packets they asked for, the horizons that moved, the
//    end, and the facts they read (points declared, flows created and paired), each in the place
//    it has on one thread;
//  - what components produced (records, frame notes, warnings), each tagged with the step that
//    produced it, so that one merge puts everything in the order one thread gives.
#pragma once

#include <compare>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/src/core/flows.h"
#include "engine/src/decode/packet.h"
#include "rdmatel/sink.h"

namespace rdmatel {

/// Where an output has its place in the one-thread order. A step is one call of the components: a
/// packet handled, a point's horizon moved, the end of the capture. Within a step, slot 0 is the
/// core before the components, 1 + i component i of the registry, kAfterComponents the core after
/// them (and between steps).
struct StepTag {
  uint64_t step = 0;
  uint16_t slot = 0;
  static constexpr uint16_t kAfterComponents = 0xFFFF;
  friend auto operator<=>(const StepTag&, const StepTag&) = default;
};
/// After every step: what a thread that has ended promises.
inline constexpr StepTag kEndOfSteps{UINT64_MAX, StepTag::kAfterComponents};

/// One output of a component or of the core, waiting for its place.
struct OutItem {
  enum class Kind : uint8_t {
    kRecord,
    kNote,
    kWarning,         ///< delivered the first time its key comes (Warnings)
    kDirectWarning,   ///< delivered as it is (the roles' contradictions at the end)
    kFinishStage,     ///< the record stage in `slot` finishes here
  };
  StepTag tag;
  Kind kind = Kind::kRecord;
  bool provisional = false;
  const RecordSchema* schema = nullptr;
  void* record = nullptr;  ///< a copy (schema->copy), owned
  FrameNote note;
  std::string_view key;
  std::string text;

  OutItem() = default;
  OutItem(OutItem&& o) noexcept { *this = std::move(o); }
  OutItem& operator=(OutItem&& o) noexcept {
    if (this != &o) {
      free_record();
      tag = o.tag;
      kind = o.kind;
      provisional = o.provisional;
      schema = o.schema;
      record = std::exchange(o.record, nullptr);
      note = o.note;
      key = o.key;
      text = std::move(o.text);
    }
    return *this;
  }
  ~OutItem() { free_record(); }
  void free_record() {
    if (record) schema->copy.destroy(record);
    record = nullptr;
  }
};

/// A thread's outputs handed over at once, and `bound`: every later output of that thread has a
/// tag at or after it.
struct OutBatch {
  std::vector<OutItem> items;
  StepTag bound;
};

/// Where a record whose place in the order is already certain can go at once (the merge, on the
/// thread that runs it): `pending` are the collector's outputs made before it, not handed over yet.
class DirectDelivery {
 public:
  /// Delivers `r`, made at `tag`, if everything that goes before it is out; false: keep a copy.
  virtual bool deliver_now(const Record& r, StepTag tag, std::vector<OutItem>& pending) = 0;

 protected:
  ~DirectDelivery() = default;
};

/// A sink that keeps what a thread's components produce, tagged with `cursor` (the step and slot
/// the thread is at), for the merge.
class OutputCollector final : public RecordSink {
 public:
  explicit OutputCollector(const StepTag& cursor) : cursor_(cursor) {}
  /// On the thread that runs the merge: a record goes out as it is made when its turn has come
  /// (nearly always: the home thread runs ahead), instead of as a copy queued for the merge.
  void deliver_directly(DirectDelivery* to) { direct_ = to; }
  void on_record(const Record& r) override {
    if (direct_ && direct_->deliver_now(r, cursor_, items_)) return;
    if (!r.schema->copy.clone)
      throw std::logic_error(std::string("record kind '") + r.schema->channel + "' cannot cross threads (no RecordCopy)");
    OutItem& i = add(OutItem::Kind::kRecord);
    i.schema = r.schema;
    i.record = r.schema->copy.clone(r.data);
    i.provisional = r.provisional;
  }
  void on_note(const FrameNote& n) override { add(OutItem::Kind::kNote).note = n; }
  void on_warning(const Warning& w) override { add_warning(w, OutItem::Kind::kWarning); }
  void add_warning(const Warning& w, OutItem::Kind kind) {
    OutItem& i = add(kind);
    i.key = w.key;
    i.text = w.text;
  }
  void add_finish_stage(uint16_t slot) { add(OutItem::Kind::kFinishStage).tag.slot = slot; }

  std::vector<OutItem>& items() { return items_; }

 private:
  OutItem& add(OutItem::Kind kind) {
    OutItem& i = items_.emplace_back();
    i.tag = cursor_;
    i.kind = kind;
    return i;
  }
  const StepTag& cursor_;
  DirectDelivery* direct_ = nullptr;
  std::vector<OutItem> items_;
};

/// A point the front end declared (the replica declares it too, in the same order).
struct PointDeclaration {
  std::string name;
  uint32_t interface_id = 0;
  uint64_t speed_bps = 0;
};

/// One thing for the pair-local components' thread to do, in one-thread order.
struct WorkEvent {
  enum class Kind : uint8_t {
    kPacket,   ///< step `step`: `packet` (of class `cls`) to the components that ask for it
    kAdvance,  ///< step `step`: point `index`'s horizon moved to `horizon`
    kFinish,   ///< step `step`: the component in `slot` finishes
    kFact,     ///< a flow created or paired: the batch's facts[index]
    kDeclare,  ///< a point declared: the batch's declares[index]
    kCaptureDropped,  ///< point `index`'s capture dropped `step` packets (Engine::set_capture_dropped)
  };
  Kind kind = Kind::kPacket;
  /// kPacket: bit s set when components sampled as Sampled(s) measure it; bit 7 is
  /// Ctx::packet_shown_now.
  uint8_t measured = 0;
  uint16_t slot = 0;
  uint32_t cls = 0;
  uint32_t index = 0;
  uint64_t step = 0;
  TimeNs horizon = 0;
  Packet packet;

  WorkEvent() = default;
  /// A packet's step (made in place: the packet is written once).
  WorkEvent(const Packet& p, uint64_t step_, uint32_t cls_, uint8_t measured_)
      : kind(Kind::kPacket), measured(measured_), cls(cls_), step(step_), packet(p) {}
};

struct WorkBatch {
  std::vector<WorkEvent> events;
  std::vector<FlowFact> facts;
  std::vector<PointDeclaration> declares;
  bool end = false;  ///< the last batch: the capture ended (finish ran)

  void clear() {
    events.clear();
    facts.clear();
    declares.clear();
    end = false;
  }
};

}  // namespace rdmatel
