// SPDX-License-Identifier: GPL-2.0-or-later
// Engine::release_measurement_state (after finish): the memory the components held is given back,
// and everything a front end still reads answers as before it: the points (names, roles, packet
// counts, endpoints), the roles for each pair of ends, the sending QPNs of the flows, the stats.
// The Wireshark plugin calls it at the end of the first pass and reads these for the rest of a
// GUI session.
#include <gtest/gtest.h>
#include <malloc.h>

#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "rdmatel/records.h"
#include "rdmatel/session.h"

namespace rdmatel {
namespace {

// The ends of every I/O and message delivered.
class Ends final : public RecordSink {
 public:
  std::set<std::pair<IpAddress, IpAddress>> io_ends;
  std::set<std::tuple<IpAddress, IpAddress, uint32_t>> message_flows;
  std::vector<std::string> warnings;

  void on_record(const Record& r) override {
    if (r.is(kIoSchema)) {
      const IoRecord& io = r.as<IoRecord>();
      io_ends.emplace(io.host, io.storage);
    } else if (r.is(kMessageSchema)) {
      const MessageRecord& m = r.as<MessageRecord>();
      message_flows.emplace(m.src, m.dst, m.dst_qpn);
    }
  }
  void on_note(const FrameNote&) override {}
  void on_warning(const Warning& w) override { warnings.emplace_back(w.key); }
};

// What a front end reads of a finished engine, as text.
std::vector<std::string> readable(const Engine& e, const Ends& ends) {
  std::vector<std::string> out;
  for (PointId p = 0; p < e.point_count(); ++p) {
    const PointInfo info = e.point(p);
    out.push_back("point " + e.point_name(p) + " " + info.name + " role=" + std::to_string(int(info.role)) +
                  " packets=" + std::to_string(info.packets) + " compute=" + std::to_string(info.compute_endpoints) +
                  " storage=" + std::to_string(info.storage_endpoints));
    for (const auto& [host, storage] : ends.io_ends)
      out.push_back("role " + std::to_string(p) + " " + host.to_string() + " " + storage.to_string() + " " +
                    std::to_string(int(e.role_for(p, host, storage))));
  }
  for (const auto& [src, dst, qpn] : ends.message_flows) {
    const std::optional<uint32_t> sending = e.sending_qpn(src, dst, qpn);
    out.push_back("flow " + src.to_string() + " " + dst.to_string() + " " + std::to_string(qpn) + " sending=" +
                  (sending ? std::to_string(*sending) : "-"));
  }
  const EngineStats& s = e.stats();
  out.push_back("stats frames=" + std::to_string(s.frames) + " roce=" + std::to_string(s.roce) +
                " malformed=" + std::to_string(s.malformed));
  return out;
}

size_t heap_in_use() {
  const struct mallinfo2 m = mallinfo2();
  return m.uordblks + m.hblkhd;
}

const std::string kSamples = std::string(RDMATEL_SOURCE_DIR) + "/samples/";

TEST(EngineRelease, FreesTheComponentsStateAndAnswersAsBefore) {
  for (const char* capture : {"mixed.pcapng", "write_flows.pcapng", "nvme_3point.pcapng"}) {
    SCOPED_TRACE(capture);
    Settings s;
    s.frame_notes = true;  // as the plugin runs it
    std::string error;
    ASSERT_TRUE(s.set("threads", "1", error)) << error;
    auto session = Session::open({kSamples + capture}, s, nullptr, error);
    ASSERT_TRUE(session) << error;
    Ends ends;
    session->subscribe(ends);
    session->run();
    Engine& e = session->engine();
    ASSERT_TRUE(e.finished());
    ASSERT_FALSE(ends.io_ends.empty() && ends.message_flows.empty());
    const std::vector<std::string> before = readable(e, ends);

    const size_t in_use = heap_in_use();
    e.release_measurement_state();
    const size_t released = in_use - std::min(in_use, heap_in_use());
#if !defined(__SANITIZE_ADDRESS__)
    // The components' tables and pools: hundreds of KB even on a small capture.
    EXPECT_GT(released, size_t(100) << 10) << "released " << released << " of " << in_use << " bytes";
#endif
    std::printf("%s: %zu of %zu heap bytes released\n", capture, released, in_use);
    EXPECT_EQ(before, readable(e, ends));

    // Nothing more is measured, and nothing breaks: a frame is ignored, a point can still be
    // declared (its warnings reach the front ends only), release again does nothing.
    const uint8_t frame[64] = {};
    e.push(FrameIn{1, 1, true, 0, LinkType::kEthernet, frame, sizeof frame, sizeof frame});
    EXPECT_NE(e.declare_point("after-release"), kNoPoint);
    e.release_measurement_state();
    e.finish();
    EXPECT_EQ(e.point_name(PointId(e.point_count() - 1)), "after-release");
  }
}

// Before finish it does nothing: the engine goes on measuring, and delivers what it would have.
TEST(EngineRelease, DoesNothingBeforeFinish) {
  Settings s;
  std::string error;
  auto plain = Session::open({kSamples + "mixed.pcapng"}, s, nullptr, error);
  ASSERT_TRUE(plain) << error;
  Ends without;
  plain->subscribe(without);
  plain->run();
  ASSERT_FALSE(without.io_ends.empty());
  ASSERT_FALSE(without.message_flows.empty());

  auto released = Session::open({kSamples + "mixed.pcapng"}, s, nullptr, error);
  ASSERT_TRUE(released) << error;
  Ends with;
  released->subscribe(with);
  released->engine().release_measurement_state();  // before any frame
  released->run();
  EXPECT_EQ(without.io_ends, with.io_ends);
  EXPECT_EQ(without.message_flows, with.message_flows);
  EXPECT_EQ(without.warnings, with.warnings);
}

}  // namespace
}  // namespace rdmatel
