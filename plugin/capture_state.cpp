// SPDX-License-Identifier: GPL-2.0-or-later
#include "plugin/capture_state.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <iterator>
#include <string>
#include <string_view>
#include <system_error>
#include <tuple>
#include <type_traits>
#ifdef __GLIBC__
#include <malloc.h>  // malloc_trim
#endif

#include "rdmatel/capture.h"  // kRingFileOverlap
#include "rdmatel/dense_sort.h"

namespace rdmatel::plugin {

NoteKinds::NoteKinds() {
  const char* stages[] = {"io.command", "io.data", "io.read_request", "io.read_response", "io.completion"};
  for (int i = 0; i < 5; ++i) io_stage[i] = note_kind(stages[i]);
  io_unparseable = note_kind("io.unparseable");
  io_orphan = note_kind("io.orphan");
  msg_packet = note_kind("msg.packet");
  msg_nak = note_kind("msg.nak");
  msg_nak_read = note_kind("msg.nak_read");
  ecn_ce = note_kind("cong.ecn_ce");
  cnp = note_kind("cong.cnp");
  pfc = note_kind("cong.pfc");
  pfc_storm = note_kind("cong.pfc_storm");
  diag_finding = note_kind("diag.finding");
  path_hop = note_kind("path.hop");
  path_lost = note_kind("path.lost");
  path_late = note_kind("path.late");
  path_record = note_kind("path.record");
}

int NoteKinds::stage_of(NoteKind k) const {
  for (int i = 0; i < int(std::size(io_stage)); ++i)
    if (io_stage[i] == k) return i;
  return -1;
}

const NoteKinds& note_kinds() {
  static const NoteKinds kinds;
  return kinds;
}

namespace {
// What the plugin wants of the engine: notes on frames, and no spike alerts (alert records,
// which nothing in Wireshark shows; the "slow" items evaluate the threshold rules per frame).
Settings for_the_plugin(Settings s) {
  s.frame_notes = true;
  std::string ignored;
  s.set("spike_factor", "0", ignored);
  return s;
}
}  // namespace

CaptureState::CaptureState(const Settings& settings, bool engine_thread)
    : engine_(for_the_plugin(settings)), alert_rules_(alerts::alert_rules(settings.list("alert"))) {
  engine_.subscribe(store_);
  engine_.subscribe(warnings_);
  engine_.subscribe(flow_inputs_);
  if (engine_thread) {
    try {
      engine_thread_ = std::make_unique<EngineThread>([this](const FrameIn& in) { engine_.push(in); });
    } catch (const std::system_error&) {
      // No thread to be had (a limit on threads): everything is measured on Wireshark's.
    }
  }
}

CaptureState::~CaptureState() = default;

void CaptureState::wait_for_engine_thread() {
  hand_over_held(/*now=*/true);
  if (engine_thread_ && !engine_thread_->wait_idle()) engine_thread_failed_ = true;
}

void CaptureState::hold(const FrameIn& in, uint32_t interface_id, const char* new_point_name) {
  held_.in = in;
  held_.has_bytes = in.data != nullptr;
  held_.bytes.assign(in.data, in.data + (in.data ? in.cap_len : 0));
  held_.interface = interface_id;
  held_.new_point = new_point_name != nullptr;
  held_.point_name = new_point_name ? new_point_name : "";
  held_.valid = true;
}

void CaptureState::frames_shown_once() {
  shown_once_ = true;
  wait_for_engine_thread();  // the store is the engine thread's while it pushes
  store_.keep_notes(false);
  store_.forget_notes();
  frame_points_ = {};
}

void CaptureState::not_measured_before(uint32_t frame) {
  if (frame <= 1) return;
  warnings_.texts.push_back("frames 1 to " + std::to_string(frame - 1) +
                            " were not measured: nothing read rdmatel's results when they were dissected");
}

void CaptureState::section_began(uint32_t section, uint32_t frame, TimeNs ts, bool has_ts) {
  section_ = section;
  // (A ring file's first stamps may step back a little behind its predecessor's last.)
  if (!has_ts || !stamped_ || ts >= newest_stamp_ || newest_stamp_ - ts <= kRingFileOverlap) return;
  char back[32];
  std::snprintf(back, sizeof back, "%.3f s", double(newest_stamp_ - ts) / 1e9);
  wait_for_engine_thread();  // the warnings are the engine thread's while it pushes
  // (Short: Wireshark cuts an expert info's text at 240 bytes.)
  warnings_.texts.push_back("pcapng section " + std::to_string(section + 1) + " (frame " + std::to_string(frame) +
                            " on) begins " + back +
                            " before the frames before it end: per-point files joined with cat? Read after them, "
                            "what it shares with them (I/Os, hops) is measured without it: join them with mergecap");
}

void CaptureState::hand_over_held(bool now) {
  if (!held_.valid) return;
  held_.valid = false;
  FrameIn& in = held_.in;
  if (held_.new_point) {
    in.point = declare_point(held_.interface, held_.point_name.c_str());
    if (in.frame && in.frame <= frame_points_.size()) frame_points_[in.frame - 1] = in.point;
  }
  in.data = held_.has_bytes ? held_.bytes.data() : nullptr;
  if (engine_thread_ && !now)
    engine_thread_->add(in);  // still revocable there
  else
    engine_.push(in);
}

void CaptureState::first_pass_frame_number(uint32_t frame) {
  // Wireshark numbers a record dropped by a read filter (tshark -2 -R, the GUI's read filter) and
  // gives the next one the same number: the frame before was dropped, and must not be measured.
  if (frame && frame == newest_frame_) {
    take_back_dropped(frame);
    read_filter_ = true;
  } else {
    hand_over_held(/*now=*/false);  // the frame before was kept
  }
  newest_frame_ = frame;
}

void CaptureState::take_back_dropped(uint32_t frame) {
  if (held_.valid && held_.in.frame == frame) {
    held_.valid = false;
    return;
  }
  if (engine_thread_ && engine_thread_->retract(frame)) return;
  if (read_filter_) return;  // known already
  // Its results were read as it was dissected (a filter on rdmatel fields), so it was measured;
  // from now on every frame of the first pass waits for the next one (process).
  wait_for_engine_thread();  // the warnings are the engine thread's while it pushes
  warnings_.texts.push_back("a read filter (tshark -R, the GUI's) dropped frame " + std::to_string(frame) +
                            " after rdmatel had measured it (rdmatel results were read as it was dissected): what "
                            "rdmatel found about it may show on the frame numbered " + std::to_string(frame) +
                            " now. The frames dropped later were left out");
}

void CaptureState::settle() {
  wait_for_engine_thread();
  report_engine_thread_failure();
}

void CaptureState::report_engine_thread_failure() {
  if (engine_thread_failed_) {
    engine_thread_failed_ = false;
    throw std::runtime_error("a frame could not be measured on the engine thread");
  }
}

PointId CaptureState::declare_point(uint32_t interface_id, const char* name) {
  wait_for_engine_thread();  // the engine's point table changes
  // Wireshark says "unknown" for an interface without name or description; the CLI says "if<N>".
  std::string n = (name && *name && std::strcmp(name, "unknown") != 0) ? name : "if" + std::to_string(interface_id);
  PointId id = engine_.declare_point(n, interface_id);
  points_by_interface_.emplace(interface_id, id);
  return id;
}

void CaptureState::process(uint32_t frame, TimeNs ts, bool has_ts, uint32_t interface_id, PointId point,
                           int wtap_encap, const uint8_t* data, uint32_t cap_len, uint32_t wire_len, bool shown,
                           const char* new_point_name) {
  FrameIn in;
  in.frame = frame;
  in.ts = ts;
  in.has_ts = has_ts;
  in.source = interface_id;  // one file: each interface is a capture of its own
  in.point = point;
  in.link = link_type_from_wtap_encap(wtap_encap);
  in.data = data;
  in.cap_len = cap_len;
  in.wire_len = wire_len;
  if (read_filter_) shown = false;  // measured once the next frame shows it was kept
  if (!shown_once_) {
    if (frame > frame_points_.size()) frame_points_.resize(frame, kNoPoint);
    if (frame) frame_points_[frame - 1] = point;
  }
  // A frame whose results nobody reads now is measured once the next frame shows it was kept
  // (on the engine thread, or held back here).
  if (new_point_name || (!engine_thread_ && !shown)) {
    hold(in, interface_id, new_point_name);
    return;
  }
  if (!shown) {
    engine_thread_->add(in);
    return;
  }
  wait_for_engine_thread();
  if (shown_once_) {
    // The frames shown before will not be shown again: only this one's notes are kept.
    store_.forget_notes();
    store_.keep_notes(true);
    notes_kept_ = true;
  }
  notes_of_frame_begin_ = store_.note_count();
  engine_.push(in);
  report_engine_thread_failure();  // now that this frame is in
}

void CaptureState::index_io_frames() {
  struct Entry {
    uint64_t io;
    IoFrameLink link;
  };
  std::vector<Entry> entries;
  const NoteKinds& k = note_kinds();
  for (const FrameNote& n : store_.all_notes()) {
    const int stage = k.stage_of(n.kind);
    if (stage < 0 || !n.ref || n.detail == 1) continue;  // detail 1: a repeated copy
    PointId point = n.frame && n.frame <= frame_points_.size() ? frame_points_[n.frame - 1] : kNoPoint;
    if (point != kNoPoint) point = engine_.frame_point(n.frame, point);  // an ERSPAN session's
    entries.push_back({n.ref, {n.frame, point, uint8_t(stage)}});
  }
  // The notes come sorted by frame (RecordStore::index), so grouped by I/O (ids are dense from 1)
  // without changing their order each I/O's frames stay in frame order; of each (point, stage)
  // the first is kept: the frame its stamp comes from. Linear: comparison sorts of every stage
  // note took longer than the rest of the end of the first pass.
  stable_sort_by_dense_key(entries, [](const Entry& e) { return e.io; });
  constexpr size_t kStageSlotsPerPoint = std::extent_v<decltype(NoteKinds::io_stage)>;  // the last point: none known
  std::vector<uint64_t> kept_for(kStageSlotsPerPoint * (size_t(engine_.point_count()) + 1), 0);
  auto slot = [&](const IoFrameLink& l) {
    const size_t point = l.point < engine_.point_count() ? size_t(l.point) : size_t(engine_.point_count());
    return point * kStageSlotsPerPoint + l.stage;
  };
  io_frame_ids_.reserve(entries.size());
  io_frame_links_.reserve(entries.size());
  for (const Entry& e : entries) {
    uint64_t& kept = kept_for[slot(e.link)];
    if (kept == e.io) continue;
    kept = e.io;
    io_frame_ids_.push_back(e.io);
    io_frame_links_.push_back(e.link);
  }
}

std::span<const IoFrameLink> CaptureState::io_frames(uint64_t io_id) const {
  auto range = std::equal_range(io_frame_ids_.begin(), io_frame_ids_.end(), io_id);
  return std::span<const IoFrameLink>(io_frame_links_)
      .subspan(size_t(range.first - io_frame_ids_.begin()), size_t(range.second - range.first));
}

void CaptureState::finish(const std::vector<uint64_t>& capture_drops, uint32_t frames_kept) {
  // With a read filter, the newest frame is kept only if a frame numbered after it came, or if the
  // first pass kept as many frames as its number (a dropped record's number goes to the next
  // one). Otherwise it is left out rather than measured when it may have been dropped. (The
  // file's last frame is often a copy at the last point: left out, its packet was lost there.)
  if (read_filter_ && !(frames_kept && newest_frame_ && frames_kept >= newest_frame_)) {
    held_.valid = false;
    if (engine_thread_) engine_thread_->retract(newest_frame_);
  }
  settle();
  // (Not at a point that carried no frame: a read filter dropped every frame of its interface.)
  for (uint32_t id = 0; id < capture_drops.size(); ++id)
    if (auto p = points_by_interface_.find(id); capture_drops[id] && p != points_by_interface_.end() &&
                                                p->second != kNoPoint && engine_.point(p->second).packets)
      engine_.set_capture_dropped(p->second, capture_drops[id]);
  engine_.finish();
  if (read_filter_) qualify_waits_for_filtered_points();
  store_.index();
  index_io_frames();
  find_flow_findings();  // (sending_qpn reads the engine's queue pairs: before they are released)
  frame_points_ = {};
  first_pass_ios_ = {};
  first_pass_messages_ = {};
  current_notes_ = {};
  newest_note_of_frame_ = {};
  previous_note_ = {};
  // The engine's measuring state (a reorder window of packets, messages and I/Os: 77 MiB of the
  // plugin's 303 on the 2.2 M-packet benchmark capture) is dead from here on, while Wireshark
  // keeps the capture open: only the record store and the points and flows are read.
  engine_.release_measurement_state();
#ifdef __GLIBC__
  // Much of it sat amid the heap, where free() keeps it; this gives those pages back too.
  malloc_trim(0);
#endif
}

void CaptureState::qualify_waits_for_filtered_points() {
  // Every interface the file describes is a point from frame 1 (declare_file_interfaces), and the
  // engine waits for one that has carried nothing yet as for a point whose clock runs behind:
  // beyond --max-path-packets it settles early and names that point as one that may still come.
  // A point whose every frame the read filter dropped never came: the warning says that instead
  // (in place: Wireshark cuts an expert info's text at 240 bytes).
  static constexpr std::string_view kBefore = "(point ", kAfter = " has carried no packet yet";
  for (std::string& text : warnings_.texts) {
    const size_t begin = text.find(kBefore), end = text.find(kAfter);
    if (begin == std::string::npos || end == std::string::npos || end < begin + kBefore.size()) continue;
    const size_t close = text.find(')', end);
    if (close == std::string::npos) continue;
    const std::string name = text.substr(begin + kBefore.size(), end - begin - kBefore.size());
    for (const auto& [interface_id, point] : points_by_interface_)
      if (point != kNoPoint && engine_.point_name(point) == name && engine_.point(point).packets == 0) {
        text.replace(begin, close + 1 - begin,
                     "(the read filter kept no frame of point " + name + ", interface " +
                         std::to_string(interface_id) + ")");
        break;
      }
  }
}

void CaptureState::FlowDiagnosisInputs::on_record(const Record& r) {
  if (r.provisional) return;  // every record ends with one final version: only those count
  if (r.is(kMessageSchema)) {
    const MessageRecord& m = r.as<MessageRecord>();
    flows.add(m);
    if (!m.retrans_packets && !m.naks) return;
    WorstMessage& w = worst_message[{m.src, m.dst, m.dst_qpn, m.point}];
    if (std::tie(m.retrans_packets, m.naks) > std::tie(w.retrans_packets, w.naks))
      w = {m.retrans_packets, m.naks, m.first_frame};
  } else if (r.is(kCongestionSchema)) {
    const CongestionHead& h = r.as<CongestionHead>();
    if (const auto* e = congestion_as<EcnRecord>(h)) congestion.push_back(*e);
    else if (const auto* p = congestion_as<PfcRecord>(h)) pfc.push_back(*p);
  }
}

uint64_t CaptureState::frame_to_look_at(const FlowFinding& f) const {
  switch (f.kind) {
    case FlowFinding::Kind::kLoss: {
      // Its message resent most where the flow resent most; a loss no resend shows (NAKs, hops
      // only): the first packet of its lossiest hop, its own or its queue pair's other direction's.
      auto w = flow_inputs_.worst_message.find({f.src, f.dst, f.dst_qpn, f.retrans_point});
      if (w != flow_inputs_.worst_message.end() && w->second.first_frame) return w->second.first_frame;
      if (f.lossiest_hop) return f.lossiest_hop->first_frame;
      if (f.peer_lossiest_hop) return f.peer_lossiest_hop->first_frame;
      return 0;
    }
    case FlowFinding::Kind::kCongestion:
      // Its first packet where it is marked most: where -z rdmatel,congestion counts that record.
      for (const EcnRecord& e : flow_inputs_.congestion)
        if (e.point == f.ce_point && e.dst_qpn == f.dst_qpn && e.src == f.src && e.dst == f.dst) return e.first_frame;
      return 0;
    case FlowFinding::Kind::kPause: {
      // The first pause frame of the priority that paused most at its points.
      const FlowFinding::Pause* most = nullptr;
      for (const FlowFinding::Pause& p : f.pauses)
        if (!most || p.pfc.pause_frames > most->pfc.pause_frames) most = &p;
      return most ? most->pfc.first_frame : 0;
    }
  }
  return 0;
}

void CaptureState::find_flow_findings() {
  const std::vector<PathRecord> hops(store_.paths().begin(), store_.paths().end());
  const std::vector<FlowFinding> findings = rdmatel::find_flow_findings(
      flow_inputs_.flows, flow_inputs_.congestion, flow_inputs_.pfc, hops,
      [&](const IpAddress& s, const IpAddress& d, uint32_t q) { return engine_.sending_qpn(s, d, q); });
  // Named as analyze names them (cli/flow_diagnosis_table.cpp).
  const PointNamer name = [&](PointId p) -> const std::string& { return engine_.point_name(p); };
  const CaptureDrops dropped = [&](PointId p) {
    return p < engine_.point_count() ? engine_.point(p).capture_dropped : 0;
  };
  flow_findings_.reserve(findings.size());
  for (const FlowFinding& f : findings) {
    FlowFindingRow row;
    row.finding = f;
    row.rank = uint32_t(flow_findings_.size() + 1);
    // Every finding is counted on some frame (a row for each, as analyze lists each): one with
    // no frame of its own, which its records always give, on the first.
    row.frame = std::max<uint64_t>(frame_to_look_at(f), 1);
    row.verdict = flow_finding_verdict(f, name, dropped);
    row.evidence = flow_finding_evidence(f, name);
    switch (f.kind) {
      case FlowFinding::Kind::kLoss: row.point = name(f.retrans_point); break;
      case FlowFinding::Kind::kCongestion: row.point = name(f.ce_point); break;
      case FlowFinding::Kind::kPause: {
        std::vector<PointId> named;  // each point once (a point pauses several priorities)
        for (const FlowFinding::Pause& p : f.pauses) {
          if (std::find(named.begin(), named.end(), p.pfc.point) != named.end()) continue;
          named.push_back(p.pfc.point);
          row.point += (row.point.empty() ? "" : ", ") + name(p.pfc.point);
        }
        break;
      }
    }
    if (f.lossiest_hop) row.hop = name(f.lossiest_hop->from_point) + " -> " + name(f.lossiest_hop->to_point);
    flow_findings_.push_back(std::move(row));
  }
  std::stable_sort(flow_findings_.begin(), flow_findings_.end(),
                   [](const FlowFindingRow& a, const FlowFindingRow& b) { return a.frame < b.frame; });
  flow_inputs_ = {};  // dead from here on
}

std::span<const FlowFindingRow> CaptureState::flow_findings_on(uint64_t frame) const {
  // (flow_findings_ is sorted by frame to look at, then rank.)
  struct FrameOrder {
    bool operator()(const FlowFindingRow& r, uint64_t f) const { return r.frame < f; }
    bool operator()(uint64_t f, const FlowFindingRow& r) const { return f < r.frame; }
  };
  auto [first, last] = std::equal_range(flow_findings_.begin(), flow_findings_.end(), frame, FrameOrder{});
  return {first, last};
}

std::span<const FrameNote> CaptureState::notes_so_far(uint32_t frame) {
  const std::span<const FrameNote> all = store_.all_notes();
  for (size_t i = previous_note_.size(); i < all.size() && i < UINT32_MAX; ++i) {
    const uint64_t f = all[i].frame;
    if (f == 0 || f > UINT32_MAX) {  // about no frame: in no frame's chain
      previous_note_.push_back(0);
      continue;
    }
    if (f > newest_note_of_frame_.size()) newest_note_of_frame_.resize(size_t(f), 0);
    previous_note_.push_back(newest_note_of_frame_[f - 1]);
    newest_note_of_frame_[f - 1] = uint32_t(i + 1);
  }
  current_notes_.clear();
  if (frame == 0 || frame > newest_note_of_frame_.size()) return {};
  for (uint32_t n = newest_note_of_frame_[frame - 1]; n; n = previous_note_[n - 1]) current_notes_.push_back(all[n - 1]);
  std::reverse(current_notes_.begin(), current_notes_.end());  // in the order they were made
  return current_notes_;
}

FrameView CaptureState::view(uint32_t frame, uint32_t interface_id, bool again) {
  settle();
  FrameView v;
  auto p = points_by_interface_.find(interface_id);
  if (p != points_by_interface_.end() && p->second != kNoPoint) {
    v.point = engine_.point_name(p->second).c_str();
    v.point_id = p->second;
  }
  if (finished()) {
    v.notes = store_.notes(frame);
    if (frame == 1) v.warnings = warnings_.texts;
    return v;
  }
  if (again) {
    v.notes = notes_so_far(frame);
    return v;
  }
  v.warnings = std::span<const std::string>(warnings_.texts).subspan(warnings_shown_);
  warnings_shown_ = warnings_.texts.size();
  current_notes_.clear();
  for (const FrameNote& n : store_.notes_since(notes_of_frame_begin_))
    if (n.frame == frame) current_notes_.push_back(n);
  v.notes = current_notes_;
  return v;
}

namespace {
// True the first time `id` (1, 2, ...) is counted.
bool count_once(std::vector<bool>& counted, uint64_t id) {
  if (id > counted.size()) counted.resize(id);
  if (counted[id - 1]) return false;
  counted[id - 1] = true;
  return true;
}
}  // namespace

FrameCounts CaptureState::counts(uint32_t frame, const FrameView& view, bool again) {
  settle();
  FrameCounts c;
  if (finished()) {
    for (const IoRecord* r : store_.ios_counted_on(frame))
      if (c.io_count < FrameCounts::kMax) c.ios[c.io_count++] = r;
    for (const MessageRecord& m : store_.messages_counted_on(frame))
      if (c.message_count < FrameCounts::kMax) c.messages[c.message_count++] = m;
    for (const FrameNote& n : view.notes)
      if (n.kind == note_kinds().diag_finding && !c.finding) c.finding = finding(n.ref);
      else if (n.kind == note_kinds().path_record && !c.hop) c.hop = path(n.ref);
    c.congestion = store_.congestion_counted_on(frame);
    c.cnp = store_.cnp_counted_on(frame);
    for (const PfcRecord* p : store_.pfc_counted_on(frame))
      if (c.pfc_count < std::size(c.pfc)) c.pfc[c.pfc_count++] = p;
    c.flow_findings = flow_findings_on(frame);
    return c;
  }
  // First pass: only what is known to be complete at this frame can be counted, and only once
  // (a later copy of a completion or of a message's last packet must not count it again). A
  // frame dissected again (statistics gathered again while a live capture runs) counts what it
  // completes as known now; the pass over all frames counts each record once, on its frame.
  const NoteKinds& k = note_kinds();
  auto io_once = [&](uint64_t id) {
    if (!again) return count_once(first_pass_ios_, id);
    return std::none_of(c.ios, c.ios + c.io_count, [&](const IoRecord* r) { return r->id == id; });
  };
  auto message_once = [&](uint64_t id) {
    if (!again) return count_once(first_pass_messages_, id);
    return std::none_of(c.messages, c.messages + c.message_count, [&](const MessageRecord& m) { return m.id == id; });
  };
  for (const FrameNote& n : view.notes) {
    if (n.kind == k.io_stage[4] && n.detail == 0 && c.io_count < FrameCounts::kMax) {
      const IoRecord* r = io(n.ref);
      if (r && r->complete && r->rsp_frame == frame && io_once(r->id)) c.ios[c.io_count++] = r;
    } else if (n.kind == k.msg_packet && n.ref && c.message_count < FrameCounts::kMax) {
      // Every packet of a message carries such a note: its record is made only where it counts.
      const uint64_t id = store_.message_completed_on(n.ref, frame);
      if (id && message_once(id)) c.messages[c.message_count++] = *store_.message(id);
    }
  }
  return c;
}

bool CaptureState::endpoints(int wtap_encap, const uint8_t* data, uint32_t cap_len, uint32_t wire_len,
                             FrameEndpoints& out) {
  settle();  // the engine's flows are read
  RoceHeaders h;
  if (!peek_roce(link_type_from_wtap_encap(wtap_encap), data, cap_len, wire_len, h)) return false;
  out.src = h.src;
  out.dst = h.dst;
  out.dst_qpn = h.dst_qpn;
  out.mirror_id = h.mirror_id;
  out.mirror_src = h.mirror_src;
  out.src_qpn_known = false;
  if (h.has_src_qpn) {
    out.src_qpn = h.src_qpn;  // UD: the sender names its QP
    out.src_qpn_known = true;
  } else if (auto q = engine_.sending_qpn(h.src, h.dst, h.dst_qpn)) {
    out.src_qpn = *q;
    out.src_qpn_known = true;
  }
  return true;
}

}  // namespace rdmatel::plugin
