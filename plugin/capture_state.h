// SPDX-License-Identifier: GPL-2.0-or-later
// Per-capture-file state of the Wireshark plugin: the engine, fed on the first pass, and what it
// produced (the engine's RecordStore), for display on every pass. C++ only; no Wireshark calls in
// here, so no Wireshark exception can unwind through it.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "plugin/engine_thread.h"
#include "rdmatel/alert_rule.h"
#include "rdmatel/engine.h"
#include "rdmatel/flow_diagnosis.h"
#include "rdmatel/record_store.h"
#include "rdmatel/report.h"

namespace rdmatel::plugin {

/// What the display code needs about one frame; plain data.
struct FrameView {
  const char* point = nullptr;  ///< observation point name
  PointId point_id = kNoPoint;
  std::span<const FrameNote> notes;
  /// The engine's warnings this frame shows (the snap length cuts NVMe commands, a limit was
  /// reached, clocks disagree, ...): after the first pass all of them, on frame 1; during it the
  /// ones raised since the last frame shown.
  std::span<const std::string> warnings;
};

/// A finding of the message-flow diagnosis (rdmatel/flow_diagnosis.h) as the plugin shows it: the
/// engine's finding, its place in `rdmatel analyze`'s list, the frame to look at, and its texts,
/// made once the first pass is over with the points' names (no engine at hand where it is shown).
struct FlowFindingRow {
  FlowFinding finding;
  uint32_t rank = 0;   ///< 1 = listed first by analyze, 2 the next, ...
  uint64_t frame = 0;  ///< where to look (CaptureState::frame_to_look_at)
  std::string verdict, evidence;  ///< flow_finding_verdict / flow_finding_evidence, as analyze says them
  std::string point;  ///< where it stands out: the point that resent most, was marked most, or paused it
  std::string hop;    ///< its lossiest hop, "A -> B" ("" when none lost a packet)
};

/// What a message-flow finding stands out by: "loss", "congestion" or "PFC pauses".
inline const char* flow_finding_kind_text(FlowFinding::Kind k) {
  switch (k) {
    case FlowFinding::Kind::kLoss: return "loss";
    case FlowFinding::Kind::kCongestion: return "congestion";
    case FlowFinding::Kind::kPause: return "PFC pauses";
  }
  return "";
}

/// The records a frame contributes to the statistics; each I/O and message is counted on exactly
/// one frame. Pointers stay valid until the next call to process(); messages are copies (the
/// store keeps them compactly and makes each record on request).
struct FrameCounts {
  static constexpr size_t kMax = 2;
  size_t io_count = 0;
  const IoRecord* ios[kMax] = {};
  size_t message_count = 0;
  MessageRecord messages[kMax];
  const DiagnosisRecord* finding = nullptr;  ///< a diagnosis finding shown on this frame
  const EcnRecord* congestion = nullptr;  ///< a flow's congestion, on its first packet at its point
  const CnpRecord* cnp = nullptr;         ///< an IP pair's CNPs, on its first CNP at its point
  size_t pfc_count = 0;
  const PfcRecord* pfc[8] = {};  ///< PFC priorities, on their first PFC frame at their point
  const PathRecord* hop = nullptr;           ///< a hop record counted on this frame (its first at A)
  std::span<const FlowFindingRow> flow_findings;  ///< message-flow findings to look at here, by rank
};

/// The RDMA endpoints (IP + QPN) of a RoCEv2 frame.
struct FrameEndpoints {
  IpAddress src, dst;
  uint32_t src_qpn = 0;  ///< valid when src_qpn_known
  uint32_t dst_qpn = 0;
  bool src_qpn_known = false;
  uint16_t mirror_id = 0;  ///< ERSPAN session + 1 (RoceHeaders): the frame's point may be its session's
  IpAddress mirror_src;
};

/// Note kinds the display knows, resolved by name once.
struct NoteKinds {
  NoteKind io_stage[5];  ///< command, data, read_request, read_response, completion
  NoteKind io_unparseable, io_orphan, msg_packet, msg_nak, msg_nak_read, ecn_ce, cnp, pfc, pfc_storm, diag_finding;
  NoteKind path_hop, path_lost, path_late, path_record;
  NoteKinds();
  /// 0..4 for the I/O stages, -1 otherwise.
  int stage_of(NoteKind k) const;
};
const NoteKinds& note_kinds();

/// One frame of an I/O at one observation point: the first frame of each stage at each point
/// (the stamps T1..T7 are taken there).
struct IoFrameLink {
  uint64_t frame = 0;
  PointId point = kNoPoint;
  uint8_t stage = 0;  ///< as NoteKinds::stage_of
};

// Every call from the dissecting thread; with an engine thread, the calls that read results
// first wait for it (settle), and throw when a push there threw.
class CaptureState {
 public:
  /// `engine_thread`: push the frames nobody looks at yet on a thread of its own (EngineThread).
  CaptureState(const Settings& settings, bool engine_thread);
  ~CaptureState();

  /// First pass: feeds one frame to the engine. `interface_name(interface_id)` (may return
  /// null) is called only for an interface not seen before: Wireshark's lookup allocates.
  /// `shown`: this frame's results are read now (view() follows); otherwise the push may be
  /// done on the engine thread, later.
  template <typename NameOf>
  void process(uint32_t frame, TimeNs ts, bool has_ts, uint32_t interface_id, NameOf&& interface_name,
               int wtap_encap, const uint8_t* data, uint32_t cap_len, uint32_t wire_len, bool shown) {
    stop_keeping_notes();
    first_pass_frame_number(frame);
    auto it = points_by_interface_.find(interface_id);
    PointId point = it != points_by_interface_.end() ? it->second : kNoPoint;
    const char* new_point_name = nullptr;
    if (point == kNoPoint) {
      const char* name = interface_name(interface_id);
      // (An interface described after the first frame: declare_file_interfaces declared the
      // others.) A frame read now needs its point now; otherwise a read filter may still drop the
      // frame, and its point is declared once it is known to be kept.
      if (shown && !read_filter_) point = declare_point(interface_id, name);
      else new_point_name = name ? name : "";
    }
    process(frame, ts, has_ts, interface_id, point, wtap_encap, data, cap_len, wire_len, shown, new_point_name);
  }
  /// Declares the file's first `count` interfaces as points, in interface order, before its first
  /// frame is pushed, as the CLI declares a file's interfaces when it opens it (session.cpp,
  /// declare_known). The engine then knows every point from the start and waits for one that
  /// has carried nothing yet (PointTable::awaited): in a file merged by stamp a point whose
  /// clock runs behind or ahead of the others' sends its first packet seconds into the file, and
  /// in per-point files joined with mergecap -a only after every other point's packets. Declared
  /// at its first frame instead, the point was unknown until then, the others' I/Os and hops
  /// were final by the time its packets came (its commands found no I/O open, its copies no hop).
  /// With a read filter too (the CLI's numbers on the frames it keeps): an interface whose frames
  /// it drops is then a point that carries nothing, as an interface without packets is to the
  /// CLI (it goes quiet after the idle time, and changes no record).
  /// `interface_name(interface_id)` as for process().
  template <typename NameOf>
  void declare_file_interfaces(uint32_t count, NameOf&& interface_name) {
    for (uint32_t id = 0; id < count; ++id)
      if (!points_by_interface_.count(id)) declare_point(id, interface_name(id));
  }
  /// Every frame is dissected once, as it is read, and never again (tshark in one pass,
  /// frames_may_be_dissected_again): the notes about a frame are kept only while it is shown,
  /// and each frame's point is not recorded, so memory stays bounded by the engine's open state
  /// rather than growing with the capture. Called before the first frame; what frames show is
  /// the same.
  void frames_shown_once();
  /// The frames before `frame` were not pushed (nothing read rdmatel's results): a warning says
  /// so, shown with the next frame.
  void not_measured_before(uint32_t frame);
  /// First pass, each frame before process(): its pcapng section (files joined with cat hold
  /// several) and stamp. A section that begins well before the frames read before it end (per-point
  /// files joined with cat) is read after them all the same: a warning says so, as the CLI's does.
  void note_section(uint32_t section, uint32_t frame, TimeNs ts, bool has_ts) {
    if (section > section_) [[unlikely]]
      section_began(section, frame, ts, has_ts);
    if (has_ts && (!stamped_ || ts > newest_stamp_)) {
      newest_stamp_ = ts;
      stamped_ = true;
    }
  }
  /// Ends the first pass (plugin/first_pass_end.h says when): flushes the engine
  /// and indexes the final records by the frame that counts them. `capture_drops`: per interface,
  /// what its capture dropped (the file's interface statistics), as the CLI tells the engine.
  /// `frames_kept`: how many frames the first pass kept (the capture file's count; 0: unknown),
  /// which tells whether a read filter kept the newest frame (no frame numbered after it does).
  void finish(const std::vector<uint64_t>& capture_drops = {}, uint32_t frames_kept = 0);
  bool finished() const { return store_.indexed(); }
  /// A read filter drops frames of the first pass (tshark -R, the GUI's): from the first one
  /// dropped on, each frame is measured once the next one shows it was kept, so during the first
  /// pass a frame has no results yet (the second pass has them all).
  bool defers_first_pass() const { return read_filter_; }

  /// What `frame` counts for the statistics. After the first pass: the final records (an I/O on
  /// its compute-side completion, or its command when it never completed; a message on the
  /// frame that completes it). During the first pass: completed I/Os and messages as known at
  /// this frame, each once; `again` (a frame dissected again before the first pass is over): as
  /// known now.
  FrameCounts counts(uint32_t frame, const FrameView& view, bool again = false);

  /// The endpoints of a RoCEv2 frame (decoded again from its bytes: no per-frame storage);
  /// false for other frames.
  bool endpoints(int wtap_encap, const uint8_t* data, uint32_t cap_len, uint32_t wire_len, FrameEndpoints& out);

  /// Display data for a frame (valid until the next call to process()). During the first pass:
  /// the notes made while `frame` was pushed; `again` (a frame dissected again before the first
  /// pass is over, as a live capture in the GUI does): every note about it so far.
  FrameView view(uint32_t frame, uint32_t interface_id, bool again = false);
  const IoRecord* io(uint64_t id) const { return store_.io(id); }
  /// The I/O's frames at every point, in frame order (after the first pass; empty before).
  std::span<const IoFrameLink> io_frames(uint64_t io_id) const;
  std::optional<MessageRecord> message(uint64_t id) const { return store_.message(id); }
  /// (last frame, id) of the messages whose last frame is `frame`; empty before the first pass
  /// is over.
  std::span<const std::pair<uint64_t, uint64_t>> messages_ending_on(uint32_t frame) const {
    if (!finished()) return {};
    return store_.messages_ending_on(frame);
  }
  /// The diagnosis's finding of `rank` (final once the first pass is over), or nullptr.
  const DiagnosisRecord* finding(uint64_t rank) const { return store_.finding(rank); }
  /// The message-flow diagnosis's findings to look at on `frame`, by rank (none before the first
  /// pass is over: they are made from the whole capture).
  std::span<const FlowFindingRow> flow_findings_on(uint64_t frame) const;
  /// Hop record `n` (final once the first pass is over), or nullptr.
  const PathRecord* path(uint64_t n) const { return store_.path(n); }
  const Engine& engine() const { return engine_; }
  /// How many frame notes the state holds (frames_shown_once keeps them bounded). Settled: call
  /// after view() or counts().
  size_t notes_held() const { return store_.note_count(); }
  /// The threshold alert rules (the engine's `alert` setting: the "slow" preferences and the
  /// alerts table), evaluated by the engine's own rule code on what each frame shows.
  const std::vector<alerts::AlertRule>& alert_rules() const { return alert_rules_; }

 private:
  PointId declare_point(uint32_t interface_id, const char* name);
  /// `new_point_name`: the frame's interface has no point yet (`point` is kNoPoint); it is held
  /// and the point declared under that name once the frame is known to be kept.
  void process(uint32_t frame, TimeNs ts, bool has_ts, uint32_t interface_id, PointId point, int wtap_encap,
               const uint8_t* data, uint32_t cap_len, uint32_t wire_len, bool shown,
               const char* new_point_name = nullptr);
  /// Measures every frame handed over: pushes the frame held back, and waits until the engine
  /// thread has pushed every frame handed to it (a push there that threw is remembered);
  /// settle() also throws for it, once (report_engine_thread_failure).
  void wait_for_engine_thread();
  void report_engine_thread_failure();
  void settle();
  bool engine_thread_failed_ = false;
  // Frames a read filter drops (process): the newest frame that nobody read stays revocable
  // until the next frame shows whether it was kept: on the engine thread, or held here (without
  // an engine thread, and a new interface's first frame, whose point is declared only then).
  void first_pass_frame_number(uint32_t frame);
  void take_back_dropped(uint32_t frame);
  void hold(const FrameIn& in, uint32_t interface_id, const char* new_point_name);
  /// Measures the frame held: `now` on this thread, otherwise it may go to the engine thread.
  void hand_over_held(bool now);
  uint32_t newest_frame_ = 0;
  uint32_t section_ = 0;
  bool stamped_ = false;
  TimeNs newest_stamp_ = 0;  ///< of the first pass so far, in file order
  void section_began(uint32_t section, uint32_t frame, TimeNs ts, bool has_ts);
  struct HeldFrame {
    FrameIn in;
    std::vector<uint8_t> bytes;
    bool has_bytes = false;
    uint32_t interface = 0;
    bool new_point = false;
    std::string point_name;
    bool valid = false;
  } held_;
  bool read_filter_ = false;  ///< a first-pass frame number came twice: a read filter drops frames
  bool shown_once_ = false;   ///< frames_shown_once()
  bool notes_kept_ = false;   ///< shown_once_: the store keeps the notes of the frame just shown
  /// Called when the engine thread is idle (after a frame shown, none handed over since).
  void stop_keeping_notes() {
    if (!notes_kept_) return;
    store_.keep_notes(false);
    notes_kept_ = false;
  }

  struct WarningList final : RecordSink {
    void on_warning(const Warning& w) override { texts.push_back(w.text); }
    std::vector<std::string> texts;
  };

  /// What the message-flow diagnosis is made of, gathered from the final records as `rdmatel
  /// analyze` gathers them (cli/main.cpp); made into findings when the first pass ends, then dropped.
  struct FlowDiagnosisInputs final : RecordSink {
    void on_record(const Record& r) override;
    FlowReport flows;
    std::vector<EcnRecord> congestion;
    std::vector<PfcRecord> pfc;
    /// Per flow and point, the message resent most (then NAKed most; the first of equals): the
    /// frame to look at for a flow that loses packets, as the NVMe diagnosis's worst_frame is.
    struct WorstMessage {
      uint64_t retrans_packets = 0, naks = 0, first_frame = 0;
    };
    std::unordered_map<FlowKeyAtPoint, WorstMessage, FlowKeyAtPoint::Hash> worst_message;
  };

  Engine engine_;
  std::vector<alerts::AlertRule> alert_rules_;
  RecordStore store_;
  WarningList warnings_;
  FlowDiagnosisInputs flow_inputs_;
  /// The message-flow findings (made by finish), by frame to look at, then rank.
  std::vector<FlowFindingRow> flow_findings_;
  void find_flow_findings();
  uint64_t frame_to_look_at(const FlowFinding& f) const;
  size_t warnings_shown_ = 0;  ///< first pass: the warnings a shown frame carried already
  std::unordered_map<uint32_t, PointId> points_by_interface_;
  // During the first pass the notes of the frame being dissected are the ones made since its
  // process() began, copied because notes about other frames may come in between.
  size_t notes_of_frame_begin_ = 0;
  std::vector<FrameNote> current_notes_;
  // Each frame's point (by frame number - 1), and after the first pass the frames of every I/O
  // (io_frame_links_, sorted by I/O id, io_frame_ids_ alongside for the lookup).
  std::vector<PointId> frame_points_;
  std::vector<uint64_t> io_frame_ids_;
  std::vector<IoFrameLink> io_frame_links_;
  void index_io_frames();
  /// With a read filter, at the end of the first pass: the warnings that name a point as possibly
  /// still to come say when the filter dropped its every frame.
  void qualify_waits_for_filtered_points();
  // Frames dissected again before the first pass is over (a live capture in the GUI paints its
  // packet list as frames come): their notes so far, through a chain of each frame's notes, built
  // from the store's notes only when such a frame is shown (nothing to do for tshark or a file).
  std::vector<uint32_t> newest_note_of_frame_;  // by frame - 1: 1 + index of its newest note, 0: none
  std::vector<uint32_t> previous_note_;         // by note index: 1 + index of the same frame's previous note
  std::span<const FrameNote> notes_so_far(uint32_t frame);
  // First pass: what was already counted (each record once), by id - 1.
  std::vector<bool> first_pass_ios_, first_pass_messages_;
  // Last: stopped before the engine and the sinks it pushes to go away. Null without one.
  std::unique_ptr<EngineThread> engine_thread_;
};

}  // namespace rdmatel::plugin
