// SPDX-License-Identifier: GPL-2.0-or-later
// rdmatel-synth: synthetic, protocol-faithful RoCEv2 captures (NVMe-oF and RDMA WRITE
// flows at 1-5 observation points) with an exact ground-truth file.
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "scenarios.h"

namespace {

constexpr int kUsage = 2;

void help() {
  std::printf(
      "usage: rdmatel-synth --scenario NAME --out FILE.pcapng [--seed N] [knobs...]\n"
      "\n"
      "Writes FILE.pcapng and FILE.truth.json (the exact timestamps and metrics the capture\n"
      "contains, computed from the generator's own event log).\n"
      "\n"
      "scenarios:\n");
  for (const auto& n : synth::preset_names()) std::printf("  %-15s %s\n", n.c_str(), synth::preset_summary(n).c_str());
  std::printf(
      "\n"
      "knobs (override the preset):\n"
      "  --seed N            random seed (default 1); same seed + options = same bytes\n"
      "  --ios N             NVMe I/O-queue commands (read/write/flush); admin extra\n"
      "  --hosts N           NVMe hosts (GPU servers)\n"
      "  --storages N        NVMe storage servers (targets)\n"
      "  --queues N          I/O queues per host-storage pair (plus the admin queue)\n"
      "  --points 1..5       observation points: 1 leafA-gpu; 2 + leafB-stor; 3 + spine1;\n"
      "                      4 + leafA-up (leaf A uplink port); 5 + leafB-up\n"
      "  --clock-offset NAME=NS  add NS (signed, |NS| <= 3600e9) to every stamp of point\n"
      "                      NAME (unsynchronised capture clock); repeatable\n"
      "  --routed            routed fabric: TTL / hop limit 64 at the sender, -1 per switch\n"
      "  --cross             NVMe hosts and storage servers behind both leaves (I/Os\n"
      "                      always cross between them)\n"
      "  --loss RATE         loss probability per packet per link segment (0 = no loss,\n"
      "                      also disables the preset's designed losses)\n"
      "  --incomplete RATE   fraction of I/Os whose completion never comes\n"
      "  --vlan 0|1|2        802.1Q tags\n"
      "  --pcp 0..7          802.1p priority in the tags (default 3)\n"
      "  --ipv6              IPv6 instead of IPv4\n"
      "  --order time|blocks file order: merged by stamp, or dumpcap-like blocks of\n"
      "                      20-600 packets per point\n"
      "  --jitter-ns N       timestamp noise, uniform in [-N, N] ns (N <= 400)\n"
      "  --snaplen N         snap length (96..262144; transport headers always kept)\n"
      "  --flows N           RDMA WRITE flows (GPU<->GPU)\n"
      "  --messages N        messages per flow\n"
      "  --psn-wrap          every QP starts a few PSNs before 0xFFFFFF\n"
      "  --no-connect        start mid-stream: no RDMA CM, no Connect commands\n"
      "  --duration-s X      span of the I/O arrivals / message posts, seconds\n"
      "  --pmtu N            path MTU: 512, 1024, 2048 or 4096 (default 4096)\n"
      "  --max-size GB       refuse to write a capture larger than this (default 16): losses\n"
      "                      resend whole go-back-N windows, so lossy flows with many messages\n"
      "                      grow fast\n"
      "faults (ground truth for the diagnosis; host N is 10.1.0.N, storage N 10.2.0.N):\n"
      "  --slow-storage N=US storage N takes US more to access data (DAL) of every I/O;\n"
      "                      N=US@FROM-TO only FROM to TO seconds into the workload\n"
      "  --slow-host N=US    host N takes US more to prepare the data of every write (DPL)\n"
      "  --slow-path H:S=US  the path between host H and storage S is US slower each way\n"
      "  --lossy-path H:S=RATE  the path between host H and storage S loses RATE of packets\n"
      "                      per segment, both ways\n"
      "  --ecn-mark A:B=RATE  packets that passed point A are marked CE with probability RATE before\n"
      "                      point B (direction A -> B; CE from B on); receivers answer marked data\n"
      "                      with CNPs to the sender's QP, at most one per QP per 50 us (repeatable)\n"
      "  --pfc-pause POINT:PRIO=N@T  at POINT, N PFC pause frames for priority PRIO (quanta 0xFFFF)\n"
      "                      100 us apart from T seconds into the workload, then a resume\n"
      "                      (repeatable; the frames pause nothing in the simulation)\n"
      "  --pfc-storm POINT:PRIO=N@T  the same without the resume: paused without a break for\n"
      "                      (N-1) x 100 us + one pause (a storm from 10 ms)\n"
      "  --drop-between A:B=RATE  packets that passed point A are lost with probability RATE before\n"
      "                      point B (direction A -> B only; repeatable)\n"
      "  --capture-drops POINT=RATE  the capture at POINT misses RATE of the packets that passed it\n"
      "                      (the network delivered them: the truth is the network's); every interface\n"
      "                      gets an interface statistics block with the count (isb_ifdrop), as dumpcap\n"
      "                      writes them (repeatable)\n"
      "  --help              this text\n");
}

[[noreturn]] void die(const std::string& msg) {
  std::fprintf(stderr, "rdmatel-synth: %s (see --help)\n", msg.c_str());
  std::exit(kUsage);
}

long long to_int(const std::string& opt, const std::string& v, long long lo, long long hi) {
  char* end = nullptr;
  errno = 0;
  const long long x = std::strtoll(v.c_str(), &end, 10);
  if (v.empty() || *end || errno) die(opt + ": not an integer: '" + v + "'");
  if (x < lo || x > hi) die(opt + " must be in " + std::to_string(lo) + ".." + std::to_string(hi));
  return x;
}

double to_double(const std::string& opt, const std::string& v, double lo, double hi) {
  char* end = nullptr;
  errno = 0;
  const double x = std::strtod(v.c_str(), &end);
  if (v.empty() || *end || errno || !(x >= lo && x <= hi)) {
    char range[64];
    std::snprintf(range, sizeof range, "[%g, %g]", lo, hi);
    die(opt + " must be a number in " + range + ": '" + v + "'");
  }
  return x;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::pair<std::string, std::string>> opts;
  static const std::vector<std::string> flags = {"--ipv6", "--psn-wrap", "--no-connect", "--routed", "--cross",
                                                 "--help", "-h"};
  std::string command = "rdmatel-synth";
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    command += " ";
    command += a;
    std::string v;
    const auto eq = a.find('=');
    if (a.rfind("--", 0) == 0 && eq != std::string::npos) {
      v = a.substr(eq + 1);
      a = a.substr(0, eq);
    } else if (std::find(flags.begin(), flags.end(), a) == flags.end()) {
      if (a.rfind("-", 0) != 0) die("unexpected argument '" + a + "'");
      if (i + 1 >= argc) die(a + " needs a value");
      v = argv[++i];
      command += " ";
      command += v;
    }
    opts.emplace_back(a, v);
  }
  std::string scenario, out;
  for (const auto& [k, v] : opts) {
    if (k == "--help" || k == "-h") {
      help();
      return 0;
    }
    if (k == "--scenario") scenario = v;
    if (k == "--out") out = v;
  }
  if (scenario.empty()) die("--scenario is required");
  if (out.empty()) die("--out is required");
  if (out.size() <= 7 || out.compare(out.size() - 7, 7, ".pcapng") != 0) die("--out must end in .pcapng");
  synth::Config c;
  if (!synth::apply_preset(scenario, c)) die("unknown scenario '" + scenario + "'");
  c.out = out;
  c.command = command;
  bool queues_set = false;
  for (const auto& [k, v] : opts) {
    if (k == "--scenario" || k == "--out") continue;
    if (k == "--seed") c.seed = static_cast<uint64_t>(to_int(k, v, 0, 0x7FFFFFFFFFFFFFFFLL));
    else if (k == "--ios") c.ios = static_cast<int>(to_int(k, v, 0, 20000000));
    else if (k == "--hosts") c.hosts = static_cast<int>(to_int(k, v, 1, 200));
    else if (k == "--storages") c.storages = static_cast<int>(to_int(k, v, 1, 200));
    else if (k == "--queues") {
      c.queues_min = c.queues_max = static_cast<int>(to_int(k, v, 1, 64));
      queues_set = true;
    } else if (k == "--points") c.points = static_cast<int>(to_int(k, v, 1, 5));
    else if (k == "--clock-offset") {
      const auto eq = v.find('=');
      if (eq == std::string::npos || eq == 0) die("--clock-offset needs NAME=NS, got '" + v + "'");
      const std::string name = v.substr(0, eq);
      const long long ns = to_int(k, v.substr(eq + 1), -3600000000000LL, 3600000000000LL);
      for (const auto& o : c.clock_offsets)
        if (o.first == name) die("--clock-offset given twice for " + name);
      c.clock_offsets.emplace_back(name, ns);
    } else if (k == "--routed") c.routed = true;
    else if (k == "--cross") c.cross = true;
    else if (k == "--loss") c.loss = to_double(k, v, 0.0, 0.5);
    else if (k == "--incomplete") c.incomplete = to_double(k, v, 0.0, 1.0);
    else if (k == "--vlan") c.vlan = static_cast<int>(to_int(k, v, 0, 2));
    else if (k == "--pcp") c.pcp = static_cast<int>(to_int(k, v, 0, 7));
    else if (k == "--ipv6") c.ipv6 = true;
    else if (k == "--order") {
      if (v == "time") c.order_blocks = false;
      else if (v == "blocks") c.order_blocks = true;
      else die("--order must be 'time' or 'blocks'");
    } else if (k == "--jitter-ns") c.jitter_ns = to_int(k, v, 0, 400);
    else if (k == "--snaplen") c.snaplen = static_cast<uint32_t>(to_int(k, v, 96, 262144));
    else if (k == "--flows") c.flows = static_cast<int>(to_int(k, v, 0, 1000));
    else if (k == "--messages") c.messages = static_cast<int>(to_int(k, v, 0, 1000000));
    else if (k == "--psn-wrap") c.psn_wrap = true;
    else if (k == "--no-connect") c.connect = false;
    else if (k == "--duration-s") c.duration_s = to_double(k, v, 1e-6, 3600.0);
    else if (k == "--max-size") c.max_size_gb = to_double(k, v, 1e-6, 1e6);
    else if (k == "--pmtu") {
      const auto m = to_int(k, v, 512, 4096);
      if (m != 512 && m != 1024 && m != 2048 && m != 4096) die("--pmtu must be 512, 1024, 2048 or 4096");
      c.pmtu = static_cast<uint32_t>(m);
    } else if (k == "--slow-storage" || k == "--slow-host") {
      const auto eq = v.find('=');
      if (eq == std::string::npos) die(k + " needs N=US, got '" + v + "'");
      const int n = static_cast<int>(to_int(k, v.substr(0, eq), 1, 200));
      std::string amount = v.substr(eq + 1);
      std::pair<double, double> window{0, 0};
      const auto at = amount.find('@');
      if (at != std::string::npos) {
        const std::string span = amount.substr(at + 1);
        const auto dash = span.find('-');
        if (k != "--slow-storage" || dash == std::string::npos) die(k + ": a time window is N=US@FROM-TO (seconds)");
        window = {to_double(k, span.substr(0, dash), 0, 3600), to_double(k, span.substr(dash + 1), 0, 3600)};
        if (window.second <= window.first) die(k + ": the window must end after it starts");
        amount = amount.substr(0, at);
      }
      const int64_t ns = to_int(k, amount, 0, 10000000) * 1000;
      (k == "--slow-storage" ? c.slow_storages : c.slow_hosts).emplace_back(n, ns);
      if (k == "--slow-storage") c.slow_storage_windows.push_back(window);
    } else if (k == "--slow-path" || k == "--lossy-path") {
      const auto colon = v.find(':'), eq = v.find('=');
      if (colon == std::string::npos || eq == std::string::npos || eq < colon)
        die(k + " needs HOST:STORAGE=VALUE, got '" + v + "'");
      synth::Config::PathFault f;
      f.host = static_cast<int>(to_int(k, v.substr(0, colon), 1, 200));
      f.storage = static_cast<int>(to_int(k, v.substr(colon + 1, eq - colon - 1), 1, 200));
      if (k == "--slow-path") f.extra_ns = to_int(k, v.substr(eq + 1), 0, 10000000) * 1000;
      else f.loss = to_double(k, v.substr(eq + 1), 0.0, 0.5);
      c.path_faults.push_back(f);
    } else if (k == "--ecn-mark" || k == "--drop-between") {
      const auto colon = v.find(':'), eq = v.rfind('=');
      if (colon == std::string::npos || eq == std::string::npos || eq < colon)
        die(k + " needs A:B=RATE (point names), got '" + v + "'");
      synth::Config::Drop d;
      d.from = v.substr(0, colon);
      d.to = v.substr(colon + 1, eq - colon - 1);
      d.rate = to_double(k, v.substr(eq + 1), 0.0, 1.0);
      (k == "--ecn-mark" ? c.marks : c.drops).push_back(d);
    } else if (k == "--capture-drops") {
      const auto eq = v.rfind('=');
      if (eq == std::string::npos || eq == 0) die(k + " needs POINT=RATE, got '" + v + "'");
      c.capture_drops.emplace_back(v.substr(0, eq), to_double(k, v.substr(eq + 1), 0.0, 1.0));
    } else if (k == "--pfc-pause" || k == "--pfc-storm") {
      const auto colon = v.rfind(':'), eq = v.rfind('='), at = v.rfind('@');
      if (colon == std::string::npos || eq == std::string::npos || at == std::string::npos || !(colon < eq && eq < at))
        die(k + " needs POINT:PRIORITY=FRAMES@SECONDS, got '" + v + "'");
      synth::Config::PfcBurst b;
      b.point = v.substr(0, colon);
      b.priority = static_cast<int>(to_int(k, v.substr(colon + 1, eq - colon - 1), 0, 7));
      b.frames = static_cast<int>(to_int(k, v.substr(eq + 1, at - eq - 1), 1, 1000000));
      b.at_s = to_double(k, v.substr(at + 1), 0.0, 3600.0);
      b.resume = k == "--pfc-pause";
      c.pfc.push_back(b);
    } else die("unknown option '" + k + "'");
  }
  for (const auto& [n, ns] : c.slow_storages)
    if (n > c.storages) die("--slow-storage: there are only " + std::to_string(c.storages) + " storage servers");
  for (const auto& [n, ns] : c.slow_hosts)
    if (n > c.hosts) die("--slow-host: there are only " + std::to_string(c.hosts) + " hosts");
  for (const auto& f : c.path_faults)
    if (f.host > c.hosts || f.storage > c.storages) die("--slow-path / --lossy-path: no such host or storage server");
  (void)queues_set;
  if (c.flows > 0 && c.messages == 0) c.messages = 20;
  if (c.messages > 0 && c.flows == 0) die("--messages needs --flows");
  if (!c.nvme && c.ios > 0) c.nvme = true;
  if (c.ios == 0 && c.flows == 0) die("nothing to generate: --ios 0 and no --flows");
  // Faults between NVMe hosts and storage servers need them (write-flows has GPUs only).
  if (!c.nvme && (!c.path_faults.empty() || !c.slow_storages.empty() || !c.slow_hosts.empty()))
    die("--slow-path, --lossy-path, --slow-storage and --slow-host need NVMe hosts and storage servers "
        "(an nvme-* or mixed scenario, or --ios N)");
  // Point names depend on the final configuration (points, NVMe or GPU-only far leaf).
  const auto points = synth::point_list(c);
  for (const auto& o : c.clock_offsets) {
    bool known = false;
    std::string names;
    for (const auto& p : points) {
      known = known || p.name == o.first;
      names += (names.empty() ? "" : ", ") + p.name;
    }
    if (!known) die("--clock-offset: no point named '" + o.first + "' (points: " + names + ")");
  }
  for (const auto& [name, rate] : c.capture_drops) {
    bool known = false;
    for (const auto& p : points) known = known || p.name == name;
    if (!known) die("--capture-drops: no point named '" + name + "'");
  }
  // Both leaves need a host and a storage server, or some endpoint would have no peer.
  if (c.cross && c.nvme && c.ios > 0 && (c.hosts < 2 || c.storages < 2))
    die("--cross needs at least 2 hosts and 2 storage servers");
  c.notes = "synthetic capture; field semantics and interpretations: samples/synth/README.md";

  synth::RunStats st;
  const int rc = synth::generate(c, &st);
  if (rc) return rc;
  std::printf("rdmatel-synth: %s: %llu packets (%llu copies sent), %llu NVMe commands, %llu messages, %.2f s\n",
              out.c_str(), static_cast<unsigned long long>(st.packets), static_cast<unsigned long long>(st.emissions),
              static_cast<unsigned long long>(st.ios), static_cast<unsigned long long>(st.messages), st.seconds);
  return 0;
}
