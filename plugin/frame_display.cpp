// SPDX-License-Identifier: GPL-2.0-or-later
#include "plugin/frame_display.h"

#include <algorithm>
#include <epan/expert.h>
#include <epan/to_str.h>

#include <bit>
#include <cstdio>
#include <cstring>

#include "plugin/fields.h"
#include "rdmatel/names.h"
#include "rdmatel/notes.h"
#include "rdmatel/records.h"
#include "plugin/preferences.h"
#include "plugin/tap.h"

namespace rdmatel::plugin {
namespace {

const char* stage_name(NoteKind k) {
  static const char* const names[] = {"command", "data", "read_request", "read_response", "completion"};
  int s = note_kinds().stage_of(k);
  return s >= 0 ? names[s] : nullptr;
}

// A µs value shown to the ns (the stamps' resolution); the field keeps the full value.
proto_item* add_us_value(proto_tree* t, int hf, tvbuff_t* tvb, double us) {
  return proto_tree_add_double_format_value(t, hf, tvb, 0, 0, us, "%.3f", us);
}

void add_us(proto_tree* t, int hf, tvbuff_t* tvb, const std::optional<DurationNs>& v) {
  if (!v) return;
  proto_item_set_generated(add_us_value(t, hf, tvb, ns_to_us(*v)));
}

void add_address(proto_tree* t, int hf4, int hf6, tvbuff_t* tvb, const IpAddress& a) {
  proto_item* it;
  if (a.v6) {
    ws_in6_addr v6;
    memcpy(v6.bytes, a.bytes.data(), 16);
    it = proto_tree_add_ipv6(t, hf6, tvb, 0, 0, &v6);
  } else {
    uint32_t v4;
    memcpy(&v4, a.bytes.data(), 4);  // network order, as Wireshark stores IPv4
    it = proto_tree_add_ipv4(t, hf4, tvb, 0, 0, v4);
  }
  proto_item_set_generated(it);
}

// Appends ", METRIC V UNIT > T UNIT" for one fired rule to `out` (plain buffers only).
void note_alert(char* out, size_t size, const alerts::AlertRule& rule, double v) {
  size_t used = strlen(out);
  if (used + 1 >= size) return;
  char name[8];
  snprintf(name, sizeof name, "%s", alerts::metric_name(rule.metric));
  for (char* c = name; *c; ++c) *c = char(*c - 'a' + 'A');
  const char* unit = rule.metric == alerts::Metric::kFet ? " bit/s" : rule.metric == alerts::Metric::kFnr ? "" : " µs";
  snprintf(out + used, size - used, "%s%s %.3f%s %s %g%s", used ? ", " : "", name, v, unit, rule.above ? ">" : "<",
           rule.threshold, unit);
}

// The alerts an I/O fires, by the engine's rules, as one text ("" for none). IOL stands in for
// IOL1 only where there is none (one point): the same latency is not reported twice.
void alert_text(char* out, size_t size, const std::vector<alerts::AlertRule>& rules, const IoRecord& r,
                const IoMetrics& m) {
  out[0] = 0;
  for (const alerts::AlertRule& rule : rules) {
    if (rule.metric == alerts::Metric::kIol && m.iol1) continue;
    std::optional<double> v = rule.value(r, m);
    if (v && rule.fires(*v)) note_alert(out, size, rule, *v);
  }
}
void alert_text(char* out, size_t size, const std::vector<alerts::AlertRule>& rules, const MessageRecord& msg) {
  out[0] = 0;
  for (const alerts::AlertRule& rule : rules) {
    std::optional<double> v = rule.value(msg);
    if (v && rule.fires(*v)) note_alert(out, size, rule, *v);
  }
}

// "host 10.1.0.1 > storage 10.2.0.1" for expert texts, in a plain buffer (no C++ object may be
// alive during the Wireshark calls that follow, which can longjmp).
struct IoEnds {
  char text[2 * 46 + 24];
  explicit IoEnds(const IoRecord& r) {
    char host[46], storage[46];
    r.host.format(host);
    r.storage.format(storage);
    std::snprintf(text, sizeof text, "host %s > storage %s", host, storage);
  }
};

// The status field and its parts; the item's text names the code.
void display_status(tvbuff_t* tvb, proto_tree* t, uint16_t status, const char* text) {
  proto_item* it = proto_tree_add_uint_format_value(t, fields.io_status, tvb, 0, 0, status, "0x%04x, %s", status,
                                                    status ? text : "Successful Completion");
  proto_item_set_generated(it);
  proto_tree* st = proto_item_add_subtree(it, fields.ett_status);
  proto_item_set_generated(proto_tree_add_uint(st, fields.io_status_sct, tvb, 0, 0, (status >> 8) & 0x7));
  proto_item_set_generated(proto_tree_add_uint(st, fields.io_status_sc, tvb, 0, 0, status & 0xFF));
  proto_item_set_generated(proto_tree_add_boolean(st, fields.io_status_more, tvb, 0, 0, (status >> 13) & 1));
  proto_item_set_generated(proto_tree_add_boolean(st, fields.io_status_dnr, tvb, 0, 0, (status >> 14) & 1));
}

void display_slow_io(tvbuff_t* tvb, packet_info* pinfo, proto_tree* t, const CaptureState& state, const IoRecord& r,
                     const IoMetrics& m, const IoEnds& ends) {
  if (state.alert_rules().empty()) return;
  char what[512];
  alert_text(what, sizeof what, state.alert_rules(), r, m);
  if (!*what) return;
  proto_item* it = proto_tree_add_boolean(t, fields.slow, tvb, 0, 0, 1);
  proto_item_set_generated(it);
  proto_item_set_generated(proto_tree_add_string(t, fields.alert, tvb, 0, 0, what));
  // One alert per I/O: on the frame that counts it in the statistics.
  if (pinfo->num == (r.complete ? r.rsp_frame : r.cmd_frame))
    expert_add_info_format(pinfo, it, &fields.ei_slow_io, "Slow NVMe %s (CID %u) %s: %s", r.op, r.cid, ends.text,
                           what);
}

// Links to the I/O's other frames: the first of each stage at each point.
void display_io_frames(tvbuff_t* tvb, packet_info* pinfo, proto_tree* t, const CaptureState& state, const IoRecord& r) {
  static const char* const stages[] = {"command", "data", "READ REQUEST", "READ RESPONSE", "completion"};
  for (const IoFrameLink& l : state.io_frames(r.id)) {
    if (l.frame == pinfo->num || l.frame > UINT32_MAX) continue;
    const char* point = l.point == kNoPoint ? "?" : state.engine().point_name(l.point).c_str();
    proto_item_set_generated(proto_tree_add_uint_format(t, fields.io_frame, tvb, 0, 0, uint32_t(l.frame),
                                                        "%s at %s: frame %u", l.stage < 5 ? stages[l.stage] : "?",
                                                        point, uint32_t(l.frame)));
  }
}

void display_io(tvbuff_t* tvb, packet_info* pinfo, proto_tree* tree, const CaptureState& state, const FrameNote& n,
                const IoRecord& r) {
  const char* stage = stage_name(n.kind);
  // A field of its own (not a text item): -T json and ek key the subtree "rdmatel.io".
  proto_item* ti = proto_tree_add_none_format(tree, fields.io, tvb, 0, 0, "NVMe %s, CID %u, %s", r.op, r.cid, stage);
  proto_item_set_generated(ti);
  proto_tree* t = proto_item_add_subtree(ti, fields.ett_io);
  proto_item_set_generated(proto_tree_add_string(t, fields.io_op, tvb, 0, 0, r.op));
  proto_item_set_generated(proto_tree_add_uint(t, fields.io_opcode, tvb, 0, 0, r.opcode));
  if (r.fabrics()) proto_item_set_generated(proto_tree_add_uint(t, fields.io_fctype, tvb, 0, 0, r.fctype));
  proto_item_set_generated(proto_tree_add_boolean(t, fields.io_admin, tvb, 0, 0, r.admin));
  proto_item_set_generated(proto_tree_add_uint(t, fields.io_cid, tvb, 0, 0, r.cid));
  proto_item_set_generated(proto_tree_add_uint(t, fields.io_qpn, tvb, 0, 0, r.qpn));
  if (r.host_qpn) proto_item_set_generated(proto_tree_add_uint(t, fields.io_host_qpn, tvb, 0, 0, *r.host_qpn));
  add_address(t, fields.io_host, fields.io_host6, tvb, r.host);
  add_address(t, fields.io_storage, fields.io_storage6, tvb, r.storage);
  proto_item_set_generated(proto_tree_add_string(t, fields.io_stage, tvb, 0, 0, stage));
  if (r.length) proto_item_set_generated(proto_tree_add_uint(t, fields.io_length, tvb, 0, 0, r.length));
  if (n.detail == 1) {
    proto_item* c = proto_tree_add_boolean(t, fields.io_copy, tvb, 0, 0, 1);
    proto_item_set_generated(c);
    expert_add_info(pinfo, c, &fields.ei_io_copy);
  }
  proto_item_set_generated(proto_tree_add_uint64(t, fields.io_id, tvb, 0, 0, r.id));
  display_io_frames(tvb, pinfo, t, state, r);
  if (r.cmd_frame && r.cmd_frame != pinfo->num)
    proto_item_set_generated(proto_tree_add_uint(t, fields.io_cmd_frame, tvb, 0, 0, uint32_t(r.cmd_frame)));
  if (r.rsp_frame && r.rsp_frame != pinfo->num)
    proto_item_set_generated(proto_tree_add_uint(t, fields.io_rsp_frame, tvb, 0, 0, uint32_t(r.rsp_frame)));

  // The metrics go on the compute-side command and completion frames.
  bool metric_frame = n.detail == 0 && (pinfo->num == r.rsp_frame || pinfo->num == r.cmd_frame);
  if (!metric_frame) return;
  if (pinfo->num == (r.complete ? r.rsp_frame : r.cmd_frame))
    proto_item_set_generated(proto_tree_add_boolean(t, fields.io_counted, tvb, 0, 0, 1));
  const bool connect = r.fabrics() && r.fctype == 0x01;
  char status_text[kNvmeStatusText] = "";
  if (r.complete && r.status_known) {
    nvme_status_text(status_text, r.status, connect);
    display_status(tvb, t, r.status, status_text);
  }
  proto_item* done = proto_tree_add_boolean(t, fields.io_complete, tvb, 0, 0, r.complete);
  proto_item_set_generated(done);
  IoMetrics m = io_metrics(r);
  const IoEnds ends(r);
  add_us(t, fields.dal, tvb, m.dal);
  add_us(t, fields.dpl, tvb, m.dpl);
  add_us(t, fields.rtt, tvb, m.rtt);
  add_us(t, fields.iol1, tvb, m.iol1);
  add_us(t, fields.iol2, tvb, m.iol2);
  add_us(t, fields.iol, tvb, m.iol);
  display_slow_io(tvb, pinfo, t, state, r, m, ends);
  if (!r.complete && !r.provisional && pinfo->num == r.cmd_frame)
    expert_add_info_format(pinfo, done, &fields.ei_io_incomplete, "NVMe %s (CID %u) %s has no completion: %s", r.op,
                           r.cid, ends.text, r.end == IoEnd::kTimeout ? "none within the I/O timeout"
                                  : r.end == IoEnd::kEvicted ? "dropped at the outstanding-I/O limit"
                                                             : "the capture ended first");
  if (r.complete && r.status != 0 && pinfo->num == r.rsp_frame)
    expert_add_info_format(pinfo, done, &fields.ei_io_error, "NVMe %s (CID %u) %s failed: %s, status 0x%04x", r.op,
                           r.cid, ends.text, status_text, r.status);
}

void add_generated_bool(proto_tree* t, int hf, tvbuff_t* tvb, proto_item** out = nullptr) {
  proto_item* it = proto_tree_add_boolean(t, hf, tvb, 0, 0, 1);
  proto_item_set_generated(it);
  if (out) *out = it;
}

// True when it showed the message's metrics (the frame is the message's last).
bool display_message(tvbuff_t* tvb, packet_info* pinfo, proto_tree* tree, const CaptureState& state,
                     const FrameNote& n, const MessageRecord* m) {
  proto_item* it = nullptr;
  if (n.detail & kMsgRetransmission) {
    add_generated_bool(tree, fields.retrans, tvb, &it);
    expert_add_info(pinfo, it, &fields.ei_retransmission);
  }
  if (n.detail & kMsgDuplicate) {
    add_generated_bool(tree, fields.duplicate, tvb, &it);
    // A retransmission repeats a PSN by definition: one expert item says it, not two.
    if (!(n.detail & kMsgRetransmission)) expert_add_info(pinfo, it, &fields.ei_duplicate);
  }
  if (n.detail & kMsgOutOfSequence) {
    add_generated_bool(tree, fields.oos, tvb, &it);
    expert_add_info(pinfo, it, &fields.ei_out_of_sequence);
  }
  // The message's metrics go on the frame that completes it at this point.
  if (!m || m->last_frame != pinfo->num) return false;
  proto_item* ti = proto_tree_add_none_format(tree, fields.msg, tvb, 0, 0, "RDMA %s message, PSN %u-%u, %llu bytes",
                                              message_kind_name(m->kind), m->first_psn, m->last_psn,
                                              (unsigned long long)m->bytes);
  proto_item_set_generated(ti);
  proto_tree* t = proto_item_add_subtree(ti, fields.ett_msg);
  auto gen = [](proto_item* i) { proto_item_set_generated(i); };
  gen(proto_tree_add_string(t, fields.msg_kind, tvb, 0, 0, message_kind_name(m->kind)));
  if (m->with_immediate) gen(proto_tree_add_boolean(t, fields.msg_imm, tvb, 0, 0, 1));
  gen(proto_tree_add_uint(t, fields.msg_first_psn, tvb, 0, 0, m->first_psn));
  gen(proto_tree_add_uint(t, fields.msg_last_psn, tvb, 0, 0, m->last_psn));
  gen(proto_tree_add_boolean(t, fields.msg_complete, tvb, 0, 0, m->complete));
  if (m->first_frame != pinfo->num) gen(proto_tree_add_uint(t, fields.msg_first_frame, tvb, 0, 0, uint32_t(m->first_frame)));
  proto_item* fct = add_us_value(t, fields.fct, tvb, ns_to_us(m->fct_ns()));
  gen(fct);
  if (m->packets > 1) {
    proto_item* multi = add_us_value(t, fields.fct_multi, tvb, ns_to_us(m->fct_ns()));
    gen(multi);
    proto_item_set_hidden(multi);
  }
  char what[512] = "";
  if (!state.alert_rules().empty()) alert_text(what, sizeof what, state.alert_rules(), *m);
  if (*what) {
    proto_item* slow = proto_tree_add_boolean(t, fields.slow, tvb, 0, 0, 1);
    gen(slow);
    gen(proto_tree_add_string(t, fields.alert, tvb, 0, 0, what));
    expert_add_info_format(pinfo, slow, &fields.ei_slow_message, "Slow RDMA %s message (PSN %u-%u): %s",
                           message_kind_name(m->kind), m->first_psn, m->last_psn, what);
  }
  if (auto f = m->fet_bps())
    gen(proto_tree_add_double_format_value(t, fields.fet, tvb, 0, 0, *f, "%.0f (%.3f Gb/s)", *f, *f / 1e9));
  if (auto f = m->fnr()) gen(proto_tree_add_double_format_value(t, fields.fnr, tvb, 0, 0, *f, "%.6f", *f));
  gen(proto_tree_add_uint64(t, fields.msg_bytes, tvb, 0, 0, m->bytes));
  gen(proto_tree_add_uint64(t, fields.msg_retrans_bytes, tvb, 0, 0, m->retrans_bytes));
  gen(proto_tree_add_uint64(t, fields.msg_packets, tvb, 0, 0, m->packets));
  gen(proto_tree_add_uint64(t, fields.msg_retrans_packets, tvb, 0, 0, m->retrans_packets));
  gen(proto_tree_add_uint64(t, fields.msg_naks, tvb, 0, 0, m->naks));
  return true;
}

// One enabled priority of a PFC frame: detail = priority | quanta << 8, ref = pause time in ns
// (0 when the link speed is unknown).
void display_pfc(tvbuff_t* tvb, packet_info* pinfo, proto_tree* tree, const FrameNote& n) {
  const unsigned prio = n.detail & 0xFF, quanta = n.detail >> 8;
  proto_item_set_generated(proto_tree_add_uint(tree, fields.pfc_priority, tvb, 0, 0, prio));
  proto_item* q = proto_tree_add_uint(tree, fields.pfc_quanta, tvb, 0, 0, quanta);
  proto_item_set_generated(q);
  if (quanta == 0) {
    add_generated_bool(tree, fields.pfc_resume, tvb);
    return;
  }
  proto_item* pause = nullptr;
  add_generated_bool(tree, fields.pfc_pause, tvb, &pause);
  if (n.ref) {
    proto_item_set_generated(add_us_value(tree, fields.pfc_pause_time, tvb, double(n.ref) / 1e3));
    expert_add_info_format(pinfo, pause, &fields.ei_pfc_pause, "PFC pause, priority %u: %u quanta (%.3f µs)", prio,
                           quanta, double(n.ref) / 1e3);
  } else {
    expert_add_info_format(pinfo, pause, &fields.ei_pfc_pause, "PFC pause, priority %u: %u quanta", prio, quanta);
  }
}

void display_nak(tvbuff_t* tvb, packet_info* pinfo, proto_tree* tree, const FrameNote& n, uint64_t named_frame) {
  proto_item* it = nullptr;
  add_generated_bool(tree, fields.nak, tvb, &it);
  uint8_t code = uint8_t(n.detail & 0x1f);
  proto_item_set_generated(proto_tree_add_uint(tree, fields.nak_code, tvb, 0, 0, code));
  if (named_frame && named_frame <= UINT32_MAX)
    proto_item_set_generated(proto_tree_add_uint(tree, fields.nak_msg_frame, tvb, 0, 0, uint32_t(named_frame)));
  expert_add_info_format(pinfo, it, &fields.ei_nak, "NAK: %s", nak_code_name(uint8_t(n.detail)));
}

}  // namespace

// "storage 10.2.0.2: the storage is slow" and "storage 10.2.0.2" into plain buffers: no C++
// object may be alive during the Wireshark calls that follow.
constexpr size_t kFindingText = 160;
void finding_text(const DiagnosisRecord& r, char (&headline)[kFindingText], char (&scope)[kFindingText]) {
  const std::string s = diagnosis_scope_text(r);
  std::snprintf(scope, sizeof scope, "%s", s.c_str());
  std::snprintf(headline, sizeof headline, "%s: %s", s.c_str(), diagnosis_verdict_text(r));
}

void display_finding(tvbuff_t* tvb, packet_info* pinfo, proto_tree* tree, const DiagnosisRecord& r) {
  char headline[kFindingText], scope[kFindingText];
  finding_text(r, headline, scope);
  proto_item* it = proto_tree_add_string(tree, fields.diagnosis, tvb, 0, 0, headline);
  proto_item_set_generated(it);
  proto_tree* t = proto_item_add_subtree(it, fields.ett_diag);
  proto_item_set_generated(proto_tree_add_uint(t, fields.diag_rank, tvb, 0, 0, r.rank));
  proto_item_set_generated(proto_tree_add_string(t, fields.diag_scope, tvb, 0, 0, scope));
  proto_item_set_generated(proto_tree_add_string(t, fields.diag_segment, tvb, 0, 0, r.segment));
  proto_item_set_generated(proto_tree_add_string(t, fields.diag_evidence, tvb, 0, 0, r.evidence.c_str()));
  expert_add_info_format(pinfo, it, &fields.ei_diagnosis, "Diagnosis #%u: %s. %s", r.rank, headline,
                         r.evidence.c_str());
}

// "10.4.0.1 > 10.3.0.3 0x62c20b: the network is congested on its path ..." (plain buffer: no C++
// object may be alive during the Wireshark calls that follow).
void display_flow_finding(tvbuff_t* tvb, packet_info* pinfo, proto_tree* tree, const FlowFindingRow& r) {
  char headline[kFindingText + 128];
  {
    const std::string src = r.finding.src.to_string(), dst = r.finding.dst.to_string();
    std::snprintf(headline, sizeof headline, "%s > %s 0x%06x: %s", src.c_str(), dst.c_str(), r.finding.dst_qpn,
                  r.verdict.c_str());
  }
  proto_item* it = proto_tree_add_string(tree, fields.diag_flow, tvb, 0, 0, headline);
  proto_item_set_generated(it);
  proto_tree* t = proto_item_add_subtree(it, fields.ett_diag);
  proto_item_set_generated(proto_tree_add_uint(t, fields.diag_flow_rank, tvb, 0, 0, r.rank));
  proto_item_set_generated(
      proto_tree_add_string(t, fields.diag_flow_kind, tvb, 0, 0, flow_finding_kind_text(r.finding.kind)));
  proto_item_set_generated(proto_tree_add_string(t, fields.diag_flow_evidence, tvb, 0, 0, r.evidence.c_str()));
  // (Wireshark cuts an expert info's text at 240 bytes: the evidence is in the tree.)
  expert_add_info_format(pinfo, it, &fields.ei_diagnosis_flow, "Diagnosis (RDMA message flows) #%u: %s", r.rank,
                         headline);
}

void display_frame(tvbuff_t* tvb, packet_info* pinfo, proto_tree* tree, const CaptureState& state,
                   const FrameView& view, const FrameEndpoints* endpoints) {
  proto_item* root = proto_tree_add_item(tree, fields.proto, tvb, 0, 0, ENC_NA);
  proto_item_set_generated(root);
  proto_tree* t = proto_item_add_subtree(root, fields.ett);
  // What the CLI prints as "rdmatel: warning: ...", where Wireshark users look (Expert Info).
  for (const std::string& w : view.warnings) expert_add_info_format(pinfo, root, &fields.ei_engine_warning, "%s", w.c_str());
  // A frame one of several ERSPAN sessions into this interface mirrored: its session's point.
  PointId point_id = view.point_id;
  const char* point_name = view.point;
  if (view.point && endpoints && endpoints->mirror_id) {
    point_id = state.engine().session_point(view.point_id, endpoints->mirror_id, endpoints->mirror_src);
    if (point_id != view.point_id) point_name = state.engine().point_name(point_id).c_str();
  }
  if (point_name) proto_item_set_generated(proto_tree_add_string(t, fields.point, tvb, 0, 0, point_name));
  // The point's role for this frame's endpoints (a leaf mirror is the compute side of its hosts
  // and the storage side of its storage servers); for other frames its role for most endpoints.
  // Only for a tree (a filter or a column builds one): looking roles up costs on every frame.
  if (point_name && t) {
    const PointRole role = endpoints ? state.engine().role_for(point_id, endpoints->src, endpoints->dst)
                                     : state.engine().point(point_id).role;
    if (role != PointRole::kUnknown)
      proto_item_set_generated(proto_tree_add_string(t, fields.point_role, tvb, 0, 0, point_role_name(role)));
  }
  if (endpoints) {
    // GPU binding: interned names, valid for the life of the program.
    const GpuMap& gpus = state.engine().gpus();
    const GpuBinding* s = gpus.find(endpoints->src);
    const GpuBinding* d = gpus.find(endpoints->dst);
    if (s) {
      proto_item_set_generated(proto_tree_add_string(t, fields.gpu_src, tvb, 0, 0, s->gpu));
      proto_item_set_generated(proto_tree_add_string(t, fields.node_src, tvb, 0, 0, s->node));
    }
    if (d) {
      proto_item_set_generated(proto_tree_add_string(t, fields.gpu_dst, tvb, 0, 0, d->gpu));
      proto_item_set_generated(proto_tree_add_string(t, fields.node_dst, tvb, 0, 0, d->node));
    }
    if (s && d && s->job && s->job == d->job)
      proto_item_set_generated(proto_tree_add_string(t, fields.job, tvb, 0, 0, s->job));
    // Like tcp.port: rdmatel.qp matches either end; the source is shown once known.
    if (endpoints->src_qpn_known) {
      proto_item_set_generated(proto_tree_add_uint(t, fields.qp_src, tvb, 0, 0, endpoints->src_qpn));
      proto_item* any = proto_tree_add_uint(t, fields.qp, tvb, 0, 0, endpoints->src_qpn);
      proto_item_set_generated(any);
      proto_item_set_hidden(any);
    }
    proto_item_set_generated(proto_tree_add_uint(t, fields.qp_dst, tvb, 0, 0, endpoints->dst_qpn));
    proto_item* any = proto_tree_add_uint(t, fields.qp, tvb, 0, 0, endpoints->dst_qpn);
    proto_item_set_generated(any);
    proto_item_set_hidden(any);
    // The names the conversation and endpoint tables use (their filters match these); built
    // only for a visible tree or a filter that names them.
    if (proto_field_is_referenced(t, fields.ep) || proto_field_is_referenced(t, fields.ep_src) ||
        proto_field_is_referenced(t, fields.ep_dst)) {
      char src[kEndpointNameSize], dst[kEndpointNameSize];
      endpoint_name(src, endpoints->src, endpoints->src_qpn_known, endpoints->src_qpn);
      endpoint_name(dst, endpoints->dst, true, endpoints->dst_qpn);
      proto_item_set_generated(proto_tree_add_string(t, fields.ep_src, tvb, 0, 0, src));
      proto_item_set_generated(proto_tree_add_string(t, fields.ep_dst, tvb, 0, 0, dst));
      for (const char* e : {src, dst}) {
        proto_item* it = proto_tree_add_string(t, fields.ep, tvb, 0, 0, e);
        proto_item_set_generated(it);
        proto_item_set_hidden(it);
      }
    }
  }
  const NoteKinds& k = note_kinds();
  uint64_t shown[8];  // messages whose metrics a packet note showed
  size_t shown_count = 0;
  for (const FrameNote& n : view.notes) {
    if (n.kind == k.io_unparseable) {
      expert_add_info_format(pinfo, root, &fields.ei_capsule_unparseable,
                             "SEND on an NVMe queue pair is not a valid NVMe %s capsule",
                             n.detail ? "response" : "command");
    } else if (n.kind == k.io_orphan) {
      expert_add_info(pinfo, root, &fields.ei_orphan_completion);
    } else if (n.kind == k.msg_packet) {
      const std::optional<MessageRecord> m = n.ref ? state.message(n.ref) : std::nullopt;
      if (display_message(tvb, pinfo, t, state, n, m ? &*m : nullptr) && shown_count < std::size(shown))
        shown[shown_count++] = m->id;
    } else if (n.kind == k.msg_nak) {
      const std::optional<MessageRecord> m = n.ref ? state.message(n.ref) : std::nullopt;
      display_nak(tvb, pinfo, t, n, m ? m->first_frame : 0);
    } else if (n.kind == k.msg_nak_read) {
      display_nak(tvb, pinfo, t, n, n.ref);
    } else if (n.kind == k.ecn_ce) {
      proto_item* it = nullptr;
      add_generated_bool(t, fields.ecn_ce, tvb, &it);
      expert_add_info_format(pinfo, it, &fields.ei_ecn_ce, "Congestion experienced (ECN CE) on the way from %s to %s",
                             address_to_str(pinfo->pool, &pinfo->net_src), address_to_str(pinfo->pool, &pinfo->net_dst));
    } else if (n.kind == k.cnp) {
      proto_item* it = nullptr;
      add_generated_bool(t, fields.cnp, tvb, &it);
      expert_add_info_format(pinfo, it, &fields.ei_cnp, "CNP: %s asks %s to slow down",
                             address_to_str(pinfo->pool, &pinfo->net_src), address_to_str(pinfo->pool, &pinfo->net_dst));
    } else if (n.kind == k.pfc) {
      display_pfc(tvb, pinfo, t, n);
    } else if (n.kind == k.pfc_storm) {
      add_generated_bool(t, fields.pfc_storm, tvb);
      proto_item* it = add_us_value(t, fields.pfc_storm_time, tvb, double(n.ref) / 1e3);
      proto_item_set_generated(it);
      expert_add_info_format(pinfo, it, &fields.ei_pfc_storm,
                             "PFC storm: priority %u paused without a break for %.3f µs from this frame", n.detail,
                             double(n.ref) / 1e3);
    } else if (n.kind == k.path_hop) {
      const uint64_t previous = path_hop_previous_frame(n.frame, n.detail);
      if (previous && previous <= UINT32_MAX)
        proto_item_set_generated(proto_tree_add_uint(t, fields.hop_prev_frame, tvb, 0, 0, uint32_t(previous)));
      if (path_hop_raw(n.detail)) add_generated_bool(t, fields.hop_raw, tvb);
      const double us = double(std::bit_cast<int64_t>(n.ref)) / 1e3;
      proto_item_set_generated(proto_tree_add_double(t, fields.hop_delay, tvb, 0, 0, us));
    } else if (n.kind == k.path_lost) {
      // Counted lost at the path timeout, then seen at that point after all: late, not lost.
      if (std::any_of(view.notes.begin(), view.notes.end(),
                      [&](const FrameNote& x) { return x.kind == k.path_late && x.detail == n.detail; }))
        continue;
      proto_item* it = proto_tree_add_boolean(t, fields.hop_lost, tvb, 0, 0, TRUE);
      proto_item_set_generated(it);
      const char* next = n.detail < state.engine().point_count() ? state.engine().point_name(n.detail).c_str() : "?";
      expert_add_info_format(pinfo, it, &fields.ei_hop_lost, "Lost between observation points: never seen at %s",
                             next);
    } else if (n.kind == k.diag_finding) {
      if (const DiagnosisRecord* r = state.finding(n.ref)) display_finding(tvb, pinfo, t, *r);
    } else if (k.stage_of(n.kind) >= 0) {
      if (const IoRecord* r = state.io(n.ref)) display_io(tvb, pinfo, t, state, n, *r);
    }
  }
  for (const FlowFindingRow& r : state.flow_findings_on(pinfo->num)) display_flow_finding(tvb, pinfo, t, r);
  // A message whose last packet carries no note of it (the capture ended before its LAST: its
  // record, incomplete, ends on a MIDDLE) shows on that frame all the same, as the CLI lists it.
  for (const auto& [frame, id] : state.messages_ending_on(pinfo->num)) {
    if (std::find(shown, shown + shown_count, id) != shown + shown_count) continue;
    const std::optional<MessageRecord> m = state.message(id);
    FrameNote n{};
    n.frame = frame;
    n.kind = k.msg_packet;
    n.ref = id;
    if (m) display_message(tvb, pinfo, t, state, n, &*m);
  }
}

}  // namespace rdmatel::plugin
