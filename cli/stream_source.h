// SPDX-License-Identifier: GPL-2.0-or-later
// A capture or stream read by `rdmatel live -r`: the usual readers (the fast reader for files,
// libwiretap for pipes and other formats) behind a stop flag and a periodic tick.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>

#include "rdmatel/capture.h"

namespace rdmatel::cli {

using TickFn = std::function<void()>;

/// Opens `path` ("-" is standard input); nullptr with one sentence in `error`. next() returns
/// false, with no error, once `stop` is set (a read interrupted by the signal is no error), and
/// calls `tick` about every 100 ms while packets flow.
std::unique_ptr<CaptureSource> open_stream(const std::string& path, const std::atomic<bool>& stop,
                                           TickFn tick, std::string& error);

}  // namespace rdmatel::cli
