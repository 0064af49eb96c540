// SPDX-License-Identifier: GPL-2.0-or-later
#include "plugin/capture_state.h"

#include <algorithm>
#include <cstring>

#include "engine/decode/roce_frame.h"

namespace rdmatel::plugin {

namespace {
EngineConfig with_frame_notes(EngineConfig c) {
  c.frame_notes = true;  // the plugin annotates frames
  return c;
}
}  // namespace

CaptureState::CaptureState(EngineConfig config) : engine_(with_frame_notes(std::move(config)), *this) {}

PointId CaptureState::declare_point(uint32_t interface_id, const char* name) {
  // Wireshark says "unknown" for an interface without name or description; the CLI says "if<N>".
  std::string n = (name && *name && std::strcmp(name, "unknown") != 0) ? name : "";
  PointId id = engine_.declare_point(interface_id, n);
  points_by_interface_.emplace(interface_id, id);
  return id;
}

void CaptureState::process(uint32_t frame, TimeNs ts, PointId point, int wtap_encap, const uint8_t* data,
                           uint32_t cap_len, uint32_t wire_len) {
  FrameInput in;
  in.frame = frame;
  in.ts = ts;
  in.point = point;
  in.link = link_type_from_wtap_encap(wtap_encap);
  in.data = data;
  in.cap_len = cap_len;
  in.wire_len = wire_len;
  notes_of_frame_begin_ = notes_.size();
  engine_.process(in);
}

FrameView CaptureState::view(uint32_t frame, uint32_t interface_id) {
  FrameView v;
  auto p = points_by_interface_.find(interface_id);
  if (p != points_by_interface_.end() && p->second != kNoPoint) {
    v.point = engine_.points()[p->second].name.c_str();
    PointRole role = engine_.points().role(p->second);
    if (role != PointRole::kUnknown) v.role = point_role_name(role);
  }
  if (finished_) {
    auto range = std::equal_range(notes_.begin(), notes_.end(), FrameNote{frame},
                                  [](const FrameNote& a, const FrameNote& b) { return a.frame < b.frame; });
    if (range.first != range.second) {
      v.notes = &*range.first;
      v.note_count = size_t(range.second - range.first);
    }
    return v;
  }
  current_notes_.clear();
  for (size_t i = notes_of_frame_begin_; i < notes_.size(); ++i)
    if (notes_[i].frame == frame) current_notes_.push_back(notes_[i]);
  v.notes = current_notes_.data();
  v.note_count = current_notes_.size();
  return v;
}

namespace {
// The record stored for `id` in a deque indexed by id - 1, or nullptr.
template <typename Record>
const Record* record_at(const std::deque<Record>& records, uint64_t id) {
  if (id == 0 || id > records.size()) return nullptr;
  const Record& r = records[id - 1];
  return r.id == id ? &r : nullptr;
}

template <typename Record>
void store_record(std::deque<Record>& records, const Record& r) {
  if (r.id == 0) return;
  if (r.id > records.size()) records.resize(r.id);  // ids are handed out 1, 2, ...: few new slots
  records[r.id - 1] = r;
}

// True the first time `id` (1, 2, ...) is counted.
bool count_once(std::vector<bool>& counted, uint64_t id) {
  if (id > counted.size()) counted.resize(id);
  if (counted[id - 1]) return false;
  counted[id - 1] = true;
  return true;
}
}  // namespace

const IoRecord* CaptureState::io(uint64_t id) const { return record_at(ios_, id); }

void CaptureState::on_message(const MessageRecord& m) { store_record(messages_, m); }

const MessageRecord* CaptureState::message(uint64_t id) const {
  // Follow merges (bounded: each merge points to an older, still-open message).
  const MessageRecord* m = record_at(messages_, id);
  for (int hops = 0; m && m->merged_into && hops < 64; ++hops) m = record_at(messages_, m->merged_into);
  return m && !m->merged_into ? m : nullptr;
}

void CaptureState::finish() {
  engine_.finish();
  finished_ = true;
  first_pass_ios_ = {};
  first_pass_messages_ = {};
  io_by_frame_.clear();
  message_by_frame_.clear();
  // Notes by frame; a frame's own notes keep the order the engine made them in.
  std::stable_sort(notes_.begin(), notes_.end(),
                   [](const FrameNote& a, const FrameNote& b) { return a.frame < b.frame; });
  current_notes_ = {};
  for (const IoRecord& r : ios_) {
    if (!r.id || r.provisional) continue;  // an I/O on a queue never confirmed as NVMe: no final record
    uint64_t frame = r.complete ? r.rsp_frame : r.cmd_frame;
    if (!frame) frame = r.cmd_frame ? r.cmd_frame : r.rsp_frame;
    if (frame && frame <= UINT32_MAX) io_by_frame_.emplace_back(uint32_t(frame), &r);
  }
  for (const MessageRecord& m : messages_) {
    if (!m.id || m.merged_into || m.provisional || !m.last_frame || m.last_frame > UINT32_MAX) continue;
    message_by_frame_.emplace_back(uint32_t(m.last_frame), &m);
  }
  // Ties (never expected: one completion or one message end per frame) keep record id order.
  std::sort(io_by_frame_.begin(), io_by_frame_.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first < b.first : a.second->id < b.second->id;
  });
  std::sort(message_by_frame_.begin(), message_by_frame_.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first < b.first : a.second->id < b.second->id;
  });
}

FrameCounts CaptureState::counts(uint32_t frame, const FrameView& view) {
  FrameCounts c;
  if (finished_) {
    auto less = [](const auto& e, uint32_t f) { return e.first < f; };
    for (auto it = std::lower_bound(io_by_frame_.begin(), io_by_frame_.end(), frame, less);
         it != io_by_frame_.end() && it->first == frame && c.io_count < FrameCounts::kMax; ++it)
      c.ios[c.io_count++] = it->second;
    for (auto it = std::lower_bound(message_by_frame_.begin(), message_by_frame_.end(), frame, less);
         it != message_by_frame_.end() && it->first == frame && c.message_count < FrameCounts::kMax; ++it)
      c.messages[c.message_count++] = it->second;
    return c;
  }
  // First pass: only what is known to be complete at this frame can be counted, and only once
  // (a later copy of a completion or of a message's last packet must not count it again).
  for (size_t i = 0; i < view.note_count; ++i) {
    const FrameNote& n = view.notes[i];
    if (n.kind == NoteKind::kIoCompletion && n.detail == 0 && c.io_count < FrameCounts::kMax) {
      const IoRecord* r = io(n.ref);
      if (r && r->complete && r->rsp_frame == frame && count_once(first_pass_ios_, r->id))
        c.ios[c.io_count++] = r;
    } else if (n.kind == NoteKind::kMessage && c.message_count < FrameCounts::kMax) {
      const MessageRecord* m = message(n.ref);
      if (m && m->complete && m->last_frame == frame && count_once(first_pass_messages_, m->id))
        c.messages[c.message_count++] = m;
    }
  }
  return c;
}

const Flow* CaptureState::find_flow(const FlowKey& key) {
  const FlowTable& flows = engine_.flows();
  for (; flows_indexed_ < flows.size(); ++flows_indexed_)
    flow_index_.emplace(flows[FlowId(flows_indexed_)].key, FlowId(flows_indexed_));
  auto it = flow_index_.find(key);
  return it == flow_index_.end() ? nullptr : &flows[it->second];
}

bool CaptureState::endpoints(int wtap_encap, const uint8_t* data, uint32_t cap_len, uint32_t wire_len,
                             FrameEndpoints& out) {
  if (!data) return false;
  RoceFrame f;
  if (decode_roce_frame(link_type_from_wtap_encap(wtap_encap), data, cap_len, wire_len, f) != FrameKind::kRoce)
    return false;
  out.src = f.src;
  out.dst = f.dst;
  out.dst_qpn = f.bth.dest_qp;
  out.src_qpn_known = false;
  if (f.has(kExtDeth)) {
    out.src_qpn = f.deth_src_qp;  // UD: the sender names its QP
    out.src_qpn_known = true;
  } else if (const Flow* flow = find_flow(FlowKey{f.src, f.dst, f.bth.dest_qp}); flow && flow->peer != kNoFlow) {
    out.src_qpn = engine_.flows()[flow->peer].key.dst_qpn;
    out.src_qpn_known = true;
  }
  return true;
}

void CaptureState::on_frame_note(const FrameNote& n) { notes_.push_back(n); }

void CaptureState::on_io(const IoRecord& r) { store_record(ios_, r); }

}  // namespace rdmatel::plugin
