// SPDX-License-Identifier: GPL-2.0-or-later
#include "engine/util/ip_address.h"

#include <arpa/inet.h>

namespace rdmatel {

std::string IpAddress::to_string() const {
  char buf[INET6_ADDRSTRLEN] = {};
  inet_ntop(v6 ? AF_INET6 : AF_INET, bytes.data(), buf, sizeof buf);
  return buf;
}

bool IpAddress::parse(const std::string& text, IpAddress& out) {
  IpAddress a;
  if (inet_pton(AF_INET, text.c_str(), a.bytes.data()) == 1) {
    out = a;
    return true;
  }
  if (inet_pton(AF_INET6, text.c_str(), a.bytes.data()) == 1) {
    a.v6 = true;
    out = a;
    return true;
  }
  return false;
}

}  // namespace rdmatel
