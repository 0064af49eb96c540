// SPDX-License-Identifier: GPL-2.0-or-later
// A record kind's line writers made at compile time from its columns (a constexpr Column array):
// each column's getter is called directly and inlined, its type's formatting chosen once, its
// JSON key a constant. The writer that walks any schema's columns (writers.cpp) called a getter
// through a pointer, cleared a whole Value and switched on the type for each column: two thirds of
// `export messages`' output cost (about 3,200 instructions a record). The same characters, which
// bench/same_outputs.sh checks for every kind in both formats.
//
// A record file declares its columns constexpr and adds line_writers<kColumns>() to its schema.
#pragma once

#include <array>
#include <cstring>
#include <cstddef>
#include <string>
#include <string_view>
#include <utility>

#include "engine/src/output/record_line.h"
#include "rdmatel/schema.h"

namespace rdmatel {
namespace column_line {

// `"name":`, made at compile time.
template <const Column* Columns, size_t I>
struct Key {
  static constexpr std::string_view kName = Columns[I].name;
  static constexpr std::array<char, kName.size() + 3> kText = [] {
    std::array<char, kName.size() + 3> t{};
    t[0] = '"';
    for (size_t k = 0; k < kName.size(); ++k) t[k + 1] = kName[k];
    t[kName.size() + 1] = '"';
    t[kName.size() + 2] = ':';
    return t;
  }();
  static constexpr std::string_view kView{kText.data(), kText.size()};
};

// The widest a column can be written (a separator, its JSON key and its value), or 0 for the
// columns whose text has no bound (strings, point names): they make room for themselves.
template <const Column* Columns, size_t I, bool Json>
constexpr size_t max_width() {
  constexpr size_t value = value_width(Columns[I].type);
  if constexpr (value == 0) return 0;
  else return 1 + (Json ? Key<Columns, I>::kView.size() : 0) + value;
}

// Room for the bounded columns from I on and the line's end: made at the start of the line and
// again after each unbounded column.
template <const Column* Columns, size_t I, size_t N, bool Json>
constexpr size_t room_from() {
  if constexpr (I == N) return 2;  // "}\n"
  else return max_width<Columns, I, Json>() + room_from<Columns, I + 1, N, Json>();
}

// JSON: a present value with its key, an absent one left out. CSV: every column, an absent one
// empty.
template <const Column* Columns, size_t I, size_t N, bool Json>
[[gnu::always_inline]] inline void put_column(const void* record, Line& line, LineFormat& f, bool& first) {
  constexpr Column kColumn = Columns[I];
  Value v;
  const bool present = kColumn.get(record, v);
  if constexpr (max_width<Columns, I, Json>() == 0) {
    // Unbounded: written with checks, then room again for the rest.
    if (Json && !present) return;
    if (!first) line.put(',');
    if constexpr (Json) line.put(Key<Columns, I>::kView);
    first = false;
    if (present) put_value(line, f, kColumn.type, v);
    line.room(room_from<Columns, I + 1, N, Json>());
  } else {
    if (Json && !present) return;
    char* p = line.cursor();
    if (!first) *p++ = ',';
    if constexpr (Json) p = line_text::put(p, Key<Columns, I>::kView);
    first = false;
    if (present) p = put_bounded_value(p, f, kColumn.type, v);
    line.advance_to(p);
  }
}

template <const Column* Columns, bool Json, size_t... I>
size_t write_line(const void* record, LineFormat& f, std::index_sequence<I...>) {
  constexpr size_t n = sizeof...(I);
  Line line(f.buffer);
  line.room(1 + room_from<Columns, 0, n, Json>());
  if constexpr (Json) line.advance_to(line_text::put(line.cursor(), "{"));
  bool first = true;
  (put_column<Columns, I, n, Json>(record, line, f, first), ...);
  char* p = line.cursor();
  if constexpr (Json) *p++ = '}';
  *p++ = '\n';
  line.advance_to(p);
  return line.size();
}

template <const Column* Columns, size_t N, bool Json>
size_t write(const void* record, LineFormat& f) {
  return write_line<Columns, Json>(record, f, std::make_index_sequence<N>());
}

}  // namespace column_line

/// The line writers of a kind whose columns are `Columns` (a constexpr array).
template <const auto& Columns>
constexpr LineWriters line_writers() {
  constexpr size_t n = std::size(Columns);
  return {&column_line::write<Columns, n, true>, &column_line::write<Columns, n, false>};
}

}  // namespace rdmatel
