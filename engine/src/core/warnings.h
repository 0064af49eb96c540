// SPDX-License-Identifier: GPL-2.0-or-later
// Named, counted conditions (Zeek's "weirds"): a count per key always, the text once.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "rdmatel/sink.h"

namespace rdmatel {

class Warnings {
 public:
  explicit Warnings(const std::vector<RecordSink*>& sinks) : sinks_(sinks) {}

  /// Counts `key` (a static string naming the condition); the first time, `text()` is built and
  /// delivered to every sink.
  template <typename TextFn>
  void warn(std::string_view key, TextFn&& text) {
    uint64_t& n = counts_[key];
    if (n++ == 0) deliver(key, text());
  }
  uint64_t count(std::string_view key) const {
    auto it = counts_.find(key);
    return it == counts_.end() ? 0 : it->second;
  }

 private:
  void deliver(std::string_view key, std::string text) {
    Warning w{key, std::move(text)};
    for (RecordSink* s : sinks_) s->on_warning(w);
  }
  const std::vector<RecordSink*>& sinks_;
  std::unordered_map<std::string_view, uint64_t> counts_;
};

}  // namespace rdmatel
