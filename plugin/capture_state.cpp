// SPDX-License-Identifier: GPL-2.0-or-later
#include "plugin/capture_state.h"

#include <cstring>

namespace rdmatel::plugin {

namespace {
EngineConfig with_frame_notes(EngineConfig c) {
  c.frame_notes = true;  // the plugin annotates frames
  return c;
}
}  // namespace

CaptureState::CaptureState(EngineConfig config) : engine_(with_frame_notes(std::move(config)), *this) {}

PointId CaptureState::point_for(uint32_t interface_id, const char* name) {
  auto it = points_by_interface_.find(interface_id);
  if (it != points_by_interface_.end()) return it->second;
  // Wireshark says "unknown" for an interface without name or description; the CLI says "if<N>".
  std::string n = (name && *name && std::strcmp(name, "unknown") != 0) ? name : "";
  PointId id = engine_.declare_point(interface_id, n);
  points_by_interface_.emplace(interface_id, id);
  return id;
}

void CaptureState::process(uint32_t frame, TimeNs ts, uint32_t interface_id, const char* interface_name,
                           int wtap_encap, const uint8_t* data, uint32_t cap_len, uint32_t wire_len) {
  FrameInput in;
  in.frame = frame;
  in.ts = ts;
  in.point = point_for(interface_id, interface_name);
  in.link = link_type_from_wtap_encap(wtap_encap);
  in.data = data;
  in.cap_len = cap_len;
  in.wire_len = wire_len;
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
  auto n = notes_.find(frame);
  if (n != notes_.end()) {
    v.notes = n->second.data();
    v.note_count = n->second.size();
  }
  return v;
}

const IoRecord* CaptureState::io(uint64_t id) const {
  auto it = ios_.find(id);
  return it == ios_.end() ? nullptr : &it->second;
}

void CaptureState::on_message(const MessageRecord& m) {
  if (m.merged_into) {
    merged_[m.id] = m.merged_into;
    messages_.erase(m.id);
    return;
  }
  messages_[m.id] = m;
}

const MessageRecord* CaptureState::message(uint64_t id) const {
  // Follow merges (bounded: each merge points to an older, still-open message).
  for (int hops = 0; hops < 64; ++hops) {
    auto m = merged_.find(id);
    if (m == merged_.end()) break;
    id = m->second;
  }
  auto it = messages_.find(id);
  return it == messages_.end() ? nullptr : &it->second;
}

void CaptureState::on_frame_note(const FrameNote& n) { notes_[uint32_t(n.frame)].push_back(n); }

void CaptureState::on_io(const IoRecord& r) { ios_[r.id] = r; }

}  // namespace rdmatel::plugin
