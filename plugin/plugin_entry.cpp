// SPDX-License-Identifier: GPL-2.0-or-later
// Wireshark plugin entry points. A plugin is built for one Wireshark major.minor release.
#include <epan/proto.h>
#include <ws_symbol_export.h>
#include <ws_version.h>

#include "plugin/rdmatel_proto.h"

#define RDMATEL_STR2(x) #x
#define RDMATEL_STR(x) RDMATEL_STR2(x)

// In C++ a const global has internal linkage: declare the symbols extern "C" first.
extern "C" {
WS_DLL_PUBLIC const char plugin_version[];
WS_DLL_PUBLIC const int plugin_want_major;
WS_DLL_PUBLIC const int plugin_want_minor;
WS_DLL_PUBLIC void plugin_register(void);
}

const char plugin_version[] = RDMATEL_PLUGIN_VERSION;
const int plugin_want_major = WIRESHARK_VERSION_MAJOR;
const int plugin_want_minor = WIRESHARK_VERSION_MINOR;

void plugin_register(void) {
  static proto_plugin plug;
  plug.register_protoinfo = proto_register_rdmatel;
  plug.register_handoff = proto_reg_handoff_rdmatel;
  proto_register_plugin(&plug);
}
