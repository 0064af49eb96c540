// SPDX-License-Identifier: GPL-2.0-or-later
// CaptureSource over libwiretap: every format Wireshark reads (gzip/zstd/lz4 compressed files,
// ERF, snoop, ...). Slower than the fast reader, so only used for what that one cannot read.
#pragma once

#include <memory>
#include <string>

#include "rdmatel/capture.h"

namespace rdmatel::wiretap {

/// Opens `path` with libwiretap ("-" is standard input); on failure returns nullptr and sets
/// `error` to a sentence. Fits Session::open's CaptureOpener.
std::unique_ptr<CaptureSource> open_wiretap_capture(const std::string& path, std::string& error);

}  // namespace rdmatel::wiretap
