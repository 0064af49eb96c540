// SPDX-License-Identifier: GPL-2.0-or-later
#include "plugin/frame_revisits.h"

#include <cfile.h>

#include <cstddef>

#include <wiretap/wtap.h>

namespace rdmatel::plugin {
namespace {

// A dissector sees the session (epan_t) as an opaque pointer. In Wireshark 4.0 (epan/epan.c,
// struct epan_session) its first member is the application's packet provider data, which tshark
// and Wireshark both give as their capture_file's `provider` (cfile.h, an installed header). The
// layout is checked before it is trusted: the capture_file around that provider must name this
// very session.
struct EpanSessionStart {
  packet_provider_data* prov;
};

// The capture file being dissected, or null when the layout is not the one expected.
const capture_file* capture_file_of(const packet_info* pinfo) {
  if (!pinfo || !pinfo->epan) return nullptr;
  const packet_provider_data* prov = reinterpret_cast<const EpanSessionStart*>(pinfo->epan)->prov;
  if (!prov) return nullptr;
  const auto* cf =
      reinterpret_cast<const capture_file*>(reinterpret_cast<const char*>(prov) - offsetof(capture_file, provider));
  return cf->epan == pinfo->epan ? cf : nullptr;
}

}  // namespace

bool frames_may_be_dissected_again(const packet_info* pinfo) {
  const capture_file* cf = capture_file_of(pinfo);
  if (!cf) return true;  // not the layout expected: assume frames are kept
  return cf->provider.frames != nullptr;
}

std::optional<FileInterfaces> file_interfaces(const packet_info* pinfo) {
  const capture_file* cf = capture_file_of(pinfo);
  if (!cf || !cf->provider.wth) return std::nullopt;
  wtapng_iface_descriptions_t* idb = wtap_file_get_idb_info(cf->provider.wth);
  if (!idb) return std::nullopt;
  FileInterfaces out;
  out.count = idb->interface_data ? idb->interface_data->len : 0;
  g_free(idb);  // the struct only: its interface_data is the file's (wtap.h)
  out.read_filter = cf->rfcode != nullptr;
  return out;
}

}  // namespace rdmatel::plugin
