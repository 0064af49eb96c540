// SPDX-License-Identifier: GPL-2.0-or-later
// Number formatting shared by reports and exports.
#pragma once

#include <cstdint>
#include <string>

#include "engine/util/time.h"

namespace rdmatel {

/// ns as µs with exactly three decimals, without floating point ("-12.345").
std::string format_us(DurationNs ns);
/// A mean in ns as µs with three decimals (rounded).
std::string format_us(double ns);

}  // namespace rdmatel
