// SPDX-License-Identifier: GPL-2.0-or-later
// The "RDMA Telemetry" postdissector: feeds every frame's bytes to the engine on the first pass
// (one decoder, shared with the CLI; no other dissector's fields are needed, so no tree is
// forced) and shows the stored results as generated fields on every pass.
#include "plugin/rdmatel_proto.h"

#include <epan/column-info.h>
#include <epan/epan.h>
#include <epan/expert.h>
#include <epan/packet.h>
#include <epan/tap.h>
#include <wiretap/wtap.h>

#include <memory>
#include <new>
#include <thread>
#include <vector>

#include "plugin/capture_state.h"
#include "plugin/fields.h"
#include "plugin/first_pass_end.h"
#include "plugin/frame_display.h"
#include "plugin/frame_revisits.h"
#include "plugin/gui_refilter.h"
#include "plugin/menu.h"
#include "plugin/preferences.h"
#include "plugin/stats.h"
#include "plugin/tap.h"

namespace rdmatel::plugin {
namespace {

static_assert(WTAP_ENCAP_ETHERNET == kWtapEncapEthernet && WTAP_ENCAP_SLL == kWtapEncapSll &&
                  WTAP_ENCAP_SLL2 == kWtapEncapSll2 && WTAP_ENCAP_RAW_IP == kWtapEncapRawIp,
              "wiretap encapsulation numbers changed");

dissector_handle_t handle_;
int proto_expert_ = -1;  ///< Wireshark's expert info pseudo-protocol (_ws.expert)
int expert_tap_ = 0;     ///< the expert info tap (0: none)
std::unique_ptr<CaptureState> state_;
bool internal_error_ = false;
// Whether the first pass runs taps. tshark -2 dissects its first pass without them (its
// statistics come from the second pass), so a statistics listener there reads nothing as frames
// are dissected and they can go to the engine thread (and a read filter can drop them before they
// were measured). Learned at the first frame: fetch_tapped_data() finds tap data only while taps
// run (probe_first_pass_taps).
enum class FirstPassTaps { kUnknown, kRun, kNotRun };
FirstPassTaps first_pass_taps_ = FirstPassTaps::kUnknown;
std::vector<std::string> pref_problems_;
FirstPassEnd first_pass_end_;
// tshark in one pass with nothing reading rdmatel's results (-z io,stat, filters and fields of
// other protocols): the engine does not run (dissect_rdmatel).
bool unread_run_ = false;
// The capture file being read (seen at its first frame): its interface statistics are read when
// the first pass ends, which has no frame to find it by.
const void* capture_file_ = nullptr;
// Files joined with cat (per-point files, ring files) are one pcapng of several sections, each with
// interfaces numbered from 0. Wireshark 4.0 hands a record its section's number of the interface,
// and names interface N by the file's Nth interface block (frame.interface_name is the first
// section's for every section): the plugin numbers interfaces across the file itself, the Nth
// block being the Nth interface, as the CLI reads such a file. Per section: how many interface
// blocks the file had described by its end (as far as read: the first pass reads the file in
// order), so that section s's interfaces are those after section s - 1's.
std::vector<uint32_t> interfaces_by_section_end_;

// A new capture file (or a redissection after a preference change).
void init_routine() {
  internal_error_ = false;
  unread_run_ = false;
  capture_file_ = nullptr;
  interfaces_by_section_end_.clear();
  first_pass_taps_ = FirstPassTaps::kUnknown;
  first_pass_end_.new_session();
  // Registered by then, whichever order plugins and built-in dissectors registered in (0: none).
  proto_expert_ = proto_get_id_by_filter_name("_ws.expert");
  expert_tap_ = find_tap_id("expert");
  // The previous capture's engine thread stops before a new engine is built.
  state_.reset();
  try {
    pref_problems_.clear();
    // One core: a second thread would only take turns with the dissection.
    const bool engine_thread = prefs.engine_thread && std::thread::hardware_concurrency() > 1;
    state_ = std::make_unique<CaptureState>(engine_settings_from_prefs(pref_problems_), engine_thread);
  } catch (...) {
    internal_error_ = true;  // state_ stays empty
  }
}

void cleanup_routine() { state_.reset(); }

// Runs engine work; a C++ exception must never reach Wireshark's C frames.
template <typename F>
bool guarded(F&& f) {
  try {
    f();
    return true;
  } catch (...) {
    internal_error_ = true;
    return false;
  }
}

// The end of the first pass, and the engine's: every frame shows final results from now on.
// Registered as a "postseq cleanup" routine, which Wireshark calls when a sequential read ends
// (tshark -2 before its second pass, the GUI once it has read a file or when a live capture
// stops); a redissection calls nothing at its end and ends here from its first revisited frame.
void end_first_pass() {
  if (!state_ || state_->finished()) return;
  guarded([&] { state_->finish(capture_drops(capture_file_), frames_kept(capture_file_)); });
  first_pass_end_.ended();
  refilter_when_read();  // the GUI filtered the first pass on partial results
}

// Someone collects expert infos through the expert tap (-z expert, the Expert Information dialog).
bool expert_tap_listened() { return expert_tap_ > 0 && have_tap_listener(expert_tap_); }

// Queues a tap record that counts nothing and looks whether it was kept: only while taps run.
// Every listener takes an empty TapFrame for what it is (no records, no RoCE endpoints).
FirstPassTaps probe_first_pass_taps(packet_info* pinfo) {
  TapFrame* probe = new (wmem_new(pinfo->pool, TapFrame)) TapFrame;
  tap_queue_packet(tap_id(), pinfo, probe);
  return fetch_tapped_data(tap_id(), 0) ? FirstPassTaps::kRun : FirstPassTaps::kNotRun;
}

// Queues the frame's tap data: the records it counts and its RDMA endpoints (plain data in
// packet-scope memory; the listeners run before the next frame); nothing when there is none.
void queue_tap(packet_info* pinfo, const FrameCounts& counts, const FrameEndpoints* endpoints) {
  if (!counts.io_count && !counts.message_count && !counts.finding && !counts.congestion && !counts.cnp && !counts.pfc_count &&
      !counts.hop && counts.flow_findings.empty() && !endpoints)
    return;
  TapFrame* tap = new (wmem_new(pinfo->pool, TapFrame)) TapFrame;
  tap->final = state_->finished();
  for (size_t i = 0; i < counts.io_count && i < TapFrame::kMaxRecords; ++i) tap->ios[tap->io_count++] = counts.ios[i];
  for (size_t i = 0; i < counts.message_count && i < TapFrame::kMaxRecords; ++i) {
    tap->messages[tap->message_count] = counts.messages[i];
    tap->message_points[tap->message_count++] = state_->engine().point_name(counts.messages[i].point).c_str();
  }
  tap->finding = counts.finding;
  tap->flow_findings = counts.flow_findings.data();
  tap->flow_finding_count = unsigned(counts.flow_findings.size());
  tap->congestion = counts.congestion;
  tap->cnp = counts.cnp;
  for (size_t i = 0; i < counts.pfc_count && i < std::size(tap->pfc); ++i) tap->pfc[tap->pfc_count++] = counts.pfc[i];
  // Every record counted on a frame is of that frame's point.
  const CongestionHead* head = tap->congestion ? static_cast<const CongestionHead*>(tap->congestion)
                               : tap->cnp      ? static_cast<const CongestionHead*>(tap->cnp)
                               : tap->pfc_count ? static_cast<const CongestionHead*>(tap->pfc[0])
                                                : nullptr;
  if (head) tap->point_name = state_->engine().point_name(head->point).c_str();
  if (counts.hop) {
    tap->hop = counts.hop;
    tap->hop_from = state_->engine().point_name(counts.hop->from_point).c_str();
    tap->hop_to = state_->engine().point_name(counts.hop->to_point).c_str();
  }
  if (endpoints) {
    tap->roce = true;
    tap->src_ip = endpoints->src;
    tap->dst_ip = endpoints->dst;
    tap->src_qpn_known = endpoints->src_qpn_known;
    tap->src_qpn = endpoints->src_qpn_known ? endpoints->src_qpn : 0;
    tap->dst_qpn = endpoints->dst_qpn;
  }
  tap_queue_packet(tap_id(), pinfo, tap);
}


// Whether anything reads this frame's rdmatel items: a visible tree, a display filter, column or
// coloring rule naming an rdmatel field, or someone collecting expert infos (a filter on
// _ws.expert, the Expert Information dialog, -z expert, in a pass that runs taps). When nothing
// does (tshark -z io,stat,0, a filter on other protocols), the items and the texts of expert infos
// nobody collects are not built, as Wireshark's own dissectors skip them
// (proto_field_is_referenced). The engine sees the frame either way.
bool read_by_anyone(packet_info* pinfo, proto_tree* tree, bool taps_run) {
  // Expert infos reach the Expert column and the expert tap even without a tree.
  if (taps_run && expert_tap_listened()) return true;
  if (pinfo->cinfo && pinfo->cinfo->col_first && pinfo->cinfo->col_first[COL_EXPERT] >= 0) return true;
  if (!tree) return false;
  return proto_field_is_referenced(tree, fields.proto) ||
         (proto_expert_ >= 0 && proto_field_is_referenced(tree, proto_expert_));
}

// The record's interface as the file's interface blocks number them (interfaces_by_section_end_),
// learned on the first pass: at each section's first record, and when a record names an interface
// described since.
uint32_t file_interface(const packet_info* pinfo, uint32_t section_interface) {
  const size_t section = pinfo->rec->section_number;
  std::vector<uint32_t>& ends = interfaces_by_section_end_;
  if (!PINFO_FD_VISITED(pinfo) && section + 1 >= ends.size()) {
    const uint64_t base = section == 0 ? 0 : section - 1 < ends.size() ? ends[section - 1] : UINT32_MAX;
    if (section >= ends.size() || base + section_interface >= ends[section]) {
      const auto described = file_interface_count(pinfo);
      if (!described) return section_interface;
      ends.resize(section + 1, *described);  // (a section without records: as the next one)
      ends[section] = *described;
    }
  }
  if (section >= ends.size()) return section_interface;
  const uint64_t n = uint64_t(section == 0 ? 0 : ends[section - 1]) + section_interface;
  return n < ends[section] ? uint32_t(n) : section_interface;  // (not described yet: as Wireshark numbers it)
}

int dissect_rdmatel(tvbuff_t* tvb, packet_info* pinfo, proto_tree* tree, void*) {
  if (!state_ || pinfo->rec->rec_type != REC_TYPE_PACKET) return 0;
  const wtap_rec* rec = pinfo->rec;
  uint32_t iface = (rec->presence_flags & WTAP_HAS_INTERFACE_ID) ? rec->rec_header.packet_header.interface_id : 0;
  iface = file_interface(pinfo, iface);
  guint cap = tvb_captured_length(tvb);
  const guint8* data = cap ? tvb_get_ptr(tvb, 0, cap) : nullptr;
  int encap = rec->rec_header.packet_header.pkt_encap;
  guint wire = tvb_reported_length(tvb);
  // Taps (our statistics, the expert tap) read a frame only in a pass that runs them.
  const bool listened = have_tap_listener(tap_id());
  if (!PINFO_FD_VISITED(pinfo) && first_pass_taps_ == FirstPassTaps::kUnknown &&
      (listened || expert_tap_listened()))
    first_pass_taps_ = probe_first_pass_taps(pinfo);
  const bool taps_run = PINFO_FD_VISITED(pinfo) || first_pass_taps_ == FirstPassTaps::kRun;
  const bool tapping = listened && taps_run;
  // Items and expert infos are built only when something reads them; taps read the records.
  const bool displayed = internal_error_ || read_by_anyone(pinfo, tree, taps_run);
  const bool shown = tapping || displayed;
  // A frame dissected for the first time after the first pass ended (a redissection cancelled
  // half-way leaves the rest of the frames to be dissected later) cannot be measured any more:
  // it says so.
  bool too_late = false;
  if (!PINFO_FD_VISITED(pinfo)) {
    TimeNs ts = saturating_ns(int64_t(pinfo->abs_ts.secs), pinfo->abs_ts.nsecs);
    if (pinfo->num == 1) {
      first_pass_end_.first_frame(CaptureIdentity::of_first_frame(ts, iface, data, cap, wire));
      if (!frames_may_be_dissected_again(pinfo)) {
        guarded([&] { state_->frames_shown_once(); });
        // Each frame is dissected once, and what reads rdmatel's results is set for the whole
        // run (tshark's filters, columns, tree and taps): nothing reads them at frame 1, nothing
        // will, and measuring would cost cpu and memory for no one. The engine is not run.
        unread_run_ = !shown;
      }
    }
    if (unread_run_) {
      if (!shown) return 0;
      // Not seen in tshark; should a later frame be read after all, it is measured from here on
      // and says what was not.
      unread_run_ = false;
      guarded([&] { state_->not_measured_before(pinfo->num); });
    }
    const bool has_ts = (rec->presence_flags & WTAP_HAS_TS) != 0;
    auto name_of = [pinfo](uint32_t id) { return epan_get_interface_name(pinfo->epan, id); };
    too_late = state_->finished();
    // The interfaces described before the first frame are points from the start, as in the CLI
    // (CaptureState::declare_file_interfaces), with a read filter too: it cannot be known yet
    // which interfaces' frames it keeps, and a point declared at its first frame kept comes too
    // late when that frame lies far into the file (a sniffer's clock seconds ahead, per-point
    // files joined with mergecap -a): the other points' I/Os and hops were final without it. An
    // interface whose frames the filter drops is a point that carries nothing, as an interface
    // with no packets is to the CLI: it goes quiet after the idle time and changes no result.
    if (pinfo->num == 1) capture_file_ = capture_file_of_frame(pinfo);
    if (pinfo->num == 1 && !too_late)
      if (const auto count = file_interface_count(pinfo))
        guarded([&] { state_->declare_file_interfaces(*count, name_of); });
    // A frame whose results nobody reads now may be measured on the engine thread, later.
    if (!too_late)
      guarded([&] {
        state_->note_section(pinfo->rec->section_number, pinfo->num, ts, has_ts);
        state_->process(pinfo->num, ts, has_ts, iface, name_of, encap, data, cap, wire, shown);
      });
  } else if (!state_->finished() && first_pass_end_.revisit_ends_pass()) {
    end_first_pass();  // a redissection: its first revisited frame comes after its last frame
  }
  // Dissected again before the first pass is over (a live capture): what is known so far.
  const bool again = PINFO_FD_VISITED(pinfo) && !state_->finished();
  // A read filter drops frames: the first pass is measured a frame late (CaptureState::process),
  // so its frames show nothing (the second pass shows everything).
  if (!PINFO_FD_VISITED(pinfo) && !too_late && state_->defers_first_pass()) return 0;
  if (!shown && !internal_error_) return 0;
  if (too_late) {
    proto_item* ti = proto_tree_add_item(tree, fields.proto, tvb, 0, 0, ENC_NA);
    expert_add_info(pinfo, ti, &fields.ei_after_first_pass);
    return 0;
  }
  FrameView view;
  guarded([&] { view = state_->view(pinfo->num, iface, again); });
  if (internal_error_) {
    proto_item* ti = proto_tree_add_item(tree, fields.proto, tvb, 0, 0, ENC_NA);
    expert_add_info(pinfo, ti, &fields.ei_internal);
    return 0;
  }
  // Endpoints cost a second decode of the frame: only when someone looks at them.
  FrameEndpoints endpoints;
  bool roce = false;
  if (tree || tapping) guarded([&] { roce = state_->endpoints(encap, data, cap, wire, endpoints); });
  FrameCounts counts;
  if (tapping) guarded([&] { counts = state_->counts(pinfo->num, view, again); });
  if (internal_error_) return 0;
  // Only our statistics read the frame (tshark -q -z rdmatel,...: no tree, no expert column or
  // tap): building items nobody sees (a message record expanded for every packet of it) would
  // cost more than the statistics themselves.
  if (displayed && (view.point || !view.notes.empty() || !view.warnings.empty()))
    display_frame(tvb, pinfo, tree, *state_, view, roce ? &endpoints : nullptr);
  // Frame 1 read in the first pass and shown (tshark without -2 prints the first pass): say,
  // where the user looks first, that the numbers are partial and how to get final ones.
  if (pinfo->num == 1 && !PINFO_FD_VISITED(pinfo)) {
    proto_item* ti = proto_tree_add_item(tree, fields.proto, tvb, 0, 0, ENC_NA);
    proto_item_set_generated(ti);
    expert_add_info(pinfo, ti, &fields.ei_one_pass);
  }
  if (tapping) guarded([&] { queue_tap(pinfo, counts, roce ? &endpoints : nullptr); });
  return 0;
}

}  // namespace
}  // namespace rdmatel::plugin

using namespace rdmatel::plugin;

void proto_register_rdmatel(void) {
  int proto = proto_register_protocol("RDMA Telemetry", "RDMATEL", "rdmatel");
  register_fields(proto);
  register_preferences(proto);
  register_statistics(proto);
  register_menu(proto);
  handle_ = create_dissector_handle(dissect_rdmatel, proto);
  register_init_routine(init_routine);
  register_cleanup_routine(cleanup_routine);
  register_postseq_cleanup_routine(end_first_pass);
}

void proto_reg_handoff_rdmatel(void) { register_postdissector(handle_); }
