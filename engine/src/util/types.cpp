// SPDX-License-Identifier: GPL-2.0-or-later
#include "rdmatel/types.h"

#include <arpa/inet.h>

#include <cctype>
#include <cstring>

namespace rdmatel {

std::string IpAddress::to_string() const {
  char buf[INET6_ADDRSTRLEN];
  return std::string(buf, format(buf));
}

size_t IpAddress::format(char* out) const {
  if (!v6) {  // dotted quad by hand: inet_ntop formats IPv4 through sprintf (every exported record)
    char* p = out;
    for (int i = 0; i < 4; ++i) {
      unsigned b = bytes[i];
      if (i) *p++ = '.';
      if (b >= 100) *p++ = char('0' + b / 100);
      if (b >= 10) *p++ = char('0' + b / 10 % 10);
      *p++ = char('0' + b % 10);
    }
    *p = 0;
    return size_t(p - out);
  }
  if (!inet_ntop(AF_INET6, bytes.data(), out, INET6_ADDRSTRLEN)) out[0] = 0;
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
