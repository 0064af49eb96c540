// SPDX-License-Identifier: GPL-2.0-or-later
// Registration of the "RDMA Telemetry" postdissector.
#pragma once

void proto_register_rdmatel(void);
void proto_reg_handoff_rdmatel(void);
