// SPDX-License-Identifier: GPL-2.0-or-later
#include "plugin/frame_revisits.h"

#include <cfile.h>

#include <cstddef>

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

}  // namespace

bool frames_may_be_dissected_again(const packet_info* pinfo) {
  if (!pinfo || !pinfo->epan) return true;
  const packet_provider_data* prov = reinterpret_cast<const EpanSessionStart*>(pinfo->epan)->prov;
  if (!prov) return true;
  const auto* cf =
      reinterpret_cast<const capture_file*>(reinterpret_cast<const char*>(prov) - offsetof(capture_file, provider));
  if (cf->epan != pinfo->epan) return true;  // not the layout expected: assume frames are kept
  return prov->frames != nullptr;
}

}  // namespace rdmatel::plugin
