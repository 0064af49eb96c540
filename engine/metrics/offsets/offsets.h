// SPDX-License-Identifier: GPL-2.0-or-later
// offsets: the clock relations the core learned from packets seen at two points (NTP-style:
// the offset lies between the closest differences of the two directions), reported per pair
// at the end of the capture.
#pragma once

#include "engine/src/core/component.h"

namespace rdmatel::offsets {

extern const ComponentSpec kSpec;

class Offsets final : public Component {
 public:
  explicit Offsets(Ctx&) {}
  void on_packet(const Packet&, Ctx&) override {}
  void on_advance(PointId, Ctx&) override {}
  void finish(Ctx& ctx) override;
};

}  // namespace rdmatel::offsets
