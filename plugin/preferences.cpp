// SPDX-License-Identifier: GPL-2.0-or-later
#include "plugin/preferences.h"

#include <epan/uat.h>
#include <epan/value_string.h>

#include <cstring>

namespace rdmatel::plugin {

Prefs prefs;

namespace {

// One row of the "rdmatel_point_roles" table: interface name (or numeric id) -> role.
struct RoleRow {
  char* name;
  guint role;
};

RoleRow* role_rows_ = nullptr;
guint role_row_count_ = 0;

const value_string kRoleNames[] = {
    {guint(PointRole::kCompute), "compute"},
    {guint(PointRole::kStorage), "storage"},
    {guint(PointRole::kFabric), "fabric"},
    {0, nullptr},
};

UAT_CSTRING_CB_DEF(point_roles, name, RoleRow)
UAT_VS_DEF(point_roles, role, RoleRow, guint, guint(PointRole::kFabric), "fabric")

void* role_row_copy(void* dst, const void* src, size_t) {
  auto* d = static_cast<RoleRow*>(dst);
  const auto* s = static_cast<const RoleRow*>(src);
  d->name = g_strdup(s->name);
  d->role = s->role;
  return d;
}

gboolean role_row_update(void* r, char** err) {
  auto* row = static_cast<RoleRow*>(r);
  if (!row->name || !*row->name) {
    *err = g_strdup("The interface name must not be empty");
    return FALSE;
  }
  return TRUE;
}

void role_row_free(void* r) {
  auto* row = static_cast<RoleRow*>(r);
  g_free(row->name);
  row->name = nullptr;
}

uat_field_t role_fields[] = {
    UAT_FLD_CSTRING(point_roles, name, "Interface",
                    "Capture interface name (as frame.interface_name shows it) or numeric interface id"),
    UAT_FLD_VS(point_roles, role, "Role", kRoleNames,
               "compute (switch port facing a GPU server), storage (facing a storage server) or fabric"),
    UAT_END_FIELDS,
};

}  // namespace

void register_preferences(int proto) {
  module_t* m = prefs_register_protocol(proto, nullptr);
  prefs_register_uint_preference(m, "io_timeout", "I/O timeout (s)",
                                 "An NVMe I/O without completion is reported incomplete once every point that "
                                 "saw its command has moved this many seconds past it",
                                 10, &prefs.io_timeout_s);
  prefs_register_uint_preference(m, "reorder_window", "Reorder window (ms)",
                                 "How far timestamps may go backwards within one observation point, and how "
                                 "long results wait for the other points' copies of a packet",
                                 10, &prefs.reorder_window_ms);
  prefs_register_uint_preference(m, "period", "Flow period (ms)",
                                 "Length of the per-flow periods over which bytes, effective throughput, NAKs and "
                                 "retransmissions are counted",
                                 10, &prefs.period_ms);
  prefs_register_uint_preference(m, "max_ios", "Most I/Os tracked at once",
                                 "Limit on NVMe I/Os in flight; beyond it the oldest are reported early", 10,
                                 &prefs.max_ios);
  prefs_register_uint_preference(m, "max_flows", "Most RDMA flows tracked",
                                 "Limit on RDMA flows (source IP, destination IP, destination QPN)", 10,
                                 &prefs.max_flows);
  prefs_register_uint_preference(m, "max_messages", "Most RDMA messages open at once",
                                 "Limit on RDMA messages not yet complete; beyond it the oldest are reported early",
                                 10, &prefs.max_messages);

  static uat_t* roles = uat_new("Observation point roles", sizeof(RoleRow), "rdmatel_point_roles", TRUE,
                                &role_rows_, &role_row_count_, UAT_AFFECTS_DISSECTION, nullptr, role_row_copy,
                                role_row_update, role_row_free, nullptr, nullptr, role_fields);
  prefs_register_uat_preference(m, "point_roles", "Observation point roles",
                                "Role of each capture interface: compute, storage or fabric. Interfaces not "
                                "listed get their role inferred per I/O (the point that sees the command first "
                                "is the compute side, the one that sees it last the storage side)",
                                roles);

  struct Threshold {
    const char* name;
    const char* title;
    const char* what;
    unsigned* value;
  };
  static const Threshold thresholds[] = {
      {"slow_rtt", "Slow I/O: RTT above (µs)", "RTT (network share of the I/O)", &prefs.slow.rtt_us},
      {"slow_dal", "Slow I/O: DAL above (µs)", "DAL (storage data-access latency)", &prefs.slow.dal_us},
      {"slow_dpl", "Slow I/O: DPL above (µs)", "DPL (compute-side data-preparation latency)", &prefs.slow.dpl_us},
      {"slow_iol1", "Slow I/O: IOL1 above (µs)",
       "IOL1 (I/O latency at the compute side; IOL where only one point saw the I/O)", &prefs.slow.iol1_us},
      {"slow_iol2", "Slow I/O: IOL2 above (µs)", "IOL2 (I/O latency at the storage side)", &prefs.slow.iol2_us},
      {"slow_fct", "Slow message: FCT above (µs)", "FCT (RDMA message completion time)", &prefs.slow.fct_us},
  };
  for (const Threshold& t : thresholds) {
    // prefs keep pointers to these strings for the life of the program.
    char* description = g_strdup_printf(
        "Frames whose %s exceeds this many microseconds get rdmatel.slow and a \"slow\" expert info; 0 = off",
        t.what);
    prefs_register_uint_preference(m, t.name, t.title, description, 10, t.value);
  }
}

EngineConfig engine_config_from_prefs() {
  EngineConfig c;
  c.io_timeout_ns = DurationNs(prefs.io_timeout_s) * kNsPerSec;
  c.reorder_window_ns = DurationNs(prefs.reorder_window_ms) * kNsPerMs;
  c.period_ns = DurationNs(prefs.period_ms ? prefs.period_ms : 1) * kNsPerMs;
  c.max_outstanding_ios = prefs.max_ios ? prefs.max_ios : 1;
  c.max_flows = prefs.max_flows ? prefs.max_flows : 1;
  c.max_open_messages = prefs.max_messages ? prefs.max_messages : 1;
  for (guint i = 0; i < role_row_count_; ++i) {
    const RoleRow& r = role_rows_[i];
    if (r.name && *r.name) c.roles.push_back(PointRoleOverride{r.name, PointRole(r.role)});
  }
  return c;
}

}  // namespace rdmatel::plugin
