// SPDX-License-Identifier: GPL-2.0-or-later
// Where an engine delivers what it produces: records, per-frame notes, and warnings.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "rdmatel/schema.h"

namespace rdmatel {

/// A kind of per-frame note, declared by the component that makes it ("io.command",
/// "msg.packet", ...). Front ends look kinds up by name (note_kind()).
using NoteKind = uint16_t;
inline constexpr NoteKind kNoNoteKind = 0xFFFF;

/// The id of a note kind by name, or kNoNoteKind when no component declares it.
NoteKind note_kind(std::string_view name);
/// The name of a note kind ("" when unknown).
std::string_view note_kind_name(NoteKind kind);

/// A fact about one frame, for front ends that annotate frames (the Wireshark plugin, the
/// analyzer): which record it belongs to and in what capacity.
/// (24 bytes: a front end that annotates frames keeps a few per frame of the capture.)
struct FrameNote {
  uint64_t frame = 0;
  uint64_t ref = 0;     ///< id of the record it belongs to (0 = none), in the kind's channel
  uint32_t detail = 0;  ///< kind-specific bits
  NoteKind kind = kNoNoteKind;
};
static_assert(sizeof(FrameNote) == 24);

/// Something that went wrong or a limit that was reached (Zeek's "weirds"): named, counted,
/// its text reported once.
struct Warning {
  std::string_view key;  ///< stable name of the condition, e.g. "max_outstanding_ios"
  std::string text;      ///< one sentence for users
};

class RecordSink {
 public:
  virtual ~RecordSink() = default;
  /// A record. Provisional records (first-pass snapshots) only reach sinks of an engine that
  /// makes frame notes; every record ends with exactly one final version.
  virtual void on_record(const Record&) {}
  /// Per-frame notes; only when the engine was asked for them (Settings frame_notes).
  virtual void on_note(const FrameNote&) {}
  /// A warning, once per key.
  virtual void on_warning(const Warning&) {}
};

}  // namespace rdmatel
