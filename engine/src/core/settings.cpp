// SPDX-License-Identifier: GPL-2.0-or-later
// The settings table (the core's own settings, then each component's) and the value store.
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <string>
#include <unordered_map>

#include "engine/src/core/component.h"
#include "rdmatel/settings.h"

namespace rdmatel {
namespace {

// The core's settings: how packets are ordered and how long results wait for other points.
const SettingSpec kCoreSettings[] = {
    {"reorder_window", SettingType::kDuration, "ms", "250", 0, 600000, "MS",
     "How far stamps may go backwards within one observation point: packets are handled in stamp order "
     "within this window, and results wait this long for late copies of their packets"},
    {"max_reorder_packets", SettingType::kCount, "", "262144", 1, 1e9, "N",
     "Most packets one observation point holds for reordering; beyond it the oldest is handled at once, "
     "in the order it arrived"},
    {"mirror_copy_window", SettingType::kDuration, "us", "5", 0, 1000, "US",
     "Mirror copies: where an observation point records a flow's packets twice (a SPAN session of several "
     "ports into one interface, a capture on 'any' with stacked interfaces), a packet seen again within this "
     "time, the same in flow, PSN, opcode, IP ID, payload length and first payload bytes (its frame may differ: a "
     "VLAN tag, a snap length), is counted once, not as a retransmission "
     "(a flow is taken as recorded twice when 40 % of its packets at the point have such a twin). A point where "
     "80 % of the packets have a twin further apart (up to 1 ms: ports further apart, two interfaces written to one "
     "pcap file) widens its own window to hold them, and says so. 0: off"},
    {"idle_point", SettingType::kDuration, "s", "10", 0.001, 86400, "SECONDS",
     "An observation point that carried no packet while the capture advanced this long no longer holds "
     "back results"},
    {"max_flows", SettingType::kCount, "", "1048576", 1, 1e9, "N",
     "Most RDMA flows (source IP, destination IP, destination QPN) tracked, a flow counted once per observation "
     "point that sees it (state is kept per flow and point); packets of further flows, and of flows at points new "
     "to them, are not measured"},
    {"gpu", SettingType::kList, "", "", 0, 0, "IP,GPU,NODE[,JOB]",
     "Binds an IP address to its GPU, node and AI job (repeatable; --gpu-map FILE reads a CSV of them): records "
     "gain the GPUs, nodes and job of their ends",
     true, false},
    {"period", SettingType::kDuration, "s", "1", 0.000001, 86400, "SECONDS",
     "Length of the periods: per-flow periods (export flows), spike alerts and port polling"},
    {"key_flow", SettingType::kList, "", "", 0, 0, "SRC[>DST]",
     "A key flow (IP prefixes, e.g. 10.1.0.0/16>10.2.0.1; both directions): always measured for I/O quality. "
     "With key flows and no polling, other I/Os are not measured",
     true, false},
    {"poll_ports", SettingType::kCount, "", "0", 0, 1e6, "N",
     "Port polling: each period (--period) measure only the next N observation points in order, round-robin, "
     "besides the key flows; 0: every point all the time"},
    {"threads", SettingType::kCount, "", "1", 1, 64, "N",
     "Threads for the measurement: 1 measures on the thread that reads; 2 also runs the components whose "
     "state is per flow and IP pair (messages, congestion) and the output (records, report, alerts, diagnosis) "
     "on a second thread (more run as 2 for now, with a warning; an export that needs none of them runs on one). Results are "
     "byte for byte those of one thread",
     true, false},
    {"points_by_file", SettingType::kFlag, "", "off", 0, 1, "",
     "Several files: each file's interfaces are observation points of their own (FILE:NAME), even where "
     "interfaces of several files share a name (two hosts' sniffers on eth0). Without it, a name's "
     "interfaces are one point (ring files), and an unnamed interface continues a file that has ended",
     true, false},
    {"point", SettingType::kList, "", "", 0, 0, "NAME=ROLE",
     "Role of an observation point: compute, storage or fabric; NAME is the interface name or its numeric "
     "id. Default: learned from the traffic (the point with the longest command-to-completion "
     "span of an I/O is nearest the host), per point and per endpoint",
     true, false},
};

struct Table {
  std::vector<const SettingSpec*> specs;
  std::unordered_map<std::string_view, size_t> index;
};

const Table& table() {
  static const Table t = [] {
    Table t;
    for (const SettingSpec& s : kCoreSettings) t.specs.push_back(&s);
    for (const ComponentFactory& c : component_registry())
      for (const SettingSpec& s : c.spec->settings) t.specs.push_back(&s);
    for (size_t i = 0; i < t.specs.size(); ++i) t.index.emplace(t.specs[i]->name, i);
    return t;
  }();
  return t;
}

size_t index_of(std::string_view name) {
  const Table& t = table();
  auto it = t.index.find(name);
  return it == t.index.end() ? t.specs.size() : it->second;
}

std::string option_name(const SettingSpec& s) {
  std::string o = "--";
  for (const char* c = s.name; *c; ++c) o += *c == '_' ? '-' : *c;
  return o;
}

bool parse_number(std::string_view text, double& out) {
  std::string t(text);
  errno = 0;
  char* end = nullptr;
  out = std::strtod(t.c_str(), &end);
  return errno == 0 && end && *end == 0 && !t.empty() && std::isfinite(out);
}

DurationNs unit_ns(const SettingSpec& s) {
  const std::string_view u(s.unit);
  return u == "us" ? 1000 : u == "ms" ? kNsPerMs : kNsPerSec;
}

const char* unit_word(const SettingSpec& s) {
  const std::string_view u(s.unit);
  return u == "us" ? "microseconds" : u == "ms" ? "milliseconds" : "seconds";
}

std::string format_bound(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%g", v);
  return b;
}

bool parse_value(const SettingSpec& s, std::string_view text, int64_t& out, std::string& error) {
  double d = 0;
  switch (s.type) {
    case SettingType::kDuration:
      if (!parse_number(text, d) || d < s.min || d > s.max) {
        error = option_name(s) + " takes a number of " + unit_word(s) + " from " + format_bound(s.min) + " to " +
                format_bound(s.max) + " (got '" + std::string(text) + "')";
        return false;
      }
      out = int64_t(std::llround(d * double(unit_ns(s))));
      return true;
    case SettingType::kCount:
      if (!parse_number(text, d) || d < s.min || d > s.max || d != std::floor(d)) {
        error = option_name(s) + " takes a whole number from " + format_bound(s.min) + " to " + format_bound(s.max) +
                " (got '" + std::string(text) + "')";
        return false;
      }
      out = int64_t(d);
      return true;
    case SettingType::kFlag:
      if (text == "1" || text == "true" || text == "on" || text == "yes") out = 1;
      else if (text == "0" || text == "false" || text == "off" || text == "no") out = 0;
      else {
        error = option_name(s) + " takes on or off (got '" + std::string(text) + "')";
        return false;
      }
      return true;
    case SettingType::kList: break;
  }
  return false;
}

}  // namespace

std::span<const SettingSpec* const> setting_specs() { return table().specs; }

const SettingSpec* find_setting(std::string_view name) {
  size_t i = index_of(name);
  return i < table().specs.size() ? table().specs[i] : nullptr;
}

Settings::Settings() {
  const auto specs = setting_specs();
  values_.resize(specs.size());
  for (size_t i = 0; i < specs.size(); ++i) reset(specs[i]->name);
}

void Settings::reset(std::string_view name) {
  size_t i = index_of(name);
  if (i >= values_.size()) return;
  const SettingSpec& s = *setting_specs()[i];
  values_[i] = Slot{};
  if (s.type != SettingType::kList) {
    std::string ignored;
    parse_value(s, s.fallback, values_[i].number, ignored);
  }
}

bool Settings::set(std::string_view name, std::string_view text, std::string& error) {
  size_t i = index_of(name);
  if (i >= values_.size()) {
    error = "unknown setting '" + std::string(name) + "'";
    return false;
  }
  const SettingSpec& s = *setting_specs()[i];
  if (s.type == SettingType::kList) {
    values_[i].items.emplace_back(text);
    return true;
  }
  int64_t v = 0;
  if (!parse_value(s, text, v, error)) return false;
  values_[i].number = v;
  return true;
}

const Settings::Slot& Settings::slot(std::string_view name, SettingType type) const {
  size_t i = index_of(name);
  // A name no component declares is a programming error: fail loudly in debug builds, and
  // give a zero value otherwise (never undefined behaviour).
  static const Slot kEmpty;
  if (i >= values_.size() || setting_specs()[i]->type != type) return kEmpty;
  return values_[i];
}

DurationNs Settings::duration(std::string_view name) const { return slot(name, SettingType::kDuration).number; }
uint64_t Settings::count(std::string_view name) const { return uint64_t(slot(name, SettingType::kCount).number); }
bool Settings::flag(std::string_view name) const { return slot(name, SettingType::kFlag).number != 0; }
const std::vector<std::string>& Settings::list(std::string_view name) const {
  return slot(name, SettingType::kList).items;
}

}  // namespace rdmatel
