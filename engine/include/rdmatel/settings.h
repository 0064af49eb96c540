// SPDX-License-Identifier: GPL-2.0-or-later
// Settings, declared once (name, type, unit, default, bounds, help) by the engine core and by
// each metric component, and rendered from that one table as CLI options, Wireshark preferences
// and analyzer settings. A Settings object holds one value per declared setting.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "rdmatel/types.h"

namespace rdmatel {

enum class SettingType : uint8_t {
  kDuration,  ///< a time given in `unit` ("s", "ms" or "us"), held in ns
  kCount,     ///< a non-negative integer
  kList,      ///< repeatable text values (e.g. --point NAME=ROLE)
  kFlag,      ///< on / off
};

struct SettingSpec {
  const char* name;      ///< canonical name: Wireshark preference "rdmatel.NAME", CLI "--NAME" with '-' for '_'
  SettingType type;
  const char* unit;      ///< kDuration: "s", "ms" or "us"; otherwise ""
  const char* fallback;  ///< default, as a user would type it ("10", "250", "1048576"); "" for lists
  double min, max;       ///< bounds of a duration (in its unit) or count
  const char* metavar;   ///< placeholder in --help ("SECONDS", "N", "NAME=ROLE")
  const char* help;      ///< one or two sentences
  /// Where the setting is offered: the CLI, the Wireshark preferences, both (the default).
  bool cli = true;
  bool preference = true;
};

/// Every declared setting: the core's, then each component's, in registry order.
std::span<const SettingSpec* const> setting_specs();
/// The spec of a setting, or nullptr.
const SettingSpec* find_setting(std::string_view name);

/// Values of every declared setting (defaults until set).
class Settings {
 public:
  Settings();

  /// Parses `text` for setting `name` (in its unit) and stores it; a list setting appends.
  /// Returns false with one sentence in `error` when the name is unknown or the value invalid.
  bool set(std::string_view name, std::string_view text, std::string& error);
  /// Restores the default of one setting (a list becomes empty).
  void reset(std::string_view name);

  DurationNs duration(std::string_view name) const;
  uint64_t count(std::string_view name) const;
  bool flag(std::string_view name) const;
  const std::vector<std::string>& list(std::string_view name) const;

  /// Whether the front end wants per-frame notes (the Wireshark plugin, the analyzer).
  bool frame_notes = false;
  /// The record kinds the front end reads (channels: "io", "messages", ...); empty: every kind.
  /// Components that make none of them, for the front end or a record stage, and whose absence
  /// changes nothing else, do not run (`export io` runs no messages component): their warnings
  /// do not show either.
  std::vector<std::string> records;

 private:
  struct Slot {
    int64_t number = 0;  ///< ns for durations, the count, 0/1 for flags
    std::vector<std::string> items;
  };
  const Slot& slot(std::string_view name, SettingType type) const;
  std::vector<Slot> values_;
};

}  // namespace rdmatel
