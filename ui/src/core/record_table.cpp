// SPDX-License-Identifier: GPL-2.0-or-later
#include "core/record_table.h"

#include <string_view>

#include "rdmatel/names.h"

namespace rdmatel::ui {

std::vector<RecordCell> render_record(const RecordSchema& schema, const void* record,
                                      const PointNamer& names) {
  std::vector<RecordCell> row(schema.columns.size());
  for (size_t i = 0; i < schema.columns.size(); ++i) {
    const Column& c = schema.columns[i];
    Value v;
    RecordCell& cell = row[i];
    cell.present = c.get(record, v);
    if (!cell.present) continue;
    append_value(cell.text, c.type, v, names);
    switch (c.type) {
      case ValueType::kBool:
        cell.number = v.b ? 1 : 0;
        break;
      case ValueType::kUnsigned:
        cell.number = double(v.u);
        if (std::string_view(c.name).ends_with("qpn")) cell.display = qpn_text(uint32_t(v.u));
        break;
      case ValueType::kSigned:
        cell.number = double(v.i);
        break;
      case ValueType::kMicros:
        cell.number = ns_to_us(v.i);
        break;
      case ValueType::kRate:
      case ValueType::kRatio:
        cell.number = v.d;
        break;
      default:
        break;  // text: sorted as text
    }
  }
  return row;
}

std::string column_header(const char* name) {
  std::string_view n(name);
  struct Unit {
    std::string_view suffix, unit;
  };
  static constexpr Unit kUnits[] = {{"_us", " (µs)"}, {"_ns", " (ns)"}, {"_bps", " (bit/s)"}};
  for (const Unit& u : kUnits)
    if (n.size() > u.suffix.size() && n.substr(n.size() - u.suffix.size()) == u.suffix)
      return std::string(n.substr(0, n.size() - u.suffix.size())) + std::string(u.unit);
  return std::string(n);
}

}  // namespace rdmatel::ui
