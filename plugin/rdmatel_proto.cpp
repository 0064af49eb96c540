// SPDX-License-Identifier: GPL-2.0-or-later
// The "RDMA Telemetry" postdissector: feeds every frame's bytes to the engine on the first pass
// (one decoder, shared with the CLI; no other dissector's fields are needed, so no tree is
// forced) and shows the stored results as generated fields on every pass.
#include "plugin/rdmatel_proto.h"

#include <epan/epan.h>
#include <epan/expert.h>
#include <epan/packet.h>
#include <epan/prefs.h>
#include <wiretap/wtap.h>

#include <memory>

#include "plugin/capture_state.h"
#include "plugin/fields.h"
#include "plugin/frame_display.h"

namespace rdmatel::plugin {
namespace {

static_assert(WTAP_ENCAP_ETHERNET == kWtapEncapEthernet && WTAP_ENCAP_SLL == kWtapEncapSll &&
                  WTAP_ENCAP_SLL2 == kWtapEncapSll2 && WTAP_ENCAP_RAW_IP == kWtapEncapRawIp,
              "wiretap encapsulation numbers changed");

// Preferences (Edit > Preferences > Protocols > RDMA Telemetry, or tshark -o rdmatel.NAME:VALUE).
struct Prefs {
  guint io_timeout_s = 10;
  guint reorder_window_ms = 250;
  guint max_ios = 1u << 20;
  guint max_flows = 1u << 20;
} prefs_;

dissector_handle_t handle_;
std::unique_ptr<CaptureState> state_;
bool internal_error_ = false;

EngineConfig config_from_prefs() {
  EngineConfig c;
  c.io_timeout_ns = DurationNs(prefs_.io_timeout_s) * kNsPerSec;
  c.reorder_window_ns = DurationNs(prefs_.reorder_window_ms) * kNsPerMs;
  c.max_outstanding_ios = prefs_.max_ios ? prefs_.max_ios : 1;
  c.max_flows = prefs_.max_flows ? prefs_.max_flows : 1;
  return c;
}

// A new capture file (or a redissection after a preference change).
void init_routine() {
  internal_error_ = false;
  try {
    state_ = std::make_unique<CaptureState>(config_from_prefs());
  } catch (...) {
    state_.reset();
    internal_error_ = true;
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

int dissect_rdmatel(tvbuff_t* tvb, packet_info* pinfo, proto_tree* tree, void*) {
  if (!state_ || pinfo->rec->rec_type != REC_TYPE_PACKET) return 0;
  const wtap_rec* rec = pinfo->rec;
  uint32_t iface = (rec->presence_flags & WTAP_HAS_INTERFACE_ID) ? rec->rec_header.packet_header.interface_id : 0;
  if (!PINFO_FD_VISITED(pinfo)) {
    guint cap = tvb_captured_length(tvb);
    const guint8* data = cap ? tvb_get_ptr(tvb, 0, cap) : nullptr;
    const char* name = epan_get_interface_name(pinfo->epan, iface);
    TimeNs ts = TimeNs(pinfo->abs_ts.secs) * kNsPerSec + pinfo->abs_ts.nsecs;
    int encap = rec->rec_header.packet_header.pkt_encap;
    guint wire = tvb_reported_length(tvb);
    guarded([&] { state_->process(pinfo->num, ts, iface, name, encap, data, cap, wire); });
  } else if (!state_->finished()) {
    // The first revisited frame means the first pass is over: the capture has ended.
    guarded([&] { state_->finish(); });
  }
  FrameView view;
  guarded([&] { view = state_->view(pinfo->num, iface); });
  if (internal_error_) {
    proto_item* ti = proto_tree_add_item(tree, fields.proto, tvb, 0, 0, ENC_NA);
    expert_add_info(pinfo, ti, &fields.ei_internal);
    return 0;
  }
  if (!view.point && view.note_count == 0) return 0;
  display_frame(tvb, pinfo, tree, *state_, view);
  return 0;
}

}  // namespace
}  // namespace rdmatel::plugin

using namespace rdmatel::plugin;

void proto_register_rdmatel(void) {
  int proto = proto_register_protocol("RDMA Telemetry", "RDMATEL", "rdmatel");
  register_fields(proto);
  module_t* m = prefs_register_protocol(proto, nullptr);
  prefs_register_uint_preference(m, "io_timeout", "I/O timeout (s)",
                                 "An NVMe I/O without completion is reported incomplete once every point that "
                                 "saw its command has moved this many seconds past it",
                                 10, &prefs_.io_timeout_s);
  prefs_register_uint_preference(m, "reorder_window", "Reorder window (ms)",
                                 "How far timestamps may go backwards within one observation point, and how "
                                 "long results wait for the other points' copies of a packet",
                                 10, &prefs_.reorder_window_ms);
  prefs_register_uint_preference(m, "max_ios", "Most I/Os tracked at once",
                                 "Limit on NVMe I/Os in flight; beyond it the oldest are reported early", 10,
                                 &prefs_.max_ios);
  prefs_register_uint_preference(m, "max_flows", "Most RDMA flows tracked",
                                 "Limit on RDMA flows (source IP, destination IP, destination QPN)", 10,
                                 &prefs_.max_flows);
  handle_ = create_dissector_handle(dissect_rdmatel, proto);
  register_init_routine(init_routine);
  register_cleanup_routine(cleanup_routine);
}

void proto_reg_handoff_rdmatel(void) { register_postdissector(handle_); }
