// SPDX-License-Identifier: GPL-2.0-or-later
// The GUI decides which rows a display filter shows while its first pass dissects each frame,
// when rdmatel's results are still partial (a frame shows what was known as it went by). A
// display filter naming rdmatel fields would then hide frames whose final results match it:
// Wireshark opening a file with -Y 'rdmatel...' or with such a filter already applied, a live
// capture, a redissection. When rdmatel's first pass ends, the GUI applies the filter again, over
// the final results. Nothing happens in tshark (no GUI) or without such a filter.
#pragma once

namespace rdmatel::plugin {

/// Called when the first pass has ended: asks the GUI, once it has finished reading, to apply a
/// display filter that names rdmatel fields again.
void refilter_when_read();

}  // namespace rdmatel::plugin
