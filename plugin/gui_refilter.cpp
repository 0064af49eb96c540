// SPDX-License-Identifier: GPL-2.0-or-later
#include "plugin/gui_refilter.h"

#include <cfile.h>
#include <epan/plugin_if.h>
#include <glib.h>

#include <string>

namespace rdmatel::plugin {
namespace {

struct FileLook {
  bool open = false;
  bool reading = false;  ///< the first pass (cf_read, a live capture) still runs
  std::string filter;    ///< the display filter applied to the packet list
};

// Runs inside the GUI (plugin_if_get_capture_file), on its thread.
void* look_at(capture_file* cf, void* data) {
  auto* look = static_cast<FileLook*>(data);
  look->open = cf->state != FILE_CLOSED;
  look->reading = cf->read_lock || cf->state == FILE_READ_IN_PROGRESS;
  look->filter = cf->dfilter ? cf->dfilter : "";
  return look;
}

// The GUI's capture file, when there is a GUI (tshark has none: false).
bool look_at_capture_file(FileLook& look) { return plugin_if_get_capture_file(look_at, &look) != nullptr; }

// rdmatel's items, or expert infos (which include rdmatel's).
bool names_rdmatel(const std::string& filter) {
  return filter.find("rdmatel") != std::string::npos || filter.find("_ws.expert") != std::string::npos;
}

constexpr guint kLookEveryMs = 200;

// A GLib timeout: Wireshark's Qt main loop runs GLib's sources. Waits while the file is read.
gboolean refilter(gpointer) {
  FileLook look;
  if (!look_at_capture_file(look) || !look.open) return G_SOURCE_REMOVE;
  if (look.reading) return G_SOURCE_CONTINUE;
  if (!names_rdmatel(look.filter)) return G_SOURCE_REMOVE;
  // Wireshark filters again only when the filter's text changed (cf_filter_packets); the same
  // filter with or without a trailing space is an equal filter in another text.
  const std::string& f = look.filter;
  const std::string again = f.back() == ' ' ? f.substr(0, f.size() - 1) : f + " ";
  plugin_if_apply_filter(again.c_str(), TRUE);
  return G_SOURCE_REMOVE;
}

}  // namespace

void refilter_when_read() {
  FileLook look;
  if (!look_at_capture_file(look) || !names_rdmatel(look.filter)) return;
  g_timeout_add(kLookEveryMs, refilter, nullptr);
}

}  // namespace rdmatel::plugin
