// SPDX-License-Identifier: GPL-2.0-or-later
#include "rdmatel/types.h"

#include <arpa/inet.h>

#include <cctype>
#include <cstring>

namespace rdmatel {

std::string IpAddress::to_string() const {
  char buf[INET6_ADDRSTRLEN] = {};
  inet_ntop(v6 ? AF_INET6 : AF_INET, bytes.data(), buf, sizeof buf);
  return buf;
}

size_t IpAddress::format(char* out) const {
  if (!inet_ntop(v6 ? AF_INET6 : AF_INET, bytes.data(), out, INET6_ADDRSTRLEN)) out[0] = 0;
  return std::strlen(out);
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

const char* point_role_name(PointRole r) {
  switch (r) {
    case PointRole::kCompute: return "compute";
    case PointRole::kFabric: return "fabric";
    case PointRole::kStorage: return "storage";
    case PointRole::kUnknown: break;
  }
  return "unknown";
}

std::optional<PointRole> parse_point_role(std::string_view text) {
  std::string t;
  for (char c : text) t += char(std::tolower(static_cast<unsigned char>(c)));
  if (t == "compute") return PointRole::kCompute;
  if (t == "storage") return PointRole::kStorage;
  if (t == "fabric") return PointRole::kFabric;
  return std::nullopt;
}

}  // namespace rdmatel
