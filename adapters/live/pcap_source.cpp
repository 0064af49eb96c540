// SPDX-License-Identifier: GPL-2.0-or-later
#include "adapters/live/pcap_source.h"

#include <pcap/pcap.h>
#include <poll.h>
#include <time.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace rdmatel::live {
namespace {

// The kernel hands packets over in blocks retired at least this often (TPACKET_V3), so a packet
// reaches rdmatel at most this late: far within the engine's reorder window.
constexpr int kPcapTimeoutMs = 20;
// How long poll() waits: the stop flag and the tick are looked at this often when idle.
constexpr int kPollMs = 50;
// A silent interface gets a heartbeat this often, stamped this far in the past so that a
// packet still in a kernel block is never older than the heartbeat by more than the window.
constexpr TimeNs kHeartbeatEveryNs = 100 * kNsPerMs;
constexpr TimeNs kHeartbeatLagNs = 100 * kNsPerMs;
constexpr TimeNs kTickNs = 100 * kNsPerMs;

TimeNs wall_clock_ns() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return saturating_ns(ts.tv_sec, ts.tv_nsec);
}
TimeNs monotonic_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return saturating_ns(ts.tv_sec, ts.tv_nsec);
}

std::string activation_error(const std::string& name, int status, pcap_t* h) {
  switch (status) {
    case PCAP_ERROR_NO_SUCH_DEVICE:
      return "interface " + name + " not found";
    case PCAP_ERROR_PERM_DENIED:
    case PCAP_ERROR_PROMISC_PERM_DENIED:
      return "no permission to capture on " + name +
             " (run as root, or give rdmatel the capabilities CAP_NET_RAW and CAP_NET_ADMIN)";
    case PCAP_ERROR_IFACE_NOT_UP:
      return "interface " + name + " is not up";
    case PCAP_ERROR_RFMON_NOTSUP:
      return "interface " + name + " does not support monitor mode";
    default:
      return "cannot capture on " + name + ": " + pcap_geterr(h);
  }
}

struct Handle {
  pcap_t* pcap = nullptr;
  int fd = -1;
  TimeNs last_ts = 0;       ///< newest stamp delivered (packet or heartbeat)
  TimeNs last_seen_ns = 0;  ///< monotonic time of the last delivery
};

class Source final : public PcapLiveSource {
 public:
  explicit Source(const std::atomic<bool>& stop) : stop_(stop) {}
  ~Source() override {
    for (Handle& h : handles_)
      if (h.pcap) pcap_close(h.pcap);
  }

  bool open(const PcapOptions& o, std::string& error) {
    char errbuf[PCAP_ERRBUF_SIZE] = {};
    for (const std::string& name : o.interfaces) {
      pcap_t* p = pcap_create(name.c_str(), errbuf);
      if (!p) {
        error = "cannot capture on " + name + ": " + errbuf;
        return false;
      }
      handles_.push_back(Handle{p});
      pcap_set_snaplen(p, int(o.snaplen));
      pcap_set_promisc(p, 1);  // a mirror port carries frames for other MAC addresses
      pcap_set_timeout(p, kPcapTimeoutMs);
      pcap_set_buffer_size(p, int(o.buffer_bytes));
      pcap_set_tstamp_precision(p, PCAP_TSTAMP_PRECISION_NANO);
      int st = pcap_activate(p);
      if (st < 0) {
        error = activation_error(name, st, p);
        return false;
      }
      if (!o.filter.empty()) {
        bpf_program prog{};
        if (pcap_compile(p, &prog, o.filter.c_str(), 1, PCAP_NETMASK_UNKNOWN) != 0) {
          error = "bad capture filter '" + o.filter + "': " + pcap_geterr(p);
          return false;
        }
        int set = pcap_setfilter(p, &prog);
        pcap_freecode(&prog);
        if (set != 0) {
          error = "cannot set the capture filter on " + name + ": " + pcap_geterr(p);
          return false;
        }
      }
      if (pcap_setnonblock(p, 1, errbuf) != 0) {
        error = "cannot capture on " + name + ": " + errbuf;
        return false;
      }
      handles_.back().fd = pcap_get_selectable_fd(p);
      CaptureInterface iface;
      iface.name = name;
      iface.pcap_linktype = uint32_t(pcap_datalink(p));
      iface.link = link_type_from_pcap(iface.pcap_linktype);
      iface.snaplen = uint32_t(pcap_snapshot(p));
      ifaces_.push_back(iface);
      if (iface.link == LinkType::kUnsupported) {
        error = "interface " + name + " has link type " + std::to_string(iface.pcap_linktype) +
                " (" +
                (pcap_datalink_val_to_name(int(iface.pcap_linktype))
                     ? pcap_datalink_val_to_name(int(iface.pcap_linktype))
                     : "?") +
                "), which rdmatel does not decode";
        return false;
      }
    }
    const TimeNs now = monotonic_ns();
    for (Handle& h : handles_) h.last_seen_ns = now;
    next_tick_ = now + kTickNs;
    return true;
  }

  bool next(CapturedPacket& out) override {
    for (;;) {
      if (stop_.load(std::memory_order_relaxed) || !error_.empty()) return false;
      const TimeNs now = monotonic_ns();
      if (now >= next_tick_) {
        next_tick_ = now + kTickNs;
        if (tick_) tick_();
      }
      // Round robin, one packet per call: no interface starves the others.
      for (size_t k = 0; k < handles_.size(); ++k) {
        size_t i = (rr_ + k) % handles_.size();
        Handle& h = handles_[i];
        pcap_pkthdr* hdr = nullptr;
        const u_char* data = nullptr;
        int r = pcap_next_ex(h.pcap, &hdr, &data);
        if (r == 1) {
          rr_ = i + 1;
          ++frame_;
          ++packets_;
          out.frame = frame_;
          // Nanosecond precision was asked for: tv_usec holds nanoseconds.
          out.ts = saturating_ns(int64_t(hdr->ts.tv_sec), int64_t(hdr->ts.tv_usec));
          out.has_ts = true;
          out.interface = uint32_t(i);
          out.cap_len = hdr->caplen;
          out.wire_len = hdr->len;
          out.link = ifaces_[i].link;
          out.data = data;
          h.last_ts = std::max(h.last_ts, out.ts);
          h.last_seen_ns = now;
          return true;
        }
        if (r < 0) {
          error_ = "capture on " + ifaces_[i].name + " failed: " + pcap_geterr(h.pcap);
          return false;
        }
      }
      // Nothing waiting: a heartbeat for a silent interface, else wait.
      for (size_t i = 0; i < handles_.size(); ++i) {
        Handle& h = handles_[i];
        if (now - h.last_seen_ns < kHeartbeatEveryNs) continue;
        h.last_seen_ns = now;
        h.last_ts = std::max(h.last_ts, wall_clock_ns() - kHeartbeatLagNs);
        out = CapturedPacket{};
        out.frame = frame_;  // not a frame of the capture: numbers stay those of real packets
        out.ts = h.last_ts;
        out.interface = uint32_t(i);
        out.link = LinkType::kEthernet;
        out.cap_len = out.wire_len = sizeof heartbeat_;
        out.data = heartbeat_;  // ethertype 0: decoded as "not RoCE", only its stamp counts
        return true;
      }
      std::vector<pollfd> fds;
      for (const Handle& h : handles_) fds.push_back(pollfd{h.fd, POLLIN, 0});
      int pr = poll(fds.data(), fds.size(), kPollMs);
      if (pr < 0 && errno != EINTR) {
        error_ = std::string("waiting for packets failed: ") + std::strerror(errno);
        return false;
      }
    }
  }

  const std::vector<CaptureInterface>& interfaces() const override { return ifaces_; }
  const std::string& error() const override { return error_; }
  uint64_t position() const override { return 0; }
  uint64_t size() const override { return 0; }
  std::string format() const override { return "live (libpcap)"; }
  void set_tick(TickFn fn) override { tick_ = std::move(fn); }
  uint64_t packets() const override { return packets_; }
  PcapDrops drops() const override {
    PcapDrops d;
    for (const Handle& h : handles_) {
      pcap_stat st{};
      if (pcap_stats(h.pcap, &st) != 0) continue;
      d.received += st.ps_recv;
      d.dropped += st.ps_drop;
      d.if_dropped += st.ps_ifdrop;
    }
    return d;
  }

 private:
  const std::atomic<bool>& stop_;
  std::vector<Handle> handles_;
  std::vector<CaptureInterface> ifaces_;
  std::string error_;
  TickFn tick_;
  TimeNs next_tick_ = 0;
  size_t rr_ = 0;
  uint64_t frame_ = 0, packets_ = 0;
  uint8_t heartbeat_[14] = {};
};

}  // namespace

std::unique_ptr<PcapLiveSource> open_live_capture(const PcapOptions& options,
                                                  const std::atomic<bool>& stop,
                                                  std::string& error) {
  if (options.interfaces.empty()) {
    error = "live needs an interface (-i IFACE) or a stream (-r -)";
    return nullptr;
  }
  auto src = std::make_unique<Source>(stop);
  if (!src->open(options, error)) return nullptr;
  return src;
}

}  // namespace rdmatel::live
