// SPDX-License-Identifier: GPL-2.0-or-later
// "Open in Wireshark": the display filter that shows exactly one I/O's frames, and the command
// that opens the capture with it.
#pragma once

#include <QString>
#include <QStringList>
#include <vector>

#include "core/analysis.h"

namespace rdmatel::ui {

/// `frame.number in {5, 17, ...}`: the command, first data, READ REQUEST, first READ RESPONSE and
/// completion of the I/O at every point, repeated copies included (the engine's frame notes),
/// with the record's own command and completion frames. Empty when the I/O has no frame.
QString io_display_filter(const Analysis& a, const IoRecord& io);

/// The frame numbers of the filter, sorted, without repeats.
std::vector<uint64_t> io_frame_numbers(const Analysis& a, const IoRecord& io);

struct WiresharkCommand {
  QString program;  ///< "wireshark"
  QStringList arguments;
  /// Several files are one capture merged by timestamp (frame numbers count over the merge, as
  /// mergecap numbers them): they are merged into this file first.
  QStringList merge_inputs;
  /// mergecap's options: `-I none` when unnamed interfaces of several files (pcap files) are
  /// different points in the analysis, which mergecap would otherwise merge into one interface.
  QStringList merge_options;
  QString merged_file;
};

/// The command for `filter` on the analysis' captures.
WiresharkCommand wireshark_command(const Analysis& a, const QString& filter,
                                   const QString& temp_dir);

/// Merges (when needed) and starts Wireshark detached; false with a sentence in `error`.
bool open_in_wireshark(const WiresharkCommand& c, QString& error);

}  // namespace rdmatel::ui
