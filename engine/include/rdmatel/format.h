// SPDX-License-Identifier: GPL-2.0-or-later
// Number formatting shared by reports, exports and front ends.
#pragma once

#include <string>

#include "rdmatel/types.h"

namespace rdmatel {

/// ns as µs with exactly three decimals, without floating point ("-12.345").
std::string format_us(DurationNs ns);
/// A mean in ns as µs with three decimals (rounded).
std::string format_us(double ns);
/// Appends format_us(ns) to `out`.
void append_us(std::string& out, DurationNs ns);

}  // namespace rdmatel
