// SPDX-License-Identifier: GPL-2.0-or-later
#include "rdmatel/sampling.h"

#include <algorithm>
#include <cstdlib>

namespace rdmatel {

std::optional<IpPrefix> IpPrefix::parse(std::string_view text) {
  IpPrefix p;
  const size_t slash = text.find('/');
  if (!IpAddress::parse(std::string(text.substr(0, slash)), p.net)) return std::nullopt;
  const unsigned max = p.net.v6 ? 128 : 32;
  p.bits = max;
  if (slash != std::string_view::npos) {
    const std::string bits(text.substr(slash + 1));
    char* end = nullptr;
    const long b = std::strtol(bits.c_str(), &end, 10);
    if (bits.empty() || *end || b < 0 || b > long(max)) return std::nullopt;
    p.bits = unsigned(b);
  }
  return p;
}

bool IpPrefix::contains(const IpAddress& a) const {
  if (a.v6 != net.v6) return false;
  for (unsigned i = 0; i < bits / 8; ++i)
    if (a.bytes[i] != net.bytes[i]) return false;
  if (bits % 8) {
    const uint8_t mask = uint8_t(0xFF << (8 - bits % 8));
    if ((a.bytes[bits / 8] & mask) != (net.bytes[bits / 8] & mask)) return false;
  }
  return true;
}

std::optional<KeyFlowRule> KeyFlowRule::parse(std::string_view text, std::string& error) {
  KeyFlowRule r;
  const size_t gt = text.find('>');
  auto src = IpPrefix::parse(text.substr(0, gt));
  if (!src) {
    error = "--key-flow takes SRC[>DST] with IP prefixes such as 10.1.0.0/16>10.2.0.1 (got '" + std::string(text) + "')";
    return std::nullopt;
  }
  r.src = *src;
  if (gt != std::string_view::npos) {
    r.dst = IpPrefix::parse(text.substr(gt + 1));
    if (!r.dst) {
      error = "--key-flow: '" + std::string(text.substr(gt + 1)) + "' is not an IP prefix";
      return std::nullopt;
    }
  }
  return r;
}

bool KeyFlowRule::matches(const IpAddress& a, const IpAddress& b) const {
  auto one_way = [&](const IpAddress& s, const IpAddress& d) { return src.contains(s) && (!dst || dst->contains(d)); };
  return one_way(a, b) || one_way(b, a);
}

bool polled_in(size_t point, int64_t k, size_t n, size_t points) {
  if (points == 0 || n == 0) return false;
  if (n >= points) return true;
  // Period k starts at point (k * n) mod points and takes the next n, wrapping around.
  const uint64_t start = uint64_t(k % int64_t(points) + int64_t(points)) % points * n % points;
  const uint64_t offset = (point + points - start) % points;
  return offset < n;
}

Sampling::Sampling(const std::vector<std::string>& key_flows, uint64_t poll_ports, DurationNs period)
    : ports_(poll_ports), period_(std::max<DurationNs>(1, period)) {
  std::string ignored;
  for (const std::string& k : key_flows)
    if (auto r = KeyFlowRule::parse(k, ignored)) rules_.push_back(*r);
}

bool Sampling::key_flow(const IpAddress& a, const IpAddress& b) const {
  for (const KeyFlowRule& r : rules_)
    if (r.matches(a, b)) return true;
  return false;
}

int64_t Sampling::period_index(TimeNs t) const { return t >= 0 ? t / period_ : (t - period_ + 1) / period_; }

std::optional<TimeNs> Sampling::period_start(TimeNs t) const {
  if (!polling()) return std::nullopt;
  return period_index(t) * period_;
}

bool Sampling::measured(bool io, PointId point, size_t points, TimeNs t, const IpAddress& a, const IpAddress& b) const {
  if (io && key_flow(a, b)) return true;
  if (!polling()) return !io || rules_.empty();
  return polled_in(point, period_index(t), ports_, points);
}

}  // namespace rdmatel
