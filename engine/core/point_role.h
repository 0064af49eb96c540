// SPDX-License-Identifier: GPL-2.0-or-later
// Roles of observation points (SPEC §3).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace rdmatel {

enum class PointRole : uint8_t { kUnknown, kCompute, kFabric, kStorage };

const char* point_role_name(PointRole r);
/// Parses "compute", "storage", "fabric" (case-insensitive).
std::optional<PointRole> parse_point_role(std::string_view text);

}  // namespace rdmatel
