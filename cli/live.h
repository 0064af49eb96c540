// SPDX-License-Identifier: GPL-2.0-or-later
// `rdmatel live`: the engine over unbounded sources (live interfaces, streams), records and a
// summary each period, metrics for Prometheus, rows for ClickHouse; stops cleanly on a signal.
#pragma once

#include "cli/options.h"

namespace rdmatel::cli {

/// Runs `rdmatel live`; returns the exit status.
int run_live(const Options& o);

}  // namespace rdmatel::cli
