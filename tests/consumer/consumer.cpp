// SPDX-License-Identifier: GPL-2.0-or-later
// Exports the I/O records of the captures given, as `rdmatel export io` does, through the public
// engine API only.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <rdmatel/session.h>
#include <rdmatel/writers.h>

int main(int argc, char** argv) {
  std::vector<std::string> paths(argv + 1, argv + argc);
  std::string error;
  rdmatel::Settings settings;
  auto session = rdmatel::Session::open(paths, settings, nullptr, error);
  if (!session) {
    std::fprintf(stderr, "consumer: %s\n", error.c_str());
    return 3;
  }
  const rdmatel::Engine& engine = session->engine();
  rdmatel::RecordWriter writer(stdout, rdmatel::RecordFormat::kJsonl, rdmatel::kIoSchema,
                               [&](rdmatel::PointId id) -> const std::string& { return engine.point_name(id); });
  session->subscribe(writer);
  rdmatel::SessionSummary summary = session->run();
  return summary.errors.empty() ? 0 : 3;
}
