// SPDX-License-Identifier: GPL-2.0-or-later
// The "rdmatel" tap and what reads it: the statistics tables (stats_io.cpp, stats_fabric.cpp) and
// the conversation and endpoint tables (here).
#include "plugin/stats.h"

#include <epan/packet.h>  // first: conversation_table.h needs glib's types

#include <epan/conversation_table.h>
#include <epan/tap.h>

#include "plugin/stat_table.h"
#include "plugin/tap.h"

namespace rdmatel::plugin {
namespace {

int tap_ = -1;

// ---------------------------------------------------------------------------------------------
// conv,rdmatel / endpoints,rdmatel: an endpoint is an IP and a QPN ("10.1.0.1 QP 0x0004d2", one
// string address, so that tshark shows the QPN too: it prints ports for TCP, UDP and SCTP only);
// a conversation is a queue pair, both directions. Filters use the frames' rdmatel.ep fields.

const char* address_filter(conv_filter_type_e type) {
  switch (type) {
    case CONV_FT_SRC_ADDRESS: return "rdmatel.ep.src";
    case CONV_FT_DST_ADDRESS: return "rdmatel.ep.dst";
    case CONV_FT_ANY_ADDRESS: return "rdmatel.ep";
    default: return CONV_FILTER_INVALID;
  }
}

const char* conv_filter(conv_item_t*, conv_filter_type_e type) { return address_filter(type); }
const char* endpoint_filter(endpoint_item_t*, conv_filter_type_e type) { return address_filter(type); }

ct_dissector_info_t conv_info = {&conv_filter};
et_dissector_info_t endpoint_info = {&endpoint_filter};

// The frame's endpoints as the tables key them: AT_STRINGZ "IP QP N" (endpoint_name, the values
// of rdmatel.ep.src / .dst) in packet-scope memory. Formatted here, not for every tapped frame:
// only these two tables need them.
void endpoint_addresses(packet_info* pinfo, const TapFrame& tap, address& src, address& dst) {
  char* s = static_cast<char*>(wmem_alloc(pinfo->pool, kEndpointNameSize));
  char* d = static_cast<char*>(wmem_alloc(pinfo->pool, kEndpointNameSize));
  endpoint_name(s, tap.src_ip, tap.src_qpn_known, tap.src_qpn);
  endpoint_name(d, tap.dst_ip, true, tap.dst_qpn);
  set_address(&src, AT_STRINGZ, int(strlen(s) + 1), s);
  set_address(&dst, AT_STRINGZ, int(strlen(d) + 1), d);
}

tap_packet_status conv_packet(void* pct, packet_info* pinfo, epan_dissect_t*, const void* data, tap_flags_t flags) {
  const auto* tap = static_cast<const TapFrame*>(data);
  if (!tap || !tap->roce) return TAP_PACKET_DONT_REDRAW;
  auto* hash = static_cast<conv_hash_t*>(pct);
  hash->flags = flags;
  address src, dst;
  endpoint_addresses(pinfo, *tap, src, dst);
  add_conversation_table_data(hash, &src, &dst, 0, 0, 1, int(pinfo->fd->pkt_len), &pinfo->rel_ts, &pinfo->abs_ts,
                              &conv_info, CONVERSATION_IBQP);
  return TAP_PACKET_REDRAW;
}

tap_packet_status endpoint_packet(void* pit, packet_info* pinfo, epan_dissect_t*, const void* data, tap_flags_t flags) {
  const auto* tap = static_cast<const TapFrame*>(data);
  if (!tap || !tap->roce) return TAP_PACKET_DONT_REDRAW;
  auto* hash = static_cast<conv_hash_t*>(pit);
  hash->flags = flags;
  int len = int(pinfo->fd->pkt_len);
  address src, dst;
  endpoint_addresses(pinfo, *tap, src, dst);
  add_endpoint_table_data(hash, &src, 0, TRUE, 1, len, &endpoint_info, ENDPOINT_IBQP);
  add_endpoint_table_data(hash, &dst, 0, FALSE, 1, len, &endpoint_info, ENDPOINT_IBQP);
  return TAP_PACKET_REDRAW;
}

}  // namespace

int tap_id() { return tap_; }

void register_statistics(int proto) {
  tap_ = register_tap("rdmatel");
  register_io_tables(proto);
  register_fabric_tables();
  register_conversation_table(proto, TRUE, &conv_packet, &endpoint_packet);
}

}  // namespace rdmatel::plugin
