// SPDX-License-Identifier: GPL-2.0-or-later
#include "adapters/wiretap/wiretap_source.h"

#include <glib.h>
#include <wiretap/wtap.h>
#include <wsutil/buffer.h>
#include <wsutil/wslog.h>

#include <algorithm>
#include <mutex>

namespace rdmatel::wiretap {
namespace {

static_assert(WTAP_ENCAP_ETHERNET == kWtapEncapEthernet && WTAP_ENCAP_RAW_IP == kWtapEncapRawIp &&
                  WTAP_ENCAP_NULL == kWtapEncapNull && WTAP_ENCAP_SLL == kWtapEncapSll &&
                  WTAP_ENCAP_RAW_IP4 == kWtapEncapRawIp4 && WTAP_ENCAP_RAW_IP6 == kWtapEncapRawIp6 &&
                  WTAP_ENCAP_SLL2 == kWtapEncapSll2 && WTAP_ENCAP_LOOP == kWtapEncapLoop,
              "wiretap encapsulation numbers changed");

std::string wtap_error(int err, gchar* err_info) {
  std::string s = wtap_strerror(err);
  if (err_info) {
    s += std::string(" (") + err_info + ")";
    g_free(err_info);
  }
  return s;
}

CaptureInterface interface_of(wtap_block_t idb) {
  CaptureInterface i;
  char* name = nullptr;
  // Wireshark names an interface by if_name, else by if_description.
  if (wtap_block_get_string_option_value(idb, OPT_IDB_NAME, &name) == WTAP_OPTTYPE_SUCCESS && name) i.name = name;
  else if (wtap_block_get_string_option_value(idb, OPT_IDB_DESCRIPTION, &name) == WTAP_OPTTYPE_SUCCESS && name) i.name = name;
  auto* m = static_cast<wtapng_if_descr_mandatory_t*>(wtap_block_get_mandatory_data(idb));
  i.link = link_type_from_wtap_encap(m->wtap_encap);
  i.snaplen = m->snap_len;
  guint64 speed = 0;
  if (wtap_block_get_uint64_option_value(idb, OPT_IDB_SPEED, &speed) == WTAP_OPTTYPE_SUCCESS) i.speed_bps = speed;
  return i;
}

class WiretapSource final : public CaptureSource {
 public:
  ~WiretapSource() override {
    if (wth_) wtap_close(wth_);
    wtap_rec_cleanup(&rec_);
    ws_buffer_free(&buf_);
  }

  bool open(const std::string& path, std::string& error) {
    static std::once_flag init;
    std::call_once(init, [] {
      ws_log_init("rdmatel", nullptr);
      ws_log_set_level(LOG_LEVEL_CRITICAL);  // wiretap's messages would drown ours
      wtap_init(FALSE);
    });
    wtap_rec_init(&rec_);
    ws_buffer_init(&buf_, 2048);
    int err = 0;
    gchar* err_info = nullptr;
    wth_ = wtap_open_offline(path.c_str(), WTAP_TYPE_AUTO, &err, &err_info, FALSE);
    if (!wth_) {
      if (err == WTAP_ERR_FILE_UNKNOWN_FORMAT) {
        if (err_info) g_free(err_info);
        error = path + " is not a capture file in a format rdmatel or Wireshark can read";
      } else {
        error = "cannot read " + path + ": " + wtap_error(err, err_info);
      }
      return false;
    }
    // The short name ("pcapng", "erf"): the descriptions read "Wireshark/... - pcapng".
    const char* name = wtap_file_type_subtype_name(wtap_file_type_subtype(wth_));
    format_ = name ? name : wtap_file_type_subtype_description(wtap_file_type_subtype(wth_));
    if (wtap_get_compression_type(wth_) != WTAP_UNCOMPRESSED)
      format_ += std::string(" (") + wtap_compression_type_description(wtap_get_compression_type(wth_)) + ")";
    int size_err = 0;
    gint64 sz = wtap_file_size(wth_, &size_err);
    size_ = sz > 0 ? uint64_t(sz) : 0;
    // Interfaces declared so far; more may come as the file is read (see next()). The blocks
    // belong to wiretap: read, never freed here.
    while (wtap_block_t idb = wtap_get_next_interface_description(wth_)) ifaces_.push_back(interface_of(idb));
    return true;
  }

  bool next(CapturedPacket& out) override {
    int err = 0;
    gchar* err_info = nullptr;
    gint64 offset = 0;
    for (;;) {
      // Releases the previous record's packet block (pcapng options), as tshark does per record.
      wtap_rec_reset(&rec_);
      if (!wtap_read(wth_, &rec_, &buf_, &err, &err_info, &offset)) {
        if (err != 0) error_ = wtap_error(err, err_info) + " after " + std::to_string(frame_) + " packets";
        read_statistics();
        return false;
      }
      while (wtap_block_t idb = wtap_get_next_interface_description(wth_)) ifaces_.push_back(interface_of(idb));
      ++frame_;  // Wireshark numbers every record as a frame
      if (rec_.rec_type != REC_TYPE_PACKET) continue;
      const auto& ph = rec_.rec_header.packet_header;
      out.frame = frame_;
      out.ts = saturating_ns(int64_t(rec_.ts.secs), rec_.ts.nsecs);
      out.has_ts = (rec_.presence_flags & WTAP_HAS_TS) != 0;
      out.interface = (rec_.presence_flags & WTAP_HAS_INTERFACE_ID) ? ph.interface_id : 0;
      out.cap_len = ph.caplen;
      out.wire_len = ph.len;
      out.data = ws_buffer_start_ptr(&buf_);
      if (out.interface >= ifaces_.size()) {
        // Formats without interface descriptions: one interface carrying the file's encapsulation.
        while (ifaces_.size() <= out.interface && ifaces_.size() < 65536)
          ifaces_.push_back(CaptureInterface{"", link_type_from_wtap_encap(ph.pkt_encap), 0, 0, 0, 0});
        if (out.interface >= ifaces_.size()) continue;
      }
      out.link = link_type_from_wtap_encap(ph.pkt_encap);
      return true;
    }
  }

  const std::vector<CaptureInterface>& interfaces() const override { return ifaces_; }
  const std::string& error() const override { return error_; }
  uint64_t position() const override { return wth_ ? uint64_t(wtap_read_so_far(wth_)) : 0; }

  // The packets the capture dropped per interface, from the interface statistics blocks wiretap
  // kept with each interface as it read them (usually at the end of a pcapng file).
  void read_statistics() {
    wtapng_iface_descriptions_t* info = wtap_file_get_idb_info(wth_);
    if (!info) return;
    for (guint i = 0; info->interface_data && i < info->interface_data->len && i < ifaces_.size(); ++i) {
      auto* m = static_cast<wtapng_if_descr_mandatory_t*>(
          wtap_block_get_mandatory_data(g_array_index(info->interface_data, wtap_block_t, i)));
      for (guint k = 0; m && m->interface_statistics && k < m->num_stat_entries && k < m->interface_statistics->len; ++k) {
        wtap_block_t isb = g_array_index(m->interface_statistics, wtap_block_t, k);
        guint64 dropped = 0, n = 0;
        if (wtap_block_get_uint64_option_value(isb, OPT_ISB_IFDROP, &n) == WTAP_OPTTYPE_SUCCESS) dropped += n;
        if (wtap_block_get_uint64_option_value(isb, OPT_ISB_OSDROP, &n) == WTAP_OPTTYPE_SUCCESS) dropped += n;
        ifaces_[i].capture_dropped = std::max<uint64_t>(ifaces_[i].capture_dropped, dropped);
      }
    }
    g_free(info);
  }
  uint64_t size() const override { return size_; }
  std::string format() const override { return format_; }

 private:
  wtap* wth_ = nullptr;
  wtap_rec rec_{};
  Buffer buf_{};
  uint64_t frame_ = 0;
  uint64_t size_ = 0;
  std::string format_;
  std::string error_;
  std::vector<CaptureInterface> ifaces_;
};

}  // namespace

std::unique_ptr<CaptureSource> open_wiretap_capture(const std::string& path, std::string& error) {
  auto src = std::make_unique<WiretapSource>();
  if (!src->open(path, error)) return nullptr;
  return src;
}

}  // namespace rdmatel::wiretap
