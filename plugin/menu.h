// SPDX-License-Identifier: GPL-2.0-or-later
// The "RDMA Telemetry" menu of the Wireshark GUI: one click applies the most useful display
// filters (slow I/Os, incomplete I/Os, NAKs, retransmissions, ...). Inert in tshark.
#pragma once

namespace rdmatel::plugin {

void register_menu(int proto);

}  // namespace rdmatel::plugin
