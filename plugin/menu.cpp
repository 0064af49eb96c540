// SPDX-License-Identifier: GPL-2.0-or-later
#include "plugin/menu.h"

#include <epan/plugin_if.h>

namespace rdmatel::plugin {
namespace {

struct Entry {
  const char* label;  ///< nullptr: a separator
  const char* tooltip;
  const char* filter;
};

const Entry kEntries[] = {
    {"Slow I/Os and messages", "rdmatel.slow: above a threshold set in the preferences (Slow I/O: ... above)",
     "rdmatel.slow"},
    {"Incomplete I/Os", "NVMe commands whose completion never came", "rdmatel.io.incomplete"},
    {"I/Os with an error status", "NVMe completions with a non-zero status", "rdmatel.io.error"},
    {"I/O latencies", "Compute-side completions of NVMe I/Os, where DAL, DPL, RTT, IOL1, IOL2 are shown",
     "rdmatel.io.stage == \"completion\" && (rdmatel.iol1 || rdmatel.iol)"},
    {nullptr, nullptr, nullptr},
    {"NAKs", "Negative acknowledgements (AETH syndrome 011xxxxx)", "rdmatel.nak"},
    {"Retransmissions", "Data packets whose PSN is not newer than the newest seen at their point",
     "rdmatel.retrans"},
    {"Lost packets", "Out-of-sequence PSNs (loss before the point), NAKs and retransmissions",
     "rdmatel.msg.oos || rdmatel.nak || rdmatel.retrans"},
    {"Congestion (ECN CE, CNP)", "Congestion-experienced packets and congestion notification packets",
     "rdmatel.ecn_ce || rdmatel.cnp"},
    {"Message completions", "Frames completing an RDMA message, where FCT, FET and FNR are shown", "rdmatel.fct"},
    {nullptr, nullptr, nullptr},
    {"All RDMA Telemetry frames", "Every frame the plugin annotated", "rdmatel"},
    {"Clear the filter", "Show every frame", ""},
};

void apply_filter(ext_menubar_gui_type, gpointer, gpointer user_data) {
  plugin_if_apply_filter(static_cast<const char*>(user_data), TRUE);
}

}  // namespace

void register_menu(int proto) {
  ext_menu_t* menu = ext_menubar_register_menu(proto, "RDMA Telemetry", TRUE);
  for (const Entry& e : kEntries) {
    if (!e.label) {
      ext_menubar_add_separator(menu);
      continue;
    }
    ext_menubar_add_entry(menu, e.label, e.tooltip, apply_filter, const_cast<char*>(e.filter));
  }
}

}  // namespace rdmatel::plugin
