// SPDX-License-Identifier: GPL-2.0-or-later
// Field, subtree and expert-info handles of the rdmatel protocol (SPEC §8 names).
#pragma once

#include <epan/expert.h>
#include <epan/proto.h>

namespace rdmatel::plugin {

struct Fields {
  int proto = -1;
  int io = -1, msg = -1, io_id = -1, io_frame = -1, io_counted = -1;
  int io_status_sc = -1, io_status_sct = -1, io_status_more = -1, io_status_dnr = -1;  // the subtrees' own fields: stable keys in -T json / ek
  int point = -1, point_role = -1;
  int io_op = -1, io_cid = -1, io_qpn = -1, io_host_qpn = -1, io_host = -1, io_host6 = -1, io_storage = -1,
      io_storage6 = -1, io_stage = -1, io_cmd_frame = -1, io_rsp_frame = -1, io_status = -1, io_complete = -1,
      io_copy = -1, io_length = -1, io_opcode = -1, io_fctype = -1, io_admin = -1;
  int dal = -1, dpl = -1, rtt = -1, iol1 = -1, iol2 = -1, iol = -1;
  int fct = -1, fct_multi = -1, fet = -1, fnr = -1, msg_kind = -1, msg_bytes = -1, msg_retrans_bytes = -1, msg_packets = -1,
      msg_retrans_packets = -1, msg_naks = -1, msg_first_psn = -1, msg_last_psn = -1, msg_complete = -1,
      msg_first_frame = -1, msg_last_frame = -1, msg_imm = -1;
  int slow = -1, alert = -1;
  int qp = -1, qp_src = -1, qp_dst = -1, ep = -1, ep_src = -1, ep_dst = -1;
  int retrans = -1, duplicate = -1, oos = -1, nak = -1, nak_code = -1, nak_msg_frame = -1, ecn_ce = -1, cnp = -1;
  int pfc_priority = -1, pfc_quanta = -1, pfc_pause_time = -1, pfc_resume = -1, pfc_pause = -1, pfc_storm = -1, pfc_storm_time = -1;
  int gpu_src = -1, gpu_dst = -1, node_src = -1, node_dst = -1, job = -1;
  int hop_delay = -1, hop_prev_frame = -1, hop_raw = -1, hop_lost = -1;
  int diagnosis = -1, diag_rank = -1, diag_scope = -1, diag_segment = -1, diag_evidence = -1;
  int diag_flow = -1, diag_flow_rank = -1, diag_flow_kind = -1, diag_flow_evidence = -1;
  int ett = -1, ett_io = -1, ett_msg = -1, ett_diag = -1, ett_status = -1;
  expert_field ei_io_incomplete = EI_INIT;
  expert_field ei_io_error = EI_INIT;
  expert_field ei_io_copy = EI_INIT;
  expert_field ei_capsule_unparseable = EI_INIT;
  expert_field ei_orphan_completion = EI_INIT;
  expert_field ei_retransmission = EI_INIT;
  expert_field ei_duplicate = EI_INIT;
  expert_field ei_out_of_sequence = EI_INIT;
  expert_field ei_nak = EI_INIT;
  expert_field ei_slow_io = EI_INIT;
  expert_field ei_slow_message = EI_INIT;
  expert_field ei_internal = EI_INIT;
  expert_field ei_one_pass = EI_INIT;
  expert_field ei_after_first_pass = EI_INIT;
  expert_field ei_engine_warning = EI_INIT;
  expert_field ei_pfc_pause = EI_INIT;
  expert_field ei_ecn_ce = EI_INIT;
  expert_field ei_cnp = EI_INIT;
  expert_field ei_pfc_storm = EI_INIT;
  expert_field ei_diagnosis = EI_INIT;
  expert_field ei_diagnosis_flow = EI_INIT;
  expert_field ei_hop_lost = EI_INIT;
};

extern Fields fields;

/// Registers every field, subtree and expert info with `proto`.
void register_fields(int proto);

}  // namespace rdmatel::plugin
