// SPDX-License-Identifier: GPL-2.0-or-later
// Statistics on the "rdmatel" tap, in tshark (-z) and in the GUI (Statistics menu):
//   rdmatel,io,host / rdmatel,io,storage / rdmatel,io,pair   NVMe latency per host, storage, pair
//   rdmatel,msg,flow                                          RDMA messages per flow and point
//   rdmatel,srt                                               NVMe service response time by command
//   conv,rdmatel / endpoints,rdmatel                          RDMA endpoints (IP + QPN)
// Every table aggregates the engine's records with the engine's own aggregation (IoGroupStats,
// FlowStats), so its numbers are the ones `rdmatel analyze` prints.
#pragma once

namespace rdmatel::plugin {

/// Registers the tap and all its tables. Call from proto_register.
void register_statistics(int proto);

}  // namespace rdmatel::plugin
