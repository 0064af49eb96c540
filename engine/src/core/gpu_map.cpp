// SPDX-License-Identifier: GPL-2.0-or-later
#include "rdmatel/gpu_map.h"

#include <deque>
#include <fstream>
#include <mutex>
#include <unordered_set>
#include <vector>

namespace rdmatel {
namespace {

// Longest name accepted: a GPU, node or job name is an identifier, not a document.
constexpr size_t kMaxName = 128;

const char* intern(std::string_view s) {
  static std::mutex mu;
  static std::unordered_set<std::string> pool;  // nodes never move: c_str() stays valid
  std::lock_guard<std::mutex> lock(mu);
  return pool.emplace(s).first->c_str();
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r' || s.back() == '\n')) s.remove_suffix(1);
  return s;
}

std::vector<std::string_view> split(std::string_view line) {
  std::vector<std::string_view> out;
  size_t start = 0;
  for (size_t i = 0; i <= line.size(); ++i)
    if (i == line.size() || line[i] == ',') {
      out.push_back(trim(line.substr(start, i - start)));
      start = i + 1;
    }
  return out;
}

}  // namespace

bool is_gpu_map_header(std::string_view line) {
  std::vector<std::string_view> f = split(line);
  auto is = [](std::string_view a, const char* b) {
    std::string_view w(b);
    if (a.size() != w.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
      if ((a[i] | 0x20) != w[i]) return false;
    return true;
  };
  return (f.size() == 3 || f.size() == 4) && is(f[0], "ip") && is(f[1], "gpu") && is(f[2], "node") &&
         (f.size() == 3 || is(f[3], "job"));
}

bool GpuMap::add(std::string_view line, std::string& error) {
  std::vector<std::string_view> f = split(line);
  if (f.size() < 3 || f.size() > 4) {
    error = "a GPU binding is IP,GPU,NODE or IP,GPU,NODE,JOB (got '" + std::string(trim(line)) + "')";
    return false;
  }
  IpAddress ip;
  if (!IpAddress::parse(std::string(f[0]), ip)) {
    error = "'" + std::string(f[0]) + "' is not an IP address";
    return false;
  }
  for (size_t i = 1; i < f.size(); ++i) {
    if (f[i].empty() || f[i].size() > kMaxName) {
      error = "GPU, node and job names are 1 to " + std::to_string(kMaxName) + " characters (line '" +
              std::string(trim(line)) + "')";
      return false;
    }
  }
  if (bindings_.count(ip)) {
    error = std::string(f[0]) + " is bound twice";
    return false;
  }
  GpuBinding b;
  b.gpu = intern(f[1]);
  b.node = intern(f[2]);
  if (f.size() == 4) b.job = intern(f[3]);
  bindings_.emplace(ip, b);
  return true;
}

bool GpuMap::load_file(const std::string& path, std::string& error, std::vector<std::string>* lines) {
  std::ifstream in(path);
  if (!in) {
    error = "cannot read the GPU map " + path;
    return false;
  }
  std::string line;
  for (size_t n = 1; std::getline(in, line); ++n) {
    std::string_view t = trim(line);
    if (t.empty() || t.front() == '#' || (n == 1 && is_gpu_map_header(t))) continue;
    if (!add(t, error)) {
      error = path + " line " + std::to_string(n) + ": " + error;
      return false;
    }
    if (lines) lines->emplace_back(t);
  }
  return true;
}

}  // namespace rdmatel
