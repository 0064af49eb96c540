// SPDX-License-Identifier: GPL-2.0-or-later
#include "common.h"

#include <arpa/inet.h>

#include <cmath>

namespace synth {

double Rng::exp_mean(double mean) {
  double u = unit();
  if (u < 1e-300) u = 1e-300;
  return -std::log(u) * mean;
}

int64_t Rng::log_range(int64_t lo, int64_t hi) {
  if (hi <= lo) return lo;
  const double a = std::log(static_cast<double>(lo)), b = std::log(static_cast<double>(hi));
  const int64_t v = static_cast<int64_t>(std::exp(a + (b - a) * unit()));
  return v < lo ? lo : (v > hi ? hi : v);
}

// inet_ntop formatting, as the truth promises ("IP strings as inet_ntop prints them").
std::string ip_to_string(const uint8_t ip[16], bool v6) {
  char buf[INET6_ADDRSTRLEN] = {0};
  if (v6)
    inet_ntop(AF_INET6, ip, buf, sizeof buf);
  else
    inet_ntop(AF_INET, ip + 12, buf, sizeof buf);
  return buf;
}

}  // namespace synth
