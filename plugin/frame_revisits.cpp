// SPDX-License-Identifier: GPL-2.0-or-later
#include "plugin/frame_revisits.h"

#include <cfile.h>

#include <algorithm>
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

namespace {
// Calls f(interface block) for each interface the file has described so far; false when the
// file cannot be told.
template <typename F>
bool for_each_interface(const capture_file* cf, F&& f) {
  if (!cf || !cf->provider.wth) return false;
  wtapng_iface_descriptions_t* idb = wtap_file_get_idb_info(cf->provider.wth);
  if (!idb) return false;
  for (guint i = 0; idb->interface_data && i < idb->interface_data->len; ++i)
    f(g_array_index(idb->interface_data, wtap_block_t, i));
  g_free(idb);  // the struct only: its interface_data is the file's (wtap.h)
  return true;
}
}  // namespace

std::optional<uint32_t> file_interface_count(const packet_info* pinfo) {
  uint32_t count = 0;
  if (!for_each_interface(capture_file_of(pinfo), [&](wtap_block_t) { ++count; })) return std::nullopt;
  return count;
}

const void* capture_file_of_frame(const packet_info* pinfo) { return capture_file_of(pinfo); }

std::vector<uint64_t> capture_drops(const void* file) {
  std::vector<uint64_t> out;
  for_each_interface(static_cast<const capture_file*>(file), [&](wtap_block_t iface) {
    uint64_t dropped = 0;
    const auto* mand = static_cast<const wtapng_if_descr_mandatory_t*>(wtap_block_get_mandatory_data(iface));
    for (guint k = 0; mand && mand->interface_statistics && k < mand->interface_statistics->len; ++k) {
      guint64 v = 0;
      if (wtap_block_get_uint64_option_value(g_array_index(mand->interface_statistics, wtap_block_t, k),
                                             OPT_ISB_IFDROP, &v) == WTAP_OPTTYPE_SUCCESS)
        dropped = std::max<uint64_t>(dropped, v);
    }
    out.push_back(dropped);
  });
  return out;
}

uint32_t frames_kept(const void* file) {
  const auto* cf = static_cast<const capture_file*>(file);
  return cf ? cf->count : 0;
}

}  // namespace rdmatel::plugin
