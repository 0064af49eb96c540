// SPDX-License-Identifier: GPL-2.0-or-later
#include "plugin/preferences.h"

#include <epan/uat.h>
#include <epan/value_string.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "rdmatel/alert_rule.h"
#include "rdmatel/gpu_map.h"
#include "rdmatel/sampling.h"

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

// A table of one-text rows, each a rule a CLI option takes: "rdmatel_alerts" (--alert) and
// "rdmatel_key_flows" (--key-flow). Rows are checked by the engine's own parser.
struct RuleRow {
  char* rule;
};

void* rule_row_copy(void* dst, const void* src, size_t) {
  static_cast<RuleRow*>(dst)->rule = g_strdup(static_cast<const RuleRow*>(src)->rule);
  return dst;
}
void rule_row_free(void* r) {
  g_free(static_cast<RuleRow*>(r)->rule);
  static_cast<RuleRow*>(r)->rule = nullptr;
}
// `Parse` returns an optional rule and sets a sentence on failure (no C++ object survives this call).
template <typename Parse>
gboolean rule_row_check(void* r, char** err, Parse parse) {
  std::string error;
  const char* rule = static_cast<RuleRow*>(r)->rule;
  const bool ok = parse(rule ? rule : "", error);
  if (!ok) *err = g_strdup(error.c_str());
  return ok ? TRUE : FALSE;
}

RuleRow* alert_rows_ = nullptr;
guint alert_row_count_ = 0;
UAT_CSTRING_CB_DEF(alert_rules, rule, RuleRow)
gboolean alert_row_update(void* r, char** err) {
  return rule_row_check(r, err, [](const char* t, std::string& e) { return alerts::AlertRule::parse(t, e).has_value(); });
}
uat_field_t alert_fields[] = {
    UAT_FLD_CSTRING(alert_rules, rule, "Rule",
                    "[SCOPE=VALUE:]METRIC>VALUE or METRIC<VALUE, e.g. rtt>50, storage=10.2.0.1:dal>500, fnr>0.001 "
                    "(latencies and FCT in µs, FET in bit/s)"),
    UAT_END_FIELDS,
};

RuleRow* key_flow_rows_ = nullptr;
guint key_flow_row_count_ = 0;
UAT_CSTRING_CB_DEF(key_flows, rule, RuleRow)
gboolean key_flow_row_update(void* r, char** err) {
  return rule_row_check(r, err, [](const char* t, std::string& e) { return KeyFlowRule::parse(t, e).has_value(); });
}
uat_field_t key_flow_fields[] = {
    UAT_FLD_CSTRING(key_flows, rule, "Key flow", "SRC[>DST] with IP prefixes, e.g. 10.1.0.0/16>10.2.0.1 (both directions)"),
    UAT_END_FIELDS,
};

// One row of the "rdmatel_gpu_map" table: the CLI's --gpu-map line ip,gpu,node[,job].
struct GpuRow {
  char* ip;
  char* gpu;
  char* node;
  char* job;
};

GpuRow* gpu_rows_ = nullptr;
guint gpu_row_count_ = 0;

UAT_CSTRING_CB_DEF(gpu_map, ip, GpuRow)
UAT_CSTRING_CB_DEF(gpu_map, gpu, GpuRow)
UAT_CSTRING_CB_DEF(gpu_map, node, GpuRow)
UAT_CSTRING_CB_DEF(gpu_map, job, GpuRow)

void* gpu_row_copy(void* dst, const void* src, size_t) {
  auto* d = static_cast<GpuRow*>(dst);
  const auto* s = static_cast<const GpuRow*>(src);
  d->ip = g_strdup(s->ip);
  d->gpu = g_strdup(s->gpu);
  d->node = g_strdup(s->node);
  d->job = g_strdup(s->job);
  return d;
}

// "ip,gpu,node[,job]" as the engine's `gpu` setting takes it.
std::string gpu_line(const GpuRow& r) {
  auto text = [](const char* s) { return std::string(s ? s : ""); };
  std::string line = text(r.ip) + "," + text(r.gpu) + "," + text(r.node);
  if (r.job && *r.job) line += "," + text(r.job);
  return line;
}

gboolean gpu_row_update(void* r, char** err) {
  // The same check as the CLI's: the engine's own parser (no C++ object survives this call).
  std::string error;
  GpuMap one;
  bool ok = one.add(gpu_line(*static_cast<GpuRow*>(r)), error);
  if (!ok) *err = g_strdup(error.c_str());
  return ok ? TRUE : FALSE;
}

void gpu_row_free(void* r) {
  auto* row = static_cast<GpuRow*>(r);
  for (char** f : {&row->ip, &row->gpu, &row->node, &row->job}) {
    g_free(*f);
    *f = nullptr;
  }
}

uat_field_t gpu_fields[] = {
    UAT_FLD_CSTRING(gpu_map, ip, "IP address", "An IP address of the GPU (a GPU with several NICs has a row per IP)"),
    UAT_FLD_CSTRING(gpu_map, gpu, "GPU", "The GPU's name, e.g. gpu-a0"),
    UAT_FLD_CSTRING(gpu_map, node, "Node", "The server the GPU is in"),
    UAT_FLD_CSTRING(gpu_map, job, "Job", "The AI job the GPU works for (may be empty)"),
    UAT_END_FIELDS,
};

}  // namespace

// Storage Wireshark writes each setting's preference into: a text field for durations (in the
// setting's unit, decimals allowed), a number for counts. Kept for the life of the program.
struct PrefSlot {
  const SettingSpec* spec;
  const char* text = nullptr;
  guint number = 0;
  gboolean flag = FALSE;
};
std::vector<PrefSlot>& pref_slots() {
  static std::vector<PrefSlot> slots;
  return slots;
}

static const char* clock_offsets_text_ = "";  ///< the clock_offsets preference (Wireshark owns the string)
static const char* point_speeds_text_ = "";   ///< the point_speeds preference

void register_preferences(int proto) {
  module_t* m = prefs_register_protocol(proto, nullptr);
  auto& slots = pref_slots();
  for (const SettingSpec* spec : setting_specs())
    if (spec->preference && (spec->type == SettingType::kDuration || spec->type == SettingType::kCount ||
                             spec->type == SettingType::kFlag))
      slots.push_back(PrefSlot{spec});
  for (PrefSlot& slot : slots) {
    const SettingSpec& sp = *slot.spec;
    // prefs keep pointers to these strings for the life of the program.
    if (sp.type == SettingType::kDuration) {
      char* title = g_strdup_printf("%s (%s)", sp.name, sp.unit);
      for (char* c = title; *c; ++c)
        if (*c == '_') *c = ' ';
      title[0] = char(g_ascii_toupper(title[0]));
      char* description = g_strdup_printf("%s. In %s; default %s.", sp.help,
                                          std::string(sp.unit) == "us"   ? "microseconds"
                                          : std::string(sp.unit) == "ms" ? "milliseconds"
                                                                         : "seconds", sp.fallback);
      slot.text = sp.fallback;
      prefs_register_string_preference(m, sp.name, title, description, &slot.text);
    } else if (sp.type == SettingType::kFlag) {
      char* title = g_strdup(sp.name);
      for (char* c = title; *c; ++c)
        if (*c == '_') *c = ' ';
      title[0] = char(g_ascii_toupper(title[0]));
      slot.flag = std::string(sp.fallback) == "on";
      prefs_register_bool_preference(m, sp.name, title, g_strdup_printf("%s. Default %s.", sp.help, sp.fallback),
                                     &slot.flag);
    } else {
      char* title = g_strdup(sp.name);
      for (char* c = title; *c; ++c)
        if (*c == '_') *c = ' ';
      title[0] = char(g_ascii_toupper(title[0]));
      char* description = g_strdup_printf("%s. Default %s.", sp.help, sp.fallback);
      slot.number = guint(std::strtoul(sp.fallback, nullptr, 10));
      prefs_register_uint_preference(m, sp.name, title, description, 10, &slot.number);
    }
  }

  static uat_t* roles = uat_new("Observation point roles", sizeof(RoleRow), "rdmatel_point_roles", TRUE,
                                &role_rows_, &role_row_count_, UAT_AFFECTS_DISSECTION, nullptr, role_row_copy,
                                role_row_update, role_row_free, nullptr, nullptr, role_fields);
  prefs_register_uat_preference(m, "point_roles", "Observation point roles",
                                "Role of each capture interface: compute, storage or fabric. Interfaces not "
                                "listed get their role from the traffic, per endpoint and without comparing "
                                "clocks: the point with the longest command-to-completion span of an I/O is "
                                "nearest the host (compute side), the one with the shortest nearest the storage",
                                roles);

  static uat_t* alert_table = uat_new("Alerts", sizeof(RuleRow), "rdmatel_alerts", TRUE, &alert_rows_,
                                      &alert_row_count_, UAT_AFFECTS_DISSECTION, nullptr, rule_row_copy,
                                      alert_row_update, rule_row_free, nullptr, nullptr, alert_fields);
  prefs_register_uat_preference(m, "alerts", "Alerts",
                                "Threshold alerts as the CLI's --alert takes them; frames of an I/O or message that "
                                "crosses one get rdmatel.slow and rdmatel.alert, and an expert warning",
                                alert_table);
  static uat_t* key_flow_table = uat_new("Key flows", sizeof(RuleRow), "rdmatel_key_flows", TRUE, &key_flow_rows_,
                                         &key_flow_row_count_, UAT_AFFECTS_DISSECTION, nullptr, rule_row_copy,
                                         key_flow_row_update, rule_row_free, nullptr, nullptr, key_flow_fields);
  prefs_register_uat_preference(m, "key_flows", "Key flows",
                                "Key flows (the CLI's --key-flow): always measured for I/O quality; with key flows "
                                "and no port polling (poll ports 0) other I/Os are not measured",
                                key_flow_table);
  static uat_t* gpus = uat_new("GPU map", sizeof(GpuRow), "rdmatel_gpu_map", TRUE, &gpu_rows_, &gpu_row_count_,
                               UAT_AFFECTS_DISSECTION, nullptr, gpu_row_copy, gpu_row_update, gpu_row_free, nullptr,
                               nullptr, gpu_fields);
  prefs_register_uat_preference(m, "gpu_map", "GPU map",
                                "Which GPU, node and AI job each IP address belongs to (the CLI's --gpu-map): frames "
                                "get rdmatel.gpu.src, rdmatel.gpu.dst and rdmatel.job",
                                gpus);

  // The CLI's repeatable --clock-offset NAME=NS as one text preference (a list is simpler to
  // type in tshark -o than a table): "spine1=3000000, leafB-stor=-1500000".
  prefs_register_string_preference(
      m, "clock_offsets", "Clock offsets (ns)",
      "Clock offset of observation points, NAME=NS separated by commas (the CLI's --clock-offset): ns to add "
      "to the point's stamps to get the reference clock, e.g. the offset_ns rdmatel export offsets estimated. Hop delays "
      "(rdmatel.hop.delay) between points with an offset are corrected; otherwise they are raw stamp differences",
      &clock_offsets_text_);
  prefs_register_string_preference(
      m, "point_speeds", "Link speed per point (Gb/s)",
      "Link speed of observation points for PFC pause times, NAME=GBPS separated by commas (the CLI's "
      "--point-speed), e.g. \"leaf1=400, spine1=100\"; other points use the link speed preference (Wireshark 4.0 "
      "gives a dissector no interface speed)",
      &point_speeds_text_);

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
  prefs_register_bool_preference(
      m, "engine_thread", "Measure on a second thread",
      "While nothing shows the rdmatel results of the frames being read (tshark -z io,stat, the first pass of "
      "tshark -2, Wireshark reading a file without an rdmatel display filter), measure them on a thread of its "
      "own, beside the dissection. The results are the same either way. Only on machines with more than one core",
      &prefs.engine_thread);
}

Settings engine_settings_from_prefs(std::vector<std::string>& problems) {
  Settings s;
  for (const PrefSlot& slot : pref_slots()) {
    std::string error;
    std::string value = slot.spec->type == SettingType::kDuration ? (slot.text ? slot.text : slot.spec->fallback)
                        : slot.spec->type == SettingType::kFlag   ? (slot.flag ? "on" : "off")
                                                                  : std::to_string(slot.number);
    if (!s.set(slot.spec->name, value, error)) {
      // The CLI's sentence names the option; here it is the preference.
      problems.push_back("preference rdmatel." + std::string(slot.spec->name) + ": " + error + "; the default " +
                         slot.spec->fallback + " is used");
      s.reset(slot.spec->name);
    }
  }
  for (guint i = 0; i < role_row_count_; ++i) {
    const RoleRow& r = role_rows_[i];
    std::string ignored;
    if (r.name && *r.name) s.set("point", std::string(r.name) + "=" + point_role_name(PointRole(r.role)), ignored);
  }
  // The "slow" thresholds are alert rules (one mechanism with --alert): IOL1's threshold also
  // covers IOL, the only latency of a single-point capture.
  const std::pair<unsigned, const char*> slow[] = {
      {prefs.slow.rtt_us, "rtt"},   {prefs.slow.dal_us, "dal"},   {prefs.slow.dpl_us, "dpl"}, {prefs.slow.iol1_us, "iol1"},
      {prefs.slow.iol1_us, "iol"},  {prefs.slow.iol2_us, "iol2"}, {prefs.slow.fct_us, "fct"},
  };
  for (const auto& [us, metric] : slow) {
    std::string ignored;
    if (us) s.set("alert", std::string(metric) + ">" + std::to_string(us), ignored);
  }
  for (guint i = 0; i < alert_row_count_; ++i) {
    std::string ignored;
    if (alert_rows_[i].rule && *alert_rows_[i].rule) s.set("alert", alert_rows_[i].rule, ignored);
  }
  for (guint i = 0; i < key_flow_row_count_; ++i) {
    std::string ignored;
    if (key_flow_rows_[i].rule && *key_flow_rows_[i].rule) s.set("key_flow", key_flow_rows_[i].rule, ignored);
  }
  for (guint i = 0; i < gpu_row_count_; ++i) {
    std::string ignored;
    s.set("gpu", gpu_line(gpu_rows_[i]), ignored);
  }
  // Lists typed as one text: "NAME=VALUE, NAME=VALUE" (the engine warns about a malformed item).
  auto set_items = [&s](const char* text, const char* setting) {
    const std::string all = text ? text : "";
    size_t pos = 0;
    while (pos < all.size()) {
      size_t end = all.find_first_of(", ", pos);
      if (end == std::string::npos) end = all.size();
      std::string item = all.substr(pos, end - pos), ignored;
      if (!item.empty()) s.set(setting, item, ignored);
      pos = end + 1;
    }
  };
  set_items(clock_offsets_text_, "clock_offset");
  set_items(point_speeds_text_, "point_speed");
  return s;
}

}  // namespace rdmatel::plugin
