// SPDX-License-Identifier: GPL-2.0-or-later
// GPU binding (SPEC §7): which GPU, node and AI job an IP address belongs to. A GPU may have
// several IPs (one per NIC); a job is a set of GPUs. Given as CSV `ip,gpu,node[,job]` (the
// `gpu` setting's items, a `--gpu-map FILE`, the Wireshark UAT).
#pragma once

#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "rdmatel/types.h"

namespace rdmatel {

/// Names are interned for the life of the process: records that carry them stay valid after
/// the engine that made them is gone.
struct GpuBinding {
  const char* gpu = nullptr;
  const char* node = nullptr;
  const char* job = nullptr;  ///< null when the line gave none
};

class GpuMap {
 public:
  /// Adds one `ip,gpu,node[,job]` line. False with one sentence in `error` when it is not one
  /// (bad address, empty name, too many fields, the IP bound twice).
  bool add(std::string_view line, std::string& error);
  /// Reads a CSV file: one binding per line; a first line `ip,gpu,node[,job]`, blank lines and
  /// lines starting with '#' are skipped. Errors name the file and line.
  /// `lines` (may be null) receives each binding line as given, for a Settings `gpu` list.
  bool load_file(const std::string& path, std::string& error, std::vector<std::string>* lines = nullptr);

  const GpuBinding* find(const IpAddress& ip) const {
    if (bindings_.empty()) return nullptr;
    auto it = bindings_.find(ip);
    return it == bindings_.end() ? nullptr : &it->second;
  }
  bool empty() const { return bindings_.empty(); }
  size_t size() const { return bindings_.size(); }

 private:
  std::unordered_map<IpAddress, GpuBinding> bindings_;
};

/// Whether `line` is the CSV header `ip,gpu,node[,job]` (case and spaces aside).
bool is_gpu_map_header(std::string_view line);

}  // namespace rdmatel
