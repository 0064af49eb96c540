// SPDX-License-Identifier: GPL-2.0-or-later
// The session: inputs merged by timestamp as mergecap does, their interfaces named as
// observation points, fed to one engine with progress and cancel.
#include "rdmatel/session.h"

#include "engine/src/capture/read_ahead_source.h"
#include "engine/src/decode/roce_frame.h"
#include "engine/src/util/hash.h"
#include "engine/src/util/word_hash.h"

#include <algorithm>
#include <limits>
#include <chrono>
#include <cstdio>
#include <map>
#include <optional>
#include <queue>
#include <tuple>

namespace rdmatel {
namespace {

// How often the run looks at the clock for progress, and at the cancel token.
constexpr uint64_t kCheckEvery = 4096;
constexpr std::chrono::milliseconds kProgressEvery{100};

constexpr uint32_t kUnnumbered = ~0u;  ///< an interface's FrameIn::source not numbered yet

struct Input {
  std::string label;
  std::unique_ptr<CaptureSource> source;
  CapturedPacket next;
  bool has_next = false;
  bool started = false;   ///< delivered a packet
  bool finished = false;  ///< read to its end
  TimeNs last_ts = 0;     ///< of the last packet delivered (stamp-less packets merge there)
  /// By interface index, one entry per interface the source has declared (read per packet: one
  /// place for what point_of() and source_of() look up).
  struct Interface {
    PointId point = kNoPoint;  ///< kNoPoint until decided
    bool decided = false;
    uint32_t source = kUnnumbered;  ///< FrameIn::source, numbered in first use
    uint64_t packets = 0;           ///< with a stamp: when they began and ended (named_overlaps())
    TimeNs first_ts = 0, last_ts = 0;
    uint64_t first_frame_key = 0;   ///< frame_key of its first packet
    int32_t keys_of_chain = -1;     ///< the chain (index) whose first packets it gives, while it does
  };
  std::vector<Interface> interfaces;
  /// A ring file's name (PREFIX_NNNNN_DATE): its ring and number (Session::Impl::ring_name).
  bool ring = false;
  std::string ring_prefix;
  uint64_t ring_number = 0;
};

}  // namespace

class Session::Impl {
 public:
  Impl(std::vector<SessionInput> inputs, const Settings& settings)
      : engine_(settings),
        by_file_(settings.flag("points_by_file") && inputs.size() > 1),
        ring_overlap_(std::min<DurationNs>(kRingFileOverlap, settings.duration("reorder_window"))) {
    for (SessionInput& in : inputs) {
      Input x;
      x.label = in.label;
      x.source = std::move(in.source);
      x.ring = ring_name(x.label, x.ring_prefix, x.ring_number);
      inputs_.push_back(std::move(x));
    }
    for (Input& in : inputs_) {
      summary_.formats.push_back(in.source->format());
      in.has_next = in.source->next(in.next);
      in.finished = !in.has_next;
      declare_known(in);
    }
  }

  Engine engine_;
  const bool by_file_;  ///< --points-by-file: every file's interfaces are points of their own
  const DurationNs ring_overlap_;
  std::vector<Input> inputs_;
  SessionSummary summary_;
  uint32_t next_source_ = 0;

  // Named interfaces are points at once (same name and link type = same point, across files);
  // an unnamed one is decided at its first packet (see point_of()). With one input there is
  // nothing to decide but a later pcapng section's unnamed interfaces.
  void declare_known(Input& in) {
    const auto& ifaces = in.source->interfaces();
    while (in.interfaces.size() < ifaces.size()) {
      const uint32_t id = uint32_t(in.interfaces.size());
      const CaptureInterface& iface = ifaces[id];
      in.interfaces.emplace_back();
      if (iface.link == LinkType::kUnsupported)
        summary_.warnings.push_back(in.label + ": interface " + display_name(iface, id) + " has " +
                                    link_description(iface) + ", which rdmatel does not decode; its packets are skipped");
      if (iface.section > 0 && iface.section_index == 0) warn_section_back_in_time(in, id);
      if (by_file_) decide(in, id, in.label + ":" + point_name(iface, id));
      else if (!iface.name.empty() || (inputs_.size() == 1 && iface.section == 0))
        decide(in, id, point_name(iface, earlier_section_id(in, id)));
    }
  }

  // Per-point files joined with cat: each pcapng section is one sniffer's whole capture, read
  // after the sections before it, so its points' packets come after every packet of theirs, and
  // I/Os and hops they share were final without them (files given separately, or joined with
  // mergecap, are merged by stamp). An unnamed interface of such a section is a point of its own
  // with a warning (decide_point), one named as an earlier section's one has the two-sniffers
  // warning; one of a new name is said here, at the section's first interface.
  void warn_section_back_in_time(const Input& in, uint32_t id) {
    const auto& ifaces = in.source->interfaces();
    const uint32_t section = ifaces[id].section;
    if (!in.started || !in.has_next || !in.next.has_ts || ifaces[id].name.empty()) return;
    for (uint32_t k = 0; k < id; ++k)
      if (ifaces[k].name == ifaces[id].name) return;
    const TimeNs first = in.next.ts;
    if (span_ns(first, in.last_ts) <= double(ring_overlap_)) return;  // (0 when it begins after them)
    summary_.warnings.push_back(in.label + ": pcapng section " + std::to_string(section + 1) + " begins " +
                                seconds(span_ns(first, in.last_ts)) +
                                " before the packets read before it end: per-point files joined with cat? Sections are "
                                "read one after the other, so what its points share with the earlier sections' (I/Os "
                                "seen at both, hops) is measured without them; give such files separately, or join them "
                                "with mergecap, to have their packets merged by time");
  }

  // libwiretap opens many files that are not network captures (a few bytes of text read as "MP4
  // media, 1 frames"): a file none of whose interfaces carries a link type rdmatel decodes is an
  // error, not an empty result.
  static bool decodable(const Input& in) {
    const auto& ifaces = in.source->interfaces();
    if (ifaces.empty()) return true;  // an empty capture: nothing to decode, nothing wrong
    for (const CaptureInterface& iface : ifaces)
      if (iface.link != LinkType::kUnsupported) return true;
    return false;
  }
  static std::string not_a_network_capture(const Input& in, const std::string& format) {
    return "not a capture rdmatel can measure: it reads as " + format + " with " +
           link_description(in.source->interfaces().front()) +
           ", and rdmatel decodes Ethernet, Linux cooked (SLL, SLL2), raw IP and BSD or OpenBSD loopback captures";
  }
  // Link type 0 is BSD loopback (decoded): on an undecodable interface it means the reader
  // (libwiretap) had no pcap link type for the file's encapsulation.
  static std::string link_description(const CaptureInterface& iface) {
    if (iface.pcap_linktype == 0) return "frames that are not network packets";
    return "link type " + std::to_string(iface.pcap_linktype);
  }

  static std::string display_name(const CaptureInterface& iface, uint32_t id) {
    return iface.name.empty() ? "if" + std::to_string(id) : iface.name;
  }

  // The point name of an interface: its name, told apart by link type when two interfaces share
  // a name but not a link type.
  std::string point_name(const CaptureInterface& iface, uint32_t id) {
    std::string name = display_name(iface, id);
    auto [it, inserted] = link_of_name_.emplace(name, iface.link);
    if (!inserted && it->second != iface.link) name += " (" + std::string(link_type_name(iface.link)) + ")";
    return name;
  }

  void decide(Input& in, uint32_t id, const std::string& name) {
    const CaptureInterface& iface = in.source->interfaces()[id];
    in.interfaces[id].point = engine_.declare_point(name, id, iface.speed_bps);
    in.interfaces[id].decided = true;
  }

  // Which capture (input and interface) the frame comes from (after point_of(), which declared
  // every interface the source knows of).
  void source_of(Input& in, uint32_t id, FrameIn& f) {
    if (id >= in.interfaces.size()) return;
    uint32_t& source = in.interfaces[id].source;
    if (source == kUnnumbered) source = next_source_++;
    f.source = source;
  }

  // The point of a packet's interface: decided at the interface's first packet (per packet:
  // the rest out of line).
  PointId point_of(Input& in, uint32_t id) {
    if (id < in.interfaces.size() && in.interfaces[id].decided) [[likely]]
      return in.interfaces[id].point;
    return decide_point(in, id);
  }
  // An unnamed interface of one of several files (pcap files have no interface names) joins the
  // chain of points of its number whose file has ended (ring buffers, split files follow each
  // other), or is a point of its own when every such chain is still being read (two sniffers at
  // once) or when it starts more than kChainGap after the chain's last packet: ring files follow
  // each other within a moment of traffic, while two sniffers' files whose clocks are further apart
  // than their length follow each other in stamps (joined, every packet would be seen twice at
  // one point). Of several free chains (ring files of two sniffers), the one whose last file's
  // name shares the longest beginning with this one's: ring files are numbered after one prefix.
  static constexpr TimeNs kChainGap = 1'000'000'000;
  struct Chain {
    std::string base;  ///< the interface's name without the file (ifN)
    PointId point;
    const Input* last;  ///< the file now feeding it, or that fed it last
    std::vector<uint64_t> first_packets;  ///< packet_key of its first file's first RoCE packets
  };
  // A ring file's first packet is new to its chain; a file of another point whose clock is off
  // by more than the capture (it starts after the chain's file ended) begins with the packets the
  // chain's first file began with, seen at that point.
  static constexpr size_t kFirstPackets = 256;
  static uint64_t packet_key(const CapturedPacket& c) {
    RoceFrame f;
    if (!c.data || decode_roce_frame(c.link, c.data, c.cap_len, c.wire_len, f) != FrameKind::kRoce) return 0;
    return hash_mix(hash_ip(f.src) * 31 + hash_ip(f.dst) + (uint64_t(f.bth.dest_qp) << 32 | f.bth.psn) +
                    (uint64_t(f.bth.opcode) << 56)) | 1;
  }
  void collect_first_packet(Input::Interface& i, const CapturedPacket& c) {
    std::vector<uint64_t>& keys = chains_[size_t(i.keys_of_chain)].first_packets;
    if (const uint64_t key = packet_key(c)) keys.push_back(key);
    if (keys.size() >= kFirstPackets) i.keys_of_chain = -1;
  }
  std::vector<Chain> chains_;

  // dumpcap's and editcap's ring files are named PREFIX_NNNNN_YYYYMMDDHHMMSS.EXT: a file's ring
  // (its directory and PREFIX) and number when its name has that form. PREFIX and EXT are what
  // the -w name had before and after its last dot, so PREFIX may hold dots (a sniffer's files
  // named after its address, 10.2.0.254_00001_...) and EXT be several (.pcapng.gz): the stem
  // ends at the first dot where the pattern does. (Cut at the first dot, such a ring read as
  // unrelated files: a missing file went unnoticed, the packets in flight then lost on the hops.)
  static bool ring_name(const std::string& path, std::string& prefix, uint64_t& number) {
    const std::string name = path.substr(path.find_last_of('/') + 1);
    for (size_t dot = name.find('.');; dot = name.find('.', dot + 1)) {
      const std::string stem = name.substr(0, dot);
      if (const size_t num = ring_number_at(stem); num != std::string::npos) {
        // Not the extension: one file of a ring may be compressed, or converted to pcap.
        prefix = path.substr(0, path.size() - name.size()) + stem.substr(0, num);
        number = std::stoull(stem.substr(num + 1, stem.rfind('_') - num - 1));
        return true;
      }
      if (dot == std::string::npos) return false;
    }
  }
  // Where `stem`'s _NNNNN (5 to 18 digits) begins when it ends _NNNNN_YYYYMMDDHHMMSS, else npos.
  static size_t ring_number_at(const std::string& stem) {
    const size_t date = stem.rfind('_');
    if (date == std::string::npos || stem.size() - date - 1 != 14) return std::string::npos;
    const size_t num = date == 0 ? std::string::npos : stem.rfind('_', date - 1);
    if (num == std::string::npos || date - num - 1 < 5 || date - num - 1 > 18) return std::string::npos;
    for (size_t k = num + 1; k < stem.size(); ++k)
      if (k != date && (stem[k] < '0' || stem[k] > '9')) return std::string::npos;
    return num;
  }
  // `next` is the file after `file` in one ring. A ring file may begin a few packets before its
  // predecessor's last (stamped when queued): by its name it continues that file's point even
  // though the file is still being read.
  static bool ring_successor(const Input& file, const Input& next) {
    return file.ring && next.ring && file.ring_prefix == next.ring_prefix && next.ring_number == file.ring_number + 1;
  }
  // The file of `in`'s ring given with the nearest number before it (`after`: after it), or null.
  const Input* ring_neighbour(const Input& in, bool after) const {
    const Input* best = nullptr;
    if (!in.ring) return best;
    // Whether a comes before b walking from `in` the way asked (x is on that side when `in` comes
    // before it; nearer than the best so far when it comes before that).
    auto nearer = [after](const Input& a, const Input& b) {
      return after ? a.ring_number < b.ring_number : a.ring_number > b.ring_number;
    };
    for (const Input& x : inputs_)
      if (x.ring && x.ring_prefix == in.ring_prefix && nearer(in, x) && (!best || nearer(x, *best))) best = &x;
    return best;
  }

  // An unnamed interface of a ring file (named PREFIX_NNNNN_DATE) whose ring's file numbered
  // before it has named interfaces (one file of a sniffer's ring converted to pcap, or rewritten
  // without interface names): the point of the interface of its number there, when both files
  // declare as many; or, for a file of one interface, of the one interface that carried packets
  // there (a port's own file may declare every interface of the capture it was cut from).
  PointId named_ring_predecessor_point(const Input& in, uint32_t id) const {
    const Input* before = ring_neighbour(in, false);
    if (!before) return kNoPoint;
    const auto& theirs = before->source->interfaces();
    const size_t ours = in.source->interfaces().size();
    auto named_point = [&](size_t k) {
      const Input::Interface& i = before->interfaces[k];
      return k < theirs.size() && !theirs[k].name.empty() && i.decided ? i.point : kNoPoint;
    };
    if (before->interfaces.size() == ours && id < ours) return named_point(id);
    if (ours != 1) return kNoPoint;
    PointId carried = kNoPoint;
    for (size_t k = 0; k < before->interfaces.size(); ++k)
      if (before->interfaces[k].packets) {
        if (carried != kNoPoint) return kNoPoint;  // several: which one is not told
        carried = named_point(k);
      }
    return carried;
  }

  // The bytes of a captured frame, for telling the same capture saved twice.
  static uint64_t frame_key(const CapturedPacket& c) {
    if (!c.data) return 0;
    return hash_bytes(c.data, std::min<size_t>(c.cap_len, 256)) ^ (uint64_t(c.cap_len) << 40) ^ c.wire_len;
  }
  // An unnamed interface whose first packet is, byte for byte and at the same stamp, the first of
  // another file's named interface: the same capture saved again without interface names (a
  // pcapng interface exported to pcap). It is that point, where the engine counts the packets
  // given twice once (before, a point of its own: every hop into it of zero delay, every message
  // twice).
  PointId same_capture_point(const Input& in, uint32_t id) const {
    if (!in.has_next || !in.next.has_ts || in.next.interface != id) return kNoPoint;
    const uint64_t key = frame_key(in.next);
    if (!key) return kNoPoint;
    for (const Input& x : inputs_) {
      if (&x == &in) continue;
      const auto& names = x.source->interfaces();
      for (size_t k = 0; k < x.interfaces.size() && k < names.size(); ++k) {
        const Input::Interface& i = x.interfaces[k];
        if (!i.decided || i.point == kNoPoint || names[k].name.empty()) continue;
        const bool first_read = i.packets && i.first_ts == in.next.ts && i.first_frame_key == key;
        const bool first_next = !i.packets && x.has_next && x.next.interface == k && x.next.has_ts &&
                                x.next.ts == in.next.ts && frame_key(x.next) == key;
        if (first_read || first_next) return i.point;
      }
    }
    return kNoPoint;
  }

  // A ring file that ended with files of its ring numbered after it given, but not the next one:
  // its points captured nothing from its last packet to the first of the next file given (the
  // ones between were deleted or not copied). The engine learns of the gap before any packet
  // after it, so that copies not seen there are not taken for losses; a warning names the files.
  void ring_gap_after(const Input& in) {
    const Input* next = ring_neighbour(in, true);
    if (!next || ring_successor(in, *next) || !in.started) return;
    const uint64_t number = in.ring_number, next_number = next->ring_number;
    constexpr TimeNs kNone = std::numeric_limits<TimeNs>::max();
    TimeNs resumes = next->started ? kNone : stamp_of(*next);
    for (const Input::Interface& i : next->interfaces)
      if (i.packets) resumes = std::min(resumes, i.first_ts);
    if (resumes == kNone || resumes <= in.last_ts) return;
    // The points the file fed (a port's own ring file may declare every interface of the capture
    // it was cut from, and carry one).
    for (const Input::Interface& i : in.interfaces)
      if (i.decided && i.point != kNoPoint && i.packets) engine_.capture_gap(i.point, in.last_ts, resumes);
    const uint64_t missing = next_number - number - 1;
    summary_.warnings.push_back(
        (missing == 1 ? "ring file number " + std::to_string(number + 1) + " is"
                      : "ring files numbered " + std::to_string(number + 1) + " to " + std::to_string(next_number - 1) +
                            " are") +
        " missing between " + in.label + " and " + next->label + ": " + seconds(span_ns(in.last_ts, resumes)) +
        " of capture that nothing was read from (I/Os whose packets fell in it are incomplete; packets on their way "
        "then are not counted lost on their paths)");
  }

  static size_t common_prefix(const std::string& a, const std::string& b) {
    size_t n = 0;
    while (n < a.size() && n < b.size() && a[n] == b[n]) ++n;
    return n;
  }

  // An unnamed interface of a later pcapng section (files concatenated with cat) numbered as an
  // unnamed one of the first section that has its link type: the same interface, captured on
  // (as with named interfaces, one name is one point). Returns that interface's id, else `id`.
  static uint32_t earlier_section_id(const Input& in, uint32_t id) {
    const auto& ifaces = in.source->interfaces();
    const CaptureInterface& iface = ifaces[id];
    if (!iface.name.empty() || iface.section == 0) return id;
    for (uint32_t k = 0; k < id; ++k)
      if (ifaces[k].section == 0 && ifaces[k].section_index == iface.section_index && ifaces[k].name.empty() &&
          ifaces[k].link == iface.link)
        return k;
    return id;
  }

  [[gnu::noinline]] PointId decide_point(Input& in, uint32_t id) {
    if (id >= in.interfaces.size()) declare_known(in);
    if (id >= in.interfaces.size()) return kNoPoint;
    if (in.interfaces[id].decided) return in.interfaces[id].point;
    const CaptureInterface& iface = in.source->interfaces()[id];
    if (const uint32_t k = earlier_section_id(in, id); k != id) {
      // The same interface in a later section of this file (ring files joined with cat): its
      // point (decided at its packets), unless the point's packets so far go on past this one's
      // (per-point files joined with cat: sections are read one after the other, each from the
      // start of the capture).
      const PointId point = decide_point(in, k);
      const TimeNs first = stamp_of(in);
      TimeNs until = first;
      for (const Input::Interface& x : in.interfaces)
        if (x.decided && x.point == point && x.packets) until = std::max(until, x.last_ts);
      if (point == kNoPoint || span_ns(first, until) <= double(ring_overlap_)) {
        in.interfaces[id].point = point;
        in.interfaces[id].decided = point != kNoPoint;
        return point;
      }
      const std::string name =
          in.label + " section " + std::to_string(iface.section + 1) + ":if" + std::to_string(iface.section_index);
      decide(in, id, name);
      summary_.warnings.push_back(in.label + ": pcapng section " + std::to_string(iface.section + 1) +
                                  " has an unnamed interface if" + std::to_string(iface.section_index) +
                                  " whose packets begin " +
                                  seconds(span_ns(first, until)) + " before the first section's " +
                                  engine_.point_name(point) +
                                  " ends: per-point files joined with cat? It is taken as an observation point of its "
                                  "own (" + name + "); sections are read one after the other, so give such files "
                                  "separately to have their packets merged by time");
      return in.interfaces[id].point;
    }
    PointId named = named_ring_predecessor_point(in, id);
    if (named == kNoPoint && (named = same_capture_point(in, id)) != kNoPoint)
      summary_.warnings.push_back(in.label + ": its unnamed interface " + point_name(iface, id) +
                                  " begins with the packet, and stamp, " + engine_.point_name(named) +
                                  " of another file begins with: the same capture (saved again without interface "
                                  "names), taken as that point");
    if (named != kNoPoint) {
      in.interfaces[id].point = named;
      in.interfaces[id].decided = true;
      return named;
    }
    const std::string base = point_name(iface, id);
    const TimeNs first = stamp_of(in);
    Chain* join = nullptr;
    const Chain* busy = nullptr;
    const Chain* far = nullptr;
    const Chain* same_start = nullptr;
    const uint64_t key = packet_key(in.next);
    Chain* successor_of = nullptr;
    for (Chain& c : chains_) {
      if (c.base != base) continue;
      if (ring_successor(*c.last, in)) successor_of = &c;
      if (!c.last->finished) {
        busy = &c;
        continue;
      }
      if (span_ns(c.last->last_ts, first) > double(kChainGap)) {
        far = &c;
        continue;
      }
      if (key && std::find(c.first_packets.begin(), c.first_packets.end(), key) != c.first_packets.end()) {
        same_start = &c;
        continue;
      }
      if (!join || common_prefix(c.last->label, in.label) > common_prefix(join->last->label, in.label) ||
          (common_prefix(c.last->label, in.label) == common_prefix(join->last->label, in.label) &&
           c.last->last_ts > join->last->last_ts))
        join = &c;
    }
    if (successor_of) join = successor_of;
    if (join) {
      in.interfaces[id].point = join->point;
      in.interfaces[id].decided = true;
      join->last = &in;
      return join->point;
    }
    // The warning first: the chains may move as one is added.
    std::string warning;
    if (busy)
      warning = in.label + " and " + busy->last->label + " both have an unnamed interface " + base +
                " and overlap in time: they are taken as two observation points (" + in.label + ":" + base + ")";
    else if (same_start)
      warning = in.label + " starts after " + same_start->last->label + " ended, both with an unnamed interface " + base +
                ", with a packet its chain began with: the same traffic at another observation point, whose clock is "
                "off by more than the capture? It is taken as a point of its own (" + in.label + ":" + base +
                "); --clock-offset aligns it";
    else if (far)
      warning = in.label + " starts " + seconds(span_ns(far->last->last_ts, first)) + " after " + far->last->label +
                " ended, both with an unnamed interface " + base + ": they are taken as two observation points (" +
                in.label + ":" + base + "), as ring-buffer files follow each other within a second; two sniffers' "
                "clocks that far apart would otherwise show every packet twice at one point";
    decide(in, id, busy || far || same_start ? in.label + ":" + base : base);
    chains_.push_back(Chain{base, in.interfaces[id].point, &in, {}});
    in.interfaces[id].keys_of_chain = int32_t(chains_.size() - 1);
    if (!warning.empty()) summary_.warnings.push_back(std::move(warning));
    return in.interfaces[id].point;
  }

  static std::string seconds(double ns) {
    char b[32];
    std::snprintf(b, sizeof b, "%.3f s", ns / 1e9);
    return b;
  }

  SessionSummary run(const ProgressFn& progress, const CancelToken* cancel) {
    checks_points_after_run_ = undecided();
    for (const std::string& name : engine_.unmatched_role_overrides())
      checks_points_after_run_ |= names_session_point(name);
    uint64_t total = 0;
    for (const Input& in : inputs_) total += in.source->size();
    const auto start = std::chrono::steady_clock::now();
    auto last_report = start;
    // The input whose next packet is oldest goes first; ties go to the earlier input (mergecap).
    auto later = [&](size_t a, size_t b) {
      TimeNs ta = stamp_of(inputs_[a]), tb = stamp_of(inputs_[b]);
      return ta != tb ? ta > tb : a > b;
    };
    std::priority_queue<size_t, std::vector<size_t>, decltype(later)> heap(later);
    uint64_t merged_frame = 0;
    const bool single = inputs_.size() == 1;  // nothing to merge: no heap per packet
    if (!single)
      for (size_t i = 0; i < inputs_.size(); ++i)
        if (inputs_[i].has_next) heap.push(i);
    while (single ? inputs_[0].has_next : !heap.empty()) {
      size_t i = 0;
      if (!single) {
        i = heap.top();
        heap.pop();
      }
      Input& in = inputs_[i];
      const CapturedPacket& c = in.next;
      in.started = true;
      FrameIn f;
      f.frame = single ? c.frame : ++merged_frame;
      f.ts = c.ts;
      f.has_ts = c.has_ts;
      f.point = point_of(in, c.interface);
      f.link = c.link;
      f.data = c.data;
      f.cap_len = c.cap_len;
      f.wire_len = c.wire_len;
      f.decoded = c.decoded;
      source_of(in, c.interface, f);
      engine_.push(f);
      if (c.has_ts) {
        in.last_ts = c.ts;
        if (c.interface < in.interfaces.size()) {
          Input::Interface& i = in.interfaces[c.interface];
          if (i.packets++ == 0) {
            i.first_ts = c.ts;
            i.first_frame_key = frame_key(c);
          }
          i.last_ts = c.ts;
          if (i.keys_of_chain >= 0) [[unlikely]]
            collect_first_packet(i, c);
        }
        if (summary_.frames == 0 || c.ts < summary_.first_ts) summary_.first_ts = c.ts;
        if (summary_.frames == 0 || c.ts > summary_.last_ts) summary_.last_ts = c.ts;
      }
      ++summary_.frames;
      in.has_next = in.source->next(in.next);
      if (in.has_next) {
        if (in.interfaces.size() < in.source->interfaces().size()) declare_known(in);
        if (!single) heap.push(i);
      } else {
        in.finished = true;
        ring_gap_after(in);
      }
      if (summary_.frames % kCheckEvery == 0) {
        if (cancel && cancel->cancelled()) {
          summary_.cancelled = true;
          break;
        }
        auto now = std::chrono::steady_clock::now();
        if (progress && now - last_report >= kProgressEvery) {
          last_report = now;
          Progress p;
          p.frames = summary_.frames;
          for (const Input& x : inputs_) p.bytes += x.source->position();
          p.total_bytes = total;
          p.seconds = std::chrono::duration<double>(now - start).count();
          progress(p);
        }
      }
    }
    for (size_t i = 0; i < inputs_.size(); ++i) {
      const Input& in = inputs_[i];
      if (!in.source->error().empty()) summary_.errors.push_back(in.label + ": " + in.source->error());
      else if (!decodable(in)) {
        // The error says it all: not also one warning per interface.
        const std::string prefix = in.label + ": interface ";
        std::erase_if(summary_.warnings, [&](const std::string& w) { return w.rfind(prefix, 0) == 0; });
        summary_.errors.push_back(in.label + ": " + not_a_network_capture(in, summary_.formats[i]));
      }
    }
    report_capture_drops();
    engine_.finish();
    warn_named_overlaps();
    if (checks_points_after_run_)
      for (std::string& e : unmatched_points(true)) summary_.errors.push_back(std::move(e));
    return summary_;
  }

  // What the captures themselves dropped (pcapng interface statistics, read by the end of each
  // file): a hop that loses packets into such a point may have lost them to the capture. One
  // warning for all, by point.
  void report_capture_drops() {
    std::string text;
    for (const Input& in : inputs_) {
      const auto& ifaces = in.source->interfaces();
      for (size_t id = 0; id < in.interfaces.size() && id < ifaces.size(); ++id) {
        const uint64_t dropped = ifaces[id].capture_dropped;
        const PointId point = in.interfaces[id].point;
        if (!dropped || !in.interfaces[id].decided || point == kNoPoint) continue;
        engine_.set_capture_dropped(point, dropped);
        text += (text.empty() ? "" : "; ") + std::to_string(dropped) + " at point " + engine_.point_name(point) + " (" +
                in.label + ")";
      }
    }
    if (!text.empty())
      summary_.warnings.push_back(
          "the capture itself dropped packets, as its interface statistics say: " + text +
          ". Packets missing at these points may be the capture's losses, not the network's: losses on hops into them "
          "and gaps in their flows' PSNs are not all the network's doing (counted from the start of each capture, "
          "which may include files not given)");
  }

  // Interfaces of one name in several files are one point: ring files, split files, or a file
  // given twice (its packets then counted once, as duplicates). Two files of one name that
  // overlap in time yet hold few of the same packets are neither: two sniffers whose interfaces
  // share a name (eth0 on two hosts), every packet both saw then read as a resend at one point.
  void warn_named_overlaps() {
    if (by_file_) return;
    const uint64_t duplicates = engine_.stats().duplicates;
    // Only interfaces of one point can overlap: grouped by point, not every interface against
    // every other (a file of 40,000 interfaces took seconds here). Of the pairs that overlap, the
    // first in the order of the files given, then of their interfaces, is told.
    struct Member {
      PointId point;
      uint32_t input, interface;
    };
    std::vector<Member> members;
    for (size_t a = 0; a < inputs_.size(); ++a)
      for (size_t i = 0; i < inputs_[a].interfaces.size(); ++i) {
        const Input::Interface& x = inputs_[a].interfaces[i];
        if (x.decided && x.point != kNoPoint && x.packets) members.push_back({x.point, uint32_t(a), uint32_t(i)});
      }
    std::stable_sort(members.begin(), members.end(), [](const Member& m, const Member& n) { return m.point < n.point; });
    auto of = [&](const Member& m) -> const Input::Interface& { return inputs_[m.input].interfaces[m.interface]; };
    std::optional<std::tuple<uint32_t, uint32_t, uint32_t, uint32_t>> first;  // (a, b, i, j)
    for (size_t g = 0; g < members.size();) {
      size_t end = g;
      while (end < members.size() && members[end].point == members[g].point) ++end;
      // By first stamp, each against those that start before it ends (a ring's files: its
      // neighbour at most).
      std::vector<size_t> by_start(end - g);
      for (size_t k = 0; k < by_start.size(); ++k) by_start[k] = g + k;
      std::stable_sort(by_start.begin(), by_start.end(),
                       [&](size_t m, size_t n) { return of(members[m]).first_ts < of(members[n]).first_ts; });
      for (size_t s = 0; s < by_start.size(); ++s)
        for (size_t t = s + 1; t < by_start.size() && of(members[by_start[t]]).first_ts < of(members[by_start[s]]).last_ts; ++t) {
          const Member& m = members[std::min(by_start[s], by_start[t])];  // in the order given
          const Member& n = members[std::max(by_start[s], by_start[t])];
          const auto pair = std::tuple(m.input, n.input, m.interface, n.interface);
          if (first && pair >= *first) continue;
          if (overlaps_without_duplicates(m.input, m.interface, n.input, n.interface, duplicates)) first = pair;
        }
      g = end;
    }
    if (!first) return;
    const auto [a, b, i, j] = *first;
    const auto& ifaces = inputs_[a].source->interfaces();
    const std::string where =
        a != b ? inputs_[a].label + " and " + inputs_[b].label
        : ifaces[i].section != ifaces[j].section
            ? inputs_[a].label + "'s pcapng sections " + std::to_string(ifaces[i].section + 1) + " and " +
                  std::to_string(ifaces[j].section + 1)
            : inputs_[a].label + "'s interfaces " + std::to_string(i) + " and " + std::to_string(j);
    summary_.warnings.push_back(
        where + " both have interface " + engine_.point_name(inputs_[a].interfaces[i].point) +
        " and overlap in time without holding the same packets: two sniffers whose interfaces share a name? "
        "They are taken as one observation point (interfaces of one name are one point, as ring files are), "
        "where a packet both saw reads as a resend and no hop between them is measured; --points-by-file "
        "makes each file's interfaces points of their own");
  }
  // Interface i of input a and interface j of input b (of one point; a <= b, and i < j within
  // one input) overlap in time yet hold few of the same packets.
  bool overlaps_without_duplicates(size_t a, size_t i, size_t b, size_t j, uint64_t duplicates) const {
    // Within one file too: interfaces of one name in two pcapng sections (files joined with
    // cat), or in one section (mergecap of two hosts' eth0 keeps an interface of each when
    // their descriptions differ).
    const Input::Interface& x = inputs_[a].interfaces[i];
    const Input::Interface& y = inputs_[b].interfaces[j];
    if (!(x.first_ts < y.last_ts && y.first_ts < x.last_ts)) return false;
    // The packets each holds in the time both cover (at its own average rate): overlapping
    // copies of one capture give about that many duplicates, two sniffers none.
    const double both = span_ns(std::max(x.first_ts, y.first_ts), std::min(x.last_ts, y.last_ts));
    auto within = [&](const Input::Interface& z) {
      return double(z.packets) * both / std::max(1.0, span_ns(z.first_ts, z.last_ts));
    };
    // Ring files of a point whose stamps step back a little across a file's end overlap
    // by a few packets: not what two sniffers of the same traffic do.
    const double overlapped = std::min(within(x), within(y));
    if (overlapped < std::max(50.0, 0.1 * double(std::min(x.packets, y.packets)))) return false;
    return 2.0 * double(duplicates) < overlapped;
  }

  bool undecided() const {
    for (const Input& in : inputs_)
      for (const Input::Interface& i : in.interfaces)
        if (!i.decided) return true;
    return false;
  }
  /// --point names naming no point, as sentences; `session_points`: also those that name an
  /// ERSPAN session's point, which the engine declares at the session's first packet.
  std::vector<std::string> unmatched_points(bool session_points) const;
  static bool names_session_point(const std::string& name) { return name.find("/ERSPAN ") != std::string::npos; }
  bool checks_points_after_run_ = false;

  static TimeNs stamp_of(const Input& in) { return in.next.has_ts ? in.next.ts : in.last_ts; }

  std::map<std::string, LinkType> link_of_name_;
};

std::unique_ptr<Session> Session::open(const std::vector<std::string>& paths, const Settings& settings,
                                       CaptureOpener fallback, std::string& error) {
  std::vector<SessionInput> inputs;
  // With a second core, files are read ahead on a thread of their own, two at a time at most
  // (ReadAheadSlots: the measuring threads already take both cores). A mapped file is decoded
  // there too (its bytes stay mapped: only the decoded frames are handed over); what the fast
  // reader cannot read is decompressed (gzip, zstd) or parsed by libwiretap there, at a cost like
  // the measurement's. Not standard input: a pipe may block for ever, and the thread could not
  // be stopped.
  const bool ahead = settings.count("threads") > 1;
  const auto slots = std::make_shared<ReadAheadSlots>(2);
  for (const std::string& path : paths) {
    SessionInput in;
    in.label = path;
    std::string err;
    OpenStatus st = path == "-" ? OpenStatus::kNotRecognized : open_fast_capture(path, in.source, err);
    if (st == OpenStatus::kError) {
      error = err;
      return nullptr;
    }
    if (st == OpenStatus::kNotRecognized) {
      if (!fallback) {
        error = path + " is not a pcap or pcapng file";
        return nullptr;
      }
      in.source = fallback(path, err);
      if (!in.source) {
        error = err;
        return nullptr;
      }
    }
    if (ahead && path != "-")
      in.source = read_ahead(std::move(in.source), st == OpenStatus::kOk ? ReadAhead::kDecode : ReadAhead::kCopy, slots);
    inputs.push_back(std::move(in));
  }
  return std::make_unique<Session>(std::move(inputs), settings);
}

Session::Session(std::vector<SessionInput> inputs, const Settings& settings)
    : impl_(std::make_unique<Impl>(std::move(inputs), settings)) {}
Session::~Session() = default;
void Session::subscribe(RecordSink& sink) { impl_->engine_.subscribe(sink); }
Engine& Session::engine() { return impl_->engine_; }
const Engine& Session::engine() const { return impl_->engine_; }
SessionSummary Session::run(const ProgressFn& progress, const CancelToken* cancel) {
  return impl_->run(progress, cancel);
}

std::vector<std::string> Session::usage_errors() const {
  // The unnamed interfaces of several files become points at their first packet (decide_point),
  // an ERSPAN session's point at its own (Engine): a --point naming one is checked once the run
  // has declared them.
  if (impl_->undecided()) return {};
  return impl_->unmatched_points(false);
}

std::vector<std::string> Session::Impl::unmatched_points(bool session_points) const {
  std::vector<std::string> out;
  const Engine& e = engine_;
  for (const std::string& name : e.unmatched_role_overrides()) {
    if (!session_points && names_session_point(name)) continue;
    std::string points;
    for (PointId i = 0; i < e.point_count() && i < 20; ++i) points += (i ? ", " : "") + e.point_name(i);
    out.push_back("--point " + name + " names no observation point of the capture (points: " +
                  (points.empty() ? std::string("none") : points) + ")");
  }
  return out;
}

}  // namespace rdmatel
