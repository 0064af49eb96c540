// SPDX-License-Identifier: GPL-2.0-or-later
// Whether Wireshark may dissect a frame of this capture again. The GUI and tshark -2 keep a record
// of every frame (the capture file's frame_data sequence) and dissect frames again: clicks,
// filters, statistics, the second pass. tshark in one pass (-r without -2, a live capture in
// tshark) keeps none: each frame is dissected once, as it is read, so what the plugin learns about
// a frame after that is never shown, and keeping it only grows memory with the capture
// (CaptureState::frames_shown_once). And which interfaces the capture file describes
// (CaptureState::declare_file_interfaces).
#pragma once

#include <epan/packet_info.h>

#include <cstdint>
#include <optional>
#include <vector>

namespace rdmatel::plugin {

/// False only when the application is seen to keep no frames (tshark in one pass); true when it
/// keeps them, and when that cannot be told.
bool frames_may_be_dissected_again(const packet_info* pinfo);

/// How many interfaces the capture file has described so far (the pcapng IDBs read before the
/// frame being dissected: at the first frame, those of the file's start). Nothing when that cannot
/// be told.
std::optional<uint32_t> file_interface_count(const packet_info* pinfo);

/// The capture file a frame is dissected from, for capture_drops() at the end of the first pass
/// (which has no frame); null when that cannot be told.
const void* capture_file_of_frame(const packet_info* pinfo);
/// Per interface of that file (read to its end): the packets its capture dropped, as the pcapng
/// interface statistics say (isb_ifdrop; the largest of its statistics blocks), 0 without them.
std::vector<uint64_t> capture_drops(const void* file);
/// How many frames that file's first pass kept (a read filter drops records: tshark -2 -R, the
/// GUI's), 0 when that cannot be told.
uint32_t frames_kept(const void* file);

}  // namespace rdmatel::plugin
