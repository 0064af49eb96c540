// SPDX-License-Identifier: GPL-2.0-or-later
// Fast reader for pcap and pcapng over a memory-mapped file: no copies, no allocation per packet.
// Formats: pcap (us/ns, either byte order), pcapng (SHB/IDB/EPB/SPB/PB, several sections, both
// byte orders, if_tsresol and if_tsoffset). Anything it cannot trust ends reading with a sentence.
#include <sys/stat.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>

#include "engine/src/capture/mapped_file.h"
#include "engine/src/util/byte_order.h"
#include "rdmatel/capture.h"

namespace rdmatel {
namespace {

constexpr uint32_t kPcapMagicUs = 0xa1b2c3d4;
constexpr uint32_t kPcapMagicNs = 0xa1b23c4d;
constexpr uint32_t kBlockSectionHeader = 0x0A0D0D0A;
constexpr uint32_t kBlockInterface = 0x00000001;
constexpr uint32_t kBlockPacketObsolete = 0x00000002;
constexpr uint32_t kBlockSimplePacket = 0x00000003;
constexpr uint32_t kBlockInterfaceStatistics = 0x00000005;
constexpr uint32_t kBlockEnhancedPacket = 0x00000006;
constexpr uint32_t kBlockSystemdJournal = 0x00000009;
constexpr uint32_t kBlockCustom = 0x00000BAD;          // custom block, may be copied
constexpr uint32_t kBlockCustomNoCopy = 0x40000BAD;    // custom block, not to be copied
constexpr uint32_t kByteOrderMagic = 0x1A2B3C4D;
// A packet larger than this is corruption, not data (Wireshark's own limit is 256 MiB).
constexpr uint32_t kMaxPacketLen = 256u << 20;
// Wireshark's limit for the link types rdmatel decodes (Ethernet, cooked, raw IP): in a pcap file,
// where a record's length is all that frames it, a larger one is a corrupt header whose "data"
// would swallow the records after it.
constexpr uint32_t kMaxNetworkPacketLen = 262144;

// Per-interface timestamp conversion to ns.
struct TsScale {
  bool binary = false;  ///< resolution 2^-exp instead of 10^-exp
  uint8_t exp = 6;
  int64_t offset_s = 0;

  // Exact in 128 bits, then saturated: stamps past the year 2262 (garbage in practice) must not
  // overflow (a 64-bit stamp in 10^-9 s units alone can exceed the ns range, and if_tsoffset
  // is any 64-bit number of seconds).
  TimeNs to_ns(uint64_t t) const {
    // The usual stamps (ns or µs, no offset) of this century: no 128-bit arithmetic per packet.
    if (!binary && offset_s == 0 && t < (uint64_t(1) << 62)) {
      if (exp == 9) return TimeNs(t);
      if (exp == 6 && t < (uint64_t(1) << 52)) return TimeNs(t * 1000);
    }
    __int128 v;
    if (binary) {
      v = __int128((unsigned __int128)t * 1000000000u >> exp);
    } else if (exp <= 9) {
      uint64_t mul = 1;
      for (int i = exp; i < 9; ++i) mul *= 10;
      v = __int128(t) * mul;
    } else {
      uint64_t div = 1;
      for (int i = 9; i < exp; ++i) div *= 10;  // exp <= 19: fits
      v = __int128(t / div);
    }
    v += __int128(offset_s) * kNsPerSec;
    constexpr __int128 kMax = std::numeric_limits<TimeNs>::max(), kMin = std::numeric_limits<TimeNs>::min();
    return TimeNs(v > kMax ? kMax : v < kMin ? kMin : v);
  }
};

class FastCaptureReader final : public CaptureSource {
 public:
  explicit FastCaptureReader(bool pcapng) : pcapng_(pcapng) {}

  bool init(const std::string& path, MappedFile&& file, std::string& error) {
    path_ = path;
    file_ = std::move(file);
    base_ = file_.data();
    size_ = file_.size();
    return pcapng_ ? true : read_pcap_header(error);
  }

  bool next(CapturedPacket& out) override {
    file_.consumed(pos_);
    return pcapng_ ? next_pcapng(out) : next_pcap(out);
  }
  const std::vector<CaptureInterface>& interfaces() const override { return ifaces_; }
  const std::string& error() const override { return error_; }
  uint64_t position() const override { return pos_; }
  uint64_t size() const override { return size_; }
  std::string format() const override {
    if (pcapng_) return "pcapng";
    return ns_ ? "pcap (ns)" : "pcap";
  }

 private:
  bool fail(const std::string& why) {
    error_ = why + " at byte " + std::to_string(pos_) + " (after " + std::to_string(frame_) + " packets)";
    pos_ = size_;
    return false;
  }
  uint32_t u16(const uint8_t* p) const { return swap_ ? load_be16(p) : load_le16(p); }
  uint32_t u32(const uint8_t* p) const { return swap_ ? load_be32(p) : load_le32(p); }
  uint64_t left() const { return size_ - pos_; }

  // ---- pcap ----
  bool read_pcap_header(std::string& error) {
    if (size_ < 24) {
      error = path_ + ": pcap file header is truncated";
      return false;
    }
    uint32_t magic = load_le32(base_);
    swap_ = magic != kPcapMagicUs && magic != kPcapMagicNs;
    magic = swap_ ? load_be32(base_) : magic;
    ns_ = magic == kPcapMagicNs;
    uint32_t snap = u32(base_ + 16);
    uint32_t lt = u32(base_ + 20) & 0x03FFFFFF;  // upper bits carry FCS information
    ifaces_.push_back({"", link_type_from_pcap(lt), lt, snap});
    scales_.push_back({false, uint8_t(ns_ ? 9 : 6), 0});
    pos_ = 24;
    return true;
  }

  bool next_pcap(CapturedPacket& out) {
    if (pos_ >= size_) return false;
    if (left() < 16) return fail("truncated packet record header");
    const uint8_t* h = base_ + pos_;
    uint32_t sec = u32(h), frac = u32(h + 4), incl = u32(h + 8), orig = u32(h + 12);
    if (incl > kMaxPacketLen) return fail("packet record claims " + std::to_string(incl) + " bytes");
    if (incl > kMaxNetworkPacketLen && ifaces_[0].link != LinkType::kUnsupported)
      return fail("packet record claims " + std::to_string(incl) + " bytes, more than the " +
                  std::to_string(kMaxNetworkPacketLen) + " a packet of its link type can have (a corrupt record header)");
    if (left() - 16 < incl) return fail("truncated packet data");
    out.frame = ++frame_;
    out.ts = TimeNs(sec) * kNsPerSec + TimeNs(frac) * (ns_ ? 1 : 1000);
    out.has_ts = true;
    out.interface = 0;
    out.link = ifaces_[0].link;
    out.cap_len = incl;
    out.wire_len = orig < incl ? incl : orig;
    out.data = h + 16;
    pos_ += 16 + uint64_t(incl);
    return true;
  }

  // ---- pcapng ----
  bool read_section_header(const uint8_t* b, uint32_t len) {
    if (len < 28) return fail("section header block too short");
    uint32_t bom = load_le32(b + 8);
    if (bom == kByteOrderMagic) swap_ = false;
    else if (load_be32(b + 8) == kByteOrderMagic) swap_ = true;
    else return fail("section header has a bad byte-order magic");
    // A new section starts a new interface numbering; earlier interfaces stay (global ids).
    section_base_ = uint32_t(ifaces_.size());
    ++sections_;
    return true;
  }

  bool read_interface(const uint8_t* b, uint32_t len) {
    if (len < 20) return fail("interface description block too short");
    CaptureInterface iface;
    iface.pcap_linktype = u16(b + 8);
    iface.link = link_type_from_pcap(iface.pcap_linktype);
    iface.snaplen = u32(b + 12);
    TsScale scale;
    std::string description;
    // Options: code(2) length(2) value padded to 4.
    uint32_t off = 16, end = len - 4;
    while (off + 4 <= end) {
      uint32_t code = u16(b + off), olen = u16(b + off + 2);
      if (code == 0) break;
      // An option running past its block: the block is corrupt, and the options it would have
      // held (the timestamp resolution among them) cannot be trusted to be absent; Wireshark
      // refuses the file too.
      if (off + 4 + olen > end)
        return fail("interface description block " + std::to_string(ifaces_.size() - section_base_) + ": option " +
                    std::to_string(code) + " of " + std::to_string(olen) + " bytes runs past the block's end");
      const uint8_t* v = b + off + 4;
      if (code == 2) iface.name.assign(reinterpret_cast<const char*>(v), strnlen(reinterpret_cast<const char*>(v), olen));
      if (code == 3) description.assign(reinterpret_cast<const char*>(v), strnlen(reinterpret_cast<const char*>(v), olen));
      if (code == 9 && olen >= 1) {
        scale.binary = v[0] & 0x80;
        scale.exp = v[0] & 0x7f;
        if (!scale.binary && scale.exp > 19) scale.exp = 19;
        if (scale.binary && scale.exp > 63) scale.exp = 63;
      }
      if (code == 14 && olen >= 8) scale.offset_s = int64_t(swap_ ? load_be64(v) : load_le64(v));
      if (code == 8 && olen >= 8) iface.speed_bps = swap_ ? load_be64(v) : load_le64(v);
      off += 4 + ((olen + 3) & ~3u);
    }
    // Wireshark names an interface by if_name, else by if_description.
    if (iface.name.empty()) iface.name = std::move(description);
    if (ifaces_.size() >= kMaxInterfaces) return fail("more than " + std::to_string(kMaxInterfaces) + " interfaces");
    iface.section = sections_ - 1;
    iface.section_index = uint32_t(ifaces_.size()) - section_base_;
    ifaces_.push_back(std::move(iface));
    scales_.push_back(scale);
    return true;
  }

  // The packets the capture dropped at an interface (isb_ifdrop: the interface or its driver,
  // isb_osdrop: the operating system's buffer). A statistics block that cannot be read is
  // ignored: it measures nothing.
  void read_interface_statistics(const uint8_t* b, uint32_t len) {
    if (len < 24) return;
    const uint32_t iface = section_base_ + u32(b + 8);
    if (iface >= ifaces_.size()) return;
    uint64_t dropped = 0;
    uint32_t off = 20, end = len - 4;
    while (off + 4 <= end) {
      uint32_t code = u16(b + off), olen = u16(b + off + 2);
      if (code == 0 || off + 4 + olen > end) break;
      const uint8_t* v = b + off + 4;
      if ((code == 5 || code == 7) && olen >= 8) {
        const uint64_t n = swap_ ? load_be64(v) : load_le64(v);
        dropped = n > UINT64_MAX - dropped ? UINT64_MAX : dropped + n;
      }
      off += 4 + ((olen + 3) & ~3u);
    }
    ifaces_[iface].capture_dropped = std::max(ifaces_[iface].capture_dropped, dropped);
  }

  bool packet_from(const uint8_t* data, uint32_t local_if, uint64_t ts, uint32_t cap, uint32_t orig,
                   CapturedPacket& out) {
    uint32_t iface = section_base_ + local_if;
    if (local_if >= ifaces_.size() - section_base_ || iface >= ifaces_.size())
      return fail("packet refers to interface " + std::to_string(local_if) + " that was not declared");
    out.frame = ++frame_;
    out.ts = scales_[iface].to_ns(ts);
    out.has_ts = true;
    out.interface = iface;
    out.link = ifaces_[iface].link;
    out.cap_len = cap;
    out.wire_len = orig < cap ? cap : orig;
    out.data = data;
    return true;
  }

  bool next_pcapng(CapturedPacket& out) {
    while (pos_ < size_) {
      if (left() < 12) return fail("truncated block header");
      const uint8_t* b = base_ + pos_;
      uint32_t type = load_le32(b);  // the SHB type is a palindrome: readable before the order is known
      if (type == kBlockSectionHeader) {
        if (left() < 12) return fail("truncated section header");
        uint32_t bom = load_le32(b + 8);
        // The length can only be read once the byte order is known: a bad magic is the error.
        if (bom != kByteOrderMagic && load_be32(b + 8) != kByteOrderMagic)
          return fail("section header has a bad byte-order magic");
        swap_ = bom != kByteOrderMagic;
      } else if (swap_) {
        type = load_be32(b);
      }
      uint32_t len = u32(b + 4);
      if (len < 12 || (len & 3)) return fail("block has an invalid length " + std::to_string(len));
      if (len > left()) return fail("truncated block (" + std::to_string(len) + " bytes announced)");
      pos_ += len;
      switch (type) {
        case kBlockSectionHeader:
          if (!read_section_header(b, len)) return false;
          break;
        case kBlockInterface:
          if (!read_interface(b, len)) return false;
          break;
        case kBlockEnhancedPacket: {
          if (len < 32) return fail("enhanced packet block too short");
          uint32_t cap = u32(b + 20), orig = u32(b + 24);
          if (cap > len - 32) return fail("enhanced packet block is shorter than its packet");
          uint64_t ts = uint64_t(u32(b + 12)) << 32 | u32(b + 16);
          if (!packet_from(b + 28, u32(b + 8), ts, cap, orig, out)) return false;
          return true;
        }
        case kBlockSimplePacket: {
          if (len < 16) return fail("simple packet block too short");
          if (ifaces_.size() <= section_base_) return fail("simple packet block before any interface");
          uint32_t orig = u32(b + 8);
          uint32_t cap = orig;
          uint32_t snap = ifaces_[section_base_].snaplen;
          if (snap && cap > snap) cap = snap;
          if (cap > len - 16) cap = len - 16;
          // SPBs have no timestamp (Wireshark shows them with time 0): not measurable.
          if (!packet_from(b + 12, 0, 0, cap, orig, out)) return false;
          out.has_ts = false;
          return true;
        }
        case kBlockPacketObsolete: {
          if (len < 32) return fail("packet block too short");
          uint32_t cap = u32(b + 20), orig = u32(b + 24);
          if (cap > len - 32) return fail("packet block is shorter than its packet");
          uint64_t ts = uint64_t(u32(b + 12)) << 32 | u32(b + 16);
          if (!packet_from(b + 28, u16(b + 8), ts, cap, orig, out)) return false;
          return true;
        }
        case kBlockInterfaceStatistics:
          read_interface_statistics(b, len);
          break;
        case kBlockSystemdJournal:
        case kBlockCustom:
        case kBlockCustomNoCopy:
          // Wireshark numbers journal entries and custom blocks as frames too (records of their
          // own): keep frame numbers aligned with its.
          ++frame_;
          break;
        default:
          break;  // NRB, ISB, DSB, custom blocks: nothing to measure
      }
    }
    return false;
  }

  static constexpr size_t kMaxInterfaces = 65536;

  bool pcapng_;
  bool swap_ = false;
  bool ns_ = false;
  std::string path_;
  MappedFile file_;
  const uint8_t* base_ = nullptr;
  uint64_t size_ = 0;
  uint64_t pos_ = 0;
  uint64_t frame_ = 0;
  uint32_t section_base_ = 0;
  uint32_t sections_ = 0;  ///< section headers read
  std::vector<CaptureInterface> ifaces_;
  std::vector<TsScale> scales_;
  std::string error_;
};

}  // namespace

OpenStatus open_fast_capture(const std::string& path, std::unique_ptr<CaptureSource>& out,
                             std::string& error) {
  // Pipes and devices (`cat x | rdmatel analyze /dev/stdin`, <(zcat x)) cannot be mapped and
  // have no size: they are not "empty" but a stream for the sequential reader to try.
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))
    return OpenStatus::kNotRecognized;
  MappedFile probe;
  if (!probe.open(path, error)) return OpenStatus::kError;
  if (probe.size() == 0) {
    error = path + " is empty";
    return OpenStatus::kError;
  }
  if (probe.size() < 4) return OpenStatus::kNotRecognized;
  uint32_t le = load_le32(probe.data()), be = load_be32(probe.data());
  bool pcap = le == kPcapMagicUs || le == kPcapMagicNs || be == kPcapMagicUs || be == kPcapMagicNs;
  bool pcapng = le == kBlockSectionHeader;
  if (!pcap && !pcapng) return OpenStatus::kNotRecognized;
  auto reader = std::make_unique<FastCaptureReader>(pcapng);
  if (!reader->init(path, std::move(probe), error)) return OpenStatus::kError;
  out = std::move(reader);
  return OpenStatus::kOk;
}

}  // namespace rdmatel
