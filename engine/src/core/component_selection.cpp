// SPDX-License-Identifier: GPL-2.0-or-later
#include "engine/src/core/component_selection.h"

#include <algorithm>
#include <string_view>

namespace rdmatel {

std::vector<bool> components_to_run(std::span<const ComponentSpec* const> specs, std::span<const std::string> records) {
  std::vector<bool> run(specs.size(), true);
  if (records.empty()) return run;
  std::vector<std::string_view> read(records.begin(), records.end());
  auto is_read = [&](const RecordSchema* s) { return std::find(read.begin(), read.end(), s->channel) != read.end(); };
  // Leaving out one that proposes nothing changes no other component's results.
  for (size_t i = 0; i < specs.size(); ++i) run[i] = !specs[i]->proposes_nothing();
  // A stage that runs reads its inputs: their makers run too (and, stages, read theirs).
  for (bool grew = true; grew;) {
    grew = false;
    for (size_t i = 0; i < specs.size(); ++i) {
      if (!run[i] && std::any_of(specs[i]->outputs.begin(), specs[i]->outputs.end(), is_read)) run[i] = grew = true;
      if (!run[i]) continue;
      for (const RecordSchema* in : specs[i]->inputs)
        if (!is_read(in)) {
          read.push_back(in->channel);
          grew = true;
        }
    }
  }
  return run;
}

}  // namespace rdmatel
