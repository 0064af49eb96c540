// SPDX-License-Identifier: GPL-2.0-or-later
// How the plugin tells tshark in one pass (no frame dissected again) from the GUI and tshark -2
// (plugin/frame_revisits.h): from the session's capture file, laid out as Wireshark 4.0 lays it
// out, and only when that layout checks out. Sessions built here as tshark builds its own.
#include <gtest/gtest.h>

#include <cfile.h>
#include <epan/epan.h>
#include <epan/packet_info.h>

#include "plugin/frame_revisits.h"

namespace rdmatel::plugin {
namespace {

// Wireshark 4.0's epan/epan.c: struct epan_session.
struct Session {
  packet_provider_data* prov;
  packet_provider_funcs funcs;
};

struct App {
  capture_file cf{};
  Session session{};
  packet_info pinfo{};
  App() {
    session.prov = &cf.provider;
    cf.epan = reinterpret_cast<epan_t*>(&session);
    pinfo.epan = cf.epan;
  }
};

TEST(FrameRevisits, AnApplicationKeepingNoFramesDissectsEachOnce) {
  App tshark_one_pass;
  EXPECT_FALSE(frames_may_be_dissected_again(&tshark_one_pass.pinfo));
}

TEST(FrameRevisits, AnApplicationKeepingFramesMayDissectThemAgain) {
  App kept;
  int sequence = 0;  // stands for the frame_data sequence: only whether there is one matters
  kept.cf.provider.frames = reinterpret_cast<frame_data_sequence*>(&sequence);
  EXPECT_TRUE(frames_may_be_dissected_again(&kept.pinfo));
}

TEST(FrameRevisits, ASessionNotLaidOutAsExpectedIsTakenToKeepFrames) {
  App app, other;
  app.cf.epan = other.cf.epan;  // the capture file around the provider names another session
  EXPECT_TRUE(frames_may_be_dissected_again(&app.pinfo));
  App no_provider;
  no_provider.session.prov = nullptr;
  EXPECT_TRUE(frames_may_be_dissected_again(&no_provider.pinfo));
  packet_info no_session{};
  EXPECT_TRUE(frames_may_be_dissected_again(&no_session));
  EXPECT_TRUE(frames_may_be_dissected_again(nullptr));
}

}  // namespace
}  // namespace rdmatel::plugin
