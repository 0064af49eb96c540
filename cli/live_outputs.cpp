// SPDX-License-Identifier: GPL-2.0-or-later
#include "cli/live_outputs.h"

namespace rdmatel::prometheus {
class Exporter {};
}
namespace rdmatel::clickhouse {
class Inserter {};
}

namespace rdmatel::cli {

LiveOutputs::LiveOutputs() = default;
LiveOutputs::~LiveOutputs() = default;

bool LiveOutputs::open(const LiveOptions&, const Engine&, PointNamer, std::string&) { return true; }
void LiveOutputs::subscribe(Session&) {}
void LiveOutputs::tick(const Engine&, uint64_t, uint64_t) {}
bool LiveOutputs::finish(bool) { return true; }

}  // namespace rdmatel::cli
