// SPDX-License-Identifier: GPL-2.0-or-later
// Which components run for a front end that reads some record kinds: worked out by hand from
// the specs (made-up ones, then the registry's own declarations).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "engine/src/core/component_selection.h"

namespace rdmatel {
namespace {

// Made-up kinds and components: A proposes to the core (always runs); B and C are pair-local;
// S1 is a stage reading B's records, S2 a stage reading S1's.
const RecordSchema kA{"a", "", {}}, kB{"b", "", {}}, kC{"c", "", {}}, kS1{"s1", "", {}}, kS2{"s2", "", {}};
const RecordSchema* const kOutA[] = {&kA};
const RecordSchema* const kOutB[] = {&kB};
const RecordSchema* const kOutC[] = {&kC};
const RecordSchema* const kOutS1[] = {&kS1};
const RecordSchema* const kOutS2[] = {&kS2};
const RecordSchema* const kInS1[] = {&kB};
const RecordSchema* const kInS2[] = {&kS1};
const ComponentSpec kSpecA{"A", kPacketAllRoce, kOutA, {}, {}};
const ComponentSpec kSpecB{"B", kPacketAllRoce, kOutB, {}, {}, {}, Sampled::kAll, /*pair_local=*/true};
const ComponentSpec kSpecC{"C", kPacketAllRoce, kOutC, {}, {}, {}, Sampled::kAll, /*pair_local=*/true};
const ComponentSpec kSpecS1{"S1", 0, kOutS1, {}, {}, kInS1};
const ComponentSpec kSpecS2{"S2", 0, kOutS2, {}, {}, kInS2};
const ComponentSpec* const kSpecs[] = {&kSpecA, &kSpecB, &kSpecC, &kSpecS1, &kSpecS2};

std::vector<bool> run_for(std::vector<std::string> records) { return components_to_run(kSpecs, records); }

TEST(ComponentSelection, EveryKindReadRunsEverything) {
  EXPECT_EQ(run_for({}), std::vector<bool>({true, true, true, true, true}));
}

TEST(ComponentSelection, ProposersAlwaysRunPairLocalOnlyForTheirRecords) {
  EXPECT_EQ(run_for({"a"}), std::vector<bool>({true, false, false, false, false}));
  EXPECT_EQ(run_for({"c"}), std::vector<bool>({true, false, true, false, false}));
  EXPECT_EQ(run_for({"b", "c"}), std::vector<bool>({true, true, true, false, false}));
  EXPECT_EQ(run_for({"nothing known"}), std::vector<bool>({true, false, false, false, false}));
}

TEST(ComponentSelection, AStageRunsWhatItReadsTransitively) {
  EXPECT_EQ(run_for({"s1"}), std::vector<bool>({true, true, false, true, false}));
  EXPECT_EQ(run_for({"s2"}), std::vector<bool>({true, true, false, true, true}));
}

// The registry: I/O quality, paths and offsets propose or read the core's facts and always run;
// messages and congestion are pair-local; alerts read I/Os and messages, the diagnosis I/Os,
// messages, congestion and paths.
std::vector<std::string> registry_run_for(std::vector<std::string> records) {
  std::vector<const ComponentSpec*> specs;
  for (const ComponentFactory& f : component_registry()) specs.push_back(f.spec);
  const std::vector<bool> run = components_to_run(specs, records);
  std::vector<std::string> names;
  for (size_t i = 0; i < specs.size(); ++i)
    if (run[i]) names.push_back(specs[i]->name);
  std::sort(names.begin(), names.end());
  return names;
}

TEST(ComponentSelection, TheRegistrysExportKinds) {
  using V = std::vector<std::string>;
  const V always = {"io_quality", "offsets", "paths"};
  EXPECT_EQ(registry_run_for({"io"}), always);
  EXPECT_EQ(registry_run_for({"io_points"}), always);
  EXPECT_EQ(registry_run_for({"paths"}), always);
  EXPECT_EQ(registry_run_for({"offsets"}), always);
  EXPECT_EQ(registry_run_for({"messages"}), V({"io_quality", "messages", "offsets", "paths"}));
  EXPECT_EQ(registry_run_for({"flows"}), V({"io_quality", "messages", "offsets", "paths"}));
  EXPECT_EQ(registry_run_for({"congestion"}), V({"congestion", "io_quality", "offsets", "paths"}));
  EXPECT_EQ(registry_run_for({"alerts"}), V({"alerts", "io_quality", "messages", "offsets", "paths"}));
  EXPECT_EQ(registry_run_for({"diagnosis"}),
            V({"congestion", "diagnosis", "io_quality", "messages", "offsets", "paths"}));
  EXPECT_EQ(registry_run_for({}), V({"alerts", "congestion", "diagnosis", "io_quality", "messages", "offsets", "paths"}));
}

}  // namespace
}  // namespace rdmatel
