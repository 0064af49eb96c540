// SPDX-License-Identifier: GPL-2.0-or-later
#include "plugin/fields.h"

#include <epan/packet.h>

namespace rdmatel::plugin {

Fields fields;

namespace {
const value_string kNakCodes[] = {
    {0, "PSN sequence error"},       {1, "Invalid request"},    {2, "Remote access error"},
    {3, "Remote operational error"}, {4, "Invalid RD request"}, {0, nullptr},
};
}  // namespace


void register_fields(int proto) {
  Fields& f = fields;
  f.proto = proto;
  // clang-format off
  static hf_register_info hf[] = {
    {&f.point, {"Observation point", "rdmatel.point", FT_STRING, BASE_NONE, nullptr, 0,
                "Capture interface (switch port, TAP, host NIC) where this frame was seen", HFILL}},
    {&f.point_role, {"Point role", "rdmatel.point_role", FT_STRING, BASE_NONE, nullptr, 0,
                     "Role of the observation point: compute, storage or fabric (configured or inferred)", HFILL}},
    {&f.io_op, {"Operation", "rdmatel.io.op", FT_STRING, BASE_NONE, nullptr, 0,
                "NVMe command of the I/O: read, write, flush, or the admin or fabrics command name", HFILL}},
    {&f.io_cid, {"Command identifier", "rdmatel.io.cid", FT_UINT16, BASE_DEC, nullptr, 0,
                 "NVMe command identifier (CID) of the I/O", HFILL}},
    {&f.io_qpn, {"Storage-side QPN", "rdmatel.io.qpn", FT_UINT24, BASE_HEX_DEC, nullptr, 0,
                 "Destination QPN of host-to-storage packets of the I/O's queue pair", HFILL}},
    {&f.io_host_qpn, {"Host-side QPN", "rdmatel.io.host_qpn", FT_UINT24, BASE_HEX_DEC, nullptr, 0,
                      "Destination QPN of storage-to-host packets of the I/O's queue pair, once paired", HFILL}},
    {&f.io_host, {"Host", "rdmatel.io.host", FT_IPv4, BASE_NONE, nullptr, 0,
                  "IPv4 address of the host (NVMe initiator) of the I/O", HFILL}},
    {&f.io_host6, {"Host", "rdmatel.io.host6", FT_IPv6, BASE_NONE, nullptr, 0,
                   "IPv6 address of the host (NVMe initiator) of the I/O", HFILL}},
    {&f.io_storage, {"Storage", "rdmatel.io.storage", FT_IPv4, BASE_NONE, nullptr, 0,
                     "IPv4 address of the storage server (NVMe target) of the I/O", HFILL}},
    {&f.io_storage6, {"Storage", "rdmatel.io.storage6", FT_IPv6, BASE_NONE, nullptr, 0,
                      "IPv6 address of the storage server (NVMe target) of the I/O", HFILL}},
    {&f.io_stage, {"Stage", "rdmatel.io.stage", FT_STRING, BASE_NONE, nullptr, 0,
                   "What this frame is for its I/O: command, data, read_request, read_response or completion", HFILL}},
    {&f.io_cmd_frame, {"Command frame", "rdmatel.io.cmd_frame", FT_FRAMENUM, BASE_NONE, FRAMENUM_TYPE(FT_FRAMENUM_REQUEST), 0,
                       "Frame of the command, first copy at the compute-side point", HFILL}},
    {&f.io_rsp_frame, {"Completion frame", "rdmatel.io.rsp_frame", FT_FRAMENUM, BASE_NONE, FRAMENUM_TYPE(FT_FRAMENUM_RESPONSE), 0,
                       "Frame of the completion, first copy at the compute-side point", HFILL}},
    {&f.io_status, {"Status", "rdmatel.io.status", FT_UINT16, BASE_HEX, nullptr, 0,
                    "NVMe completion status field (0 = success)", HFILL}},
    {&f.io_complete, {"Complete", "rdmatel.io.complete", FT_BOOLEAN, BASE_NONE, nullptr, 0,
                      "Whether the completion was seen at the compute side", HFILL}},
    {&f.io_copy, {"Repeated copy", "rdmatel.io.copy", FT_BOOLEAN, BASE_NONE, nullptr, 0,
                  "This frame repeats a packet this point already saw (retransmission); it does not move any timestamp", HFILL}},
    {&f.io_length, {"Data length", "rdmatel.io.length", FT_UINT32, BASE_DEC, nullptr, 0,
                    "Data length from the command's SGL descriptor, bytes", HFILL}},
    {&f.io_opcode, {"Opcode", "rdmatel.io.opcode", FT_UINT8, BASE_HEX, nullptr, 0,
                    "NVMe command opcode (0x7f: fabrics command, see rdmatel.io.fctype)", HFILL}},
    {&f.io_fctype, {"Fabrics command type", "rdmatel.io.fctype", FT_UINT8, BASE_HEX, nullptr, 0,
                    "NVMe-oF fabrics command type (Connect, Property Get/Set, ...)", HFILL}},
    {&f.io_admin, {"Admin queue", "rdmatel.io.admin", FT_BOOLEAN, BASE_NONE, nullptr, 0,
                   "The command was sent on the admin queue (opcodes there name admin commands)", HFILL}},
    {&f.slow, {"Slow", "rdmatel.slow", FT_BOOLEAN, BASE_NONE, nullptr, 0,
               "The I/O or message exceeds one of the slow thresholds set in the preferences", HFILL}},
    {&f.qp, {"QPN", "rdmatel.qp", FT_UINT24, BASE_HEX_DEC, nullptr, 0,
             "Either queue pair number of the packet's endpoints (source or destination)", HFILL}},
    {&f.qp_src, {"Source QPN", "rdmatel.qp.src", FT_UINT24, BASE_HEX_DEC, nullptr, 0,
                 "QPN of the sending queue pair: the destination QPN of the reverse direction of this queue pair "
                 "(or the DETH source QP of a UD packet); absent until the capture showed it", HFILL}},
    {&f.qp_dst, {"Destination QPN", "rdmatel.qp.dst", FT_UINT24, BASE_HEX_DEC, nullptr, 0,
                 "QPN of the receiving queue pair (BTH destination QP)", HFILL}},
    {&f.ep, {"RDMA endpoint", "rdmatel.ep", FT_STRING, BASE_NONE, nullptr, 0,
             "Either RDMA endpoint of the packet, as \"IP QP N\" (the conversation and endpoint tables' names)", HFILL}},
    {&f.ep_src, {"Source endpoint", "rdmatel.ep.src", FT_STRING, BASE_NONE, nullptr, 0,
                 "Sending RDMA endpoint, \"IP QP N\" (\"IP QP ?\" while the sending QPN is unknown)", HFILL}},
    {&f.ep_dst, {"Destination endpoint", "rdmatel.ep.dst", FT_STRING, BASE_NONE, nullptr, 0,
                 "Receiving RDMA endpoint, \"IP QP N\"", HFILL}},
    {&f.dal, {"DAL (µs)", "rdmatel.dal", FT_DOUBLE, BASE_NONE, nullptr, 0,
              "Data access latency at the storage side: first data (read) or READ REQUEST (write) minus command (T3-T2), microseconds", HFILL}},
    {&f.dpl, {"DPL (µs)", "rdmatel.dpl", FT_DOUBLE, BASE_NONE, nullptr, 0,
              "Data preparation latency at the compute side: first READ RESPONSE minus READ REQUEST (T5-T4), writes only, microseconds", HFILL}},
    {&f.rtt, {"RTT (µs)", "rdmatel.rtt", FT_DOUBLE, BASE_NONE, nullptr, 0,
              "Network share of the I/O: IOL1 minus IOL2, microseconds", HFILL}},
    {&f.iol1, {"IOL1 (µs)", "rdmatel.iol1", FT_DOUBLE, BASE_NONE, nullptr, 0,
               "I/O latency at the compute side: completion minus command, microseconds", HFILL}},
    {&f.iol2, {"IOL2 (µs)", "rdmatel.iol2", FT_DOUBLE, BASE_NONE, nullptr, 0,
               "I/O latency at the storage side: completion minus command, microseconds", HFILL}},
    {&f.iol, {"IOL (µs)", "rdmatel.iol", FT_DOUBLE, BASE_NONE, nullptr, 0,
              "I/O latency at the point that measured it (IOL1 where roles are known; the only point otherwise), microseconds", HFILL}},
    {&f.fct, {"FCT (µs)", "rdmatel.fct", FT_DOUBLE, BASE_NONE, nullptr, 0,
              "Flow completion time of the RDMA message at this point: last packet minus first, retransmissions included, microseconds", HFILL}},
    {&f.fet, {"FET (bit/s)", "rdmatel.fet", FT_DOUBLE, BASE_NONE, nullptr, 0,
              "Effective throughput of the message: (bytes - retransmitted bytes) * 8 / FCT, bits per second", HFILL}},
    {&f.fnr, {"FNR", "rdmatel.fnr", FT_DOUBLE, BASE_NONE, nullptr, 0,
              "NAK rate of the message: NAKs / original (not retransmitted) packets", HFILL}},
    {&f.msg_kind, {"Message kind", "rdmatel.msg.kind", FT_STRING, BASE_NONE, nullptr, 0,
                   "write, send or read_response", HFILL}},
    {&f.msg_bytes, {"Bytes", "rdmatel.msg.bytes", FT_UINT64, BASE_DEC, nullptr, 0,
                    "Payload bytes of every packet of the message seen at this point, retransmissions included", HFILL}},
    {&f.msg_retrans_bytes, {"Retransmitted bytes", "rdmatel.msg.retrans_bytes", FT_UINT64, BASE_DEC, nullptr, 0,
                            "Payload bytes of the message's retransmitted packets", HFILL}},
    {&f.msg_packets, {"Packets", "rdmatel.msg.packets", FT_UINT64, BASE_DEC, nullptr, 0,
                      "Data packets of the message seen at this point, copies included", HFILL}},
    {&f.msg_retrans_packets, {"Retransmitted packets", "rdmatel.msg.retrans_packets", FT_UINT64, BASE_DEC, nullptr, 0,
                              "Packets whose PSN was not newer than the newest PSN seen at this point", HFILL}},
    {&f.msg_naks, {"NAKs", "rdmatel.msg.naks", FT_UINT64, BASE_DEC, nullptr, 0,
                   "NAKs in the reverse direction whose PSN lies in the message", HFILL}},
    {&f.msg_first_psn, {"First PSN", "rdmatel.msg.first_psn", FT_UINT24, BASE_DEC, nullptr, 0, nullptr, HFILL}},
    {&f.msg_last_psn, {"Last PSN", "rdmatel.msg.last_psn", FT_UINT24, BASE_DEC, nullptr, 0, nullptr, HFILL}},
    {&f.msg_complete, {"Complete", "rdmatel.msg.complete", FT_BOOLEAN, BASE_NONE, nullptr, 0,
                       "Every packet of the message was seen at this point (otherwise the capture started or ended inside it)", HFILL}},
    {&f.msg_first_frame, {"First frame", "rdmatel.msg.first_frame", FT_FRAMENUM, BASE_NONE, FRAMENUM_TYPE(FT_FRAMENUM_NONE), 0,
                          "First frame of the message at this point", HFILL}},
    {&f.msg_last_frame, {"Completing frame", "rdmatel.msg.last_frame", FT_FRAMENUM, BASE_NONE, FRAMENUM_TYPE(FT_FRAMENUM_NONE), 0,
                         "The frame that completes the message at this point; its metrics are shown there", HFILL}},
    {&f.msg_imm, {"With immediate", "rdmatel.msg.immediate", FT_BOOLEAN, BASE_NONE, nullptr, 0, nullptr, HFILL}},
    {&f.retrans, {"Retransmission", "rdmatel.retrans", FT_BOOLEAN, BASE_NONE, nullptr, 0,
                  "A data packet whose PSN is not newer than the newest this point saw for the flow (go-back-N resend)", HFILL}},
    {&f.duplicate, {"Duplicate PSN", "rdmatel.msg.duplicate", FT_BOOLEAN, BASE_NONE, nullptr, 0,
                    "This point already saw a packet with this PSN", HFILL}},
    {&f.oos, {"Out of sequence", "rdmatel.msg.oos", FT_BOOLEAN, BASE_NONE, nullptr, 0,
              "The PSN skips ahead: packets were lost before this point", HFILL}},
    {&f.nak, {"NAK", "rdmatel.nak", FT_BOOLEAN, BASE_NONE, nullptr, 0,
              "A negative acknowledgement (AETH syndrome 011xxxxx)", HFILL}},
    {&f.nak_code, {"NAK code", "rdmatel.nak.code", FT_UINT8, BASE_DEC, VALS(kNakCodes), 0,
                   "AETH NAK code", HFILL}},
    {&f.nak_msg_frame, {"NAKed message", "rdmatel.nak.msg_frame", FT_FRAMENUM, BASE_NONE, FRAMENUM_TYPE(FT_FRAMENUM_NONE), 0,
                        "First frame of the message whose PSN the NAK names", HFILL}},
    {&f.ecn_ce, {"ECN CE", "rdmatel.ecn_ce", FT_BOOLEAN, BASE_NONE, nullptr, 0,
                 "IP ECN field is Congestion Experienced", HFILL}},
    {&f.cnp, {"CNP", "rdmatel.cnp", FT_BOOLEAN, BASE_NONE, nullptr, 0,
              "RoCEv2 congestion notification packet (BTH opcode 0x81)", HFILL}},
  };
  static int* ett[] = {&f.ett, &f.ett_io, &f.ett_msg};
  static ei_register_info ei[] = {
    {&f.ei_io_incomplete, {"rdmatel.io.incomplete", PI_SEQUENCE, PI_WARN,
                           "NVMe I/O without completion", EXPFILL}},
    {&f.ei_io_error, {"rdmatel.io.error", PI_RESPONSE_CODE, PI_WARN,
                      "NVMe command completed with an error status", EXPFILL}},
    {&f.ei_io_copy, {"rdmatel.io.repeated", PI_SEQUENCE, PI_NOTE,
                     "Repeated copy of an NVMe I/O packet (retransmission); the first copy at this point counts", EXPFILL}},
    {&f.ei_capsule_unparseable, {"rdmatel.io.unparseable", PI_MALFORMED, PI_WARN,
                                 "SEND on an NVMe queue pair that is not a valid NVMe capsule", EXPFILL}},
    {&f.ei_orphan_completion, {"rdmatel.io.orphan", PI_SEQUENCE, PI_NOTE,
                               "NVMe completion whose command is not in the capture", EXPFILL}},
    {&f.ei_retransmission, {"rdmatel.retrans.expert", PI_SEQUENCE, PI_NOTE,
                            "Retransmission: PSN not newer than the newest seen at this point", EXPFILL}},
    {&f.ei_duplicate, {"rdmatel.duplicate", PI_SEQUENCE, PI_NOTE,
                       "Duplicate PSN: this point already saw it", EXPFILL}},
    {&f.ei_out_of_sequence, {"rdmatel.oos", PI_SEQUENCE, PI_WARN,
                             "Out-of-sequence PSN: packets were lost before this point", EXPFILL}},
    {&f.ei_nak, {"rdmatel.nak.expert", PI_SEQUENCE, PI_WARN, "NAK", EXPFILL}},
    {&f.ei_slow_io, {"rdmatel.slow_io", PI_SEQUENCE, PI_WARN,
                     "Slow I/O: a latency exceeds its threshold", EXPFILL}},
    {&f.ei_slow_message, {"rdmatel.slow_message", PI_SEQUENCE, PI_WARN,
                          "Slow message: FCT exceeds its threshold", EXPFILL}},
    {&f.ei_internal, {"rdmatel.internal_error", PI_MALFORMED, PI_ERROR,
                      "rdmatel internal error", EXPFILL}},
    {&f.ei_engine_warning, {"rdmatel.limit", PI_PROTOCOL, PI_WARN,
                            "rdmatel limit reached", EXPFILL}},
  };
  // clang-format on
  proto_register_field_array(proto, hf, array_length(hf));
  proto_register_subtree_array(ett, array_length(ett));
  expert_module_t* em = expert_register_protocol(proto);
  expert_register_field_array(em, ei, array_length(ei));
}

}  // namespace rdmatel::plugin
