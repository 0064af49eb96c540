// SPDX-License-Identifier: GPL-2.0-or-later
// Which components run for front ends that read only some record kinds (`rdmatel export io`):
// a component whose records nobody reads, neither the front end nor a record stage that runs, is
// left out when leaving it out changes nothing else: it proposes nothing to the core's shared
// facts (pair-local components; record stages, which see records only). The others always run:
// their pairings, roles and clock samples shape every component's results.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "engine/src/core/component.h"

namespace rdmatel {

/// By registry order, whether each of `specs` runs when front ends read the record kinds
/// `records` (channel names); empty: every kind is read, every component runs.
std::vector<bool> components_to_run(std::span<const ComponentSpec* const> specs, std::span<const std::string> records);

}  // namespace rdmatel
