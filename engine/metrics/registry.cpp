// SPDX-License-Identifier: GPL-2.0-or-later
// Every metric component, in one list: add a component's folder and one line here, and the
// engine runs it, its settings become CLI options and Wireshark preferences, its records an
// export kind.
#include "engine/metrics/alerts/alerts.h"
#include "engine/metrics/congestion/congestion.h"
#include "engine/metrics/diagnosis/diagnosis.h"
#include "engine/metrics/io_quality/io_quality.h"
#include "engine/metrics/messages/messages.h"
#include "engine/metrics/offsets/offsets.h"
#include "engine/metrics/paths/paths.h"

namespace rdmatel {
namespace {

template <typename T>
std::unique_ptr<Component> make(Ctx& ctx) {
  return std::make_unique<T>(ctx);
}

const ComponentFactory kRegistry[] = {
    {&io_quality::kSpec, make<io_quality::IoQuality>},
    {&messages::kSpec, make<messages::Messages>},
    {&congestion::kSpec, make<congestion::Congestion>},
    {&paths::kSpec, make<paths::Paths>},
    {&offsets::kSpec, make<offsets::Offsets>},  // reports what the others learned
    {&alerts::kSpec, make<alerts::Alerts>},           // record stages: after their producers
    {&diagnosis::kSpec, make<diagnosis::Diagnosis>},
};

}  // namespace

std::span<const ComponentFactory> component_registry() { return kRegistry; }

}  // namespace rdmatel
