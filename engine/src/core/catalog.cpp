// SPDX-License-Identifier: GPL-2.0-or-later
// What the registered components declare, gathered for front ends: record schemas by channel and
// note kinds by name.
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/src/core/component.h"
#include "rdmatel/schema.h"
#include "rdmatel/sink.h"

namespace rdmatel {
namespace {

struct Catalog {
  std::vector<const RecordSchema*> schemas;
  std::vector<std::string_view> notes;
  std::unordered_map<std::string_view, NoteKind> note_ids;
};

const Catalog& catalog() {
  static const Catalog c = [] {
    Catalog c;
    for (const ComponentFactory& f : component_registry()) {
      for (const RecordSchema* s : f.spec->outputs) c.schemas.push_back(s);
      for (const char* n : f.spec->notes) {
        c.note_ids.emplace(n, NoteKind(c.notes.size()));
        c.notes.push_back(n);
      }
    }
    return c;
  }();
  return c;
}

}  // namespace

std::span<const RecordSchema* const> all_schemas() { return catalog().schemas; }

const RecordSchema* find_schema(std::string_view channel) {
  for (const RecordSchema* s : catalog().schemas)
    if (channel == s->channel) return s;
  return nullptr;
}

NoteKind note_kind(std::string_view name) {
  const auto& ids = catalog().note_ids;
  auto it = ids.find(name);
  return it == ids.end() ? kNoNoteKind : it->second;
}

std::string_view note_kind_name(NoteKind kind) {
  const auto& notes = catalog().notes;
  return kind < notes.size() ? notes[kind] : std::string_view();
}

}  // namespace rdmatel
