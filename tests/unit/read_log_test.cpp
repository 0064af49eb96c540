// SPDX-License-Identifier: GPL-2.0-or-later
// The READs a messages stream remembers (engine/metrics/messages/read_log.h) against the
// plain list it replaces: a deque of the last 256 READs, ranges worked out for the MTU of the
// moment, searched newest first.
#include <gtest/gtest.h>

#include <cstdint>
#include <deque>
#include <random>

#include "engine/metrics/messages/read_log.h"
#include "engine/src/util/psn.h"

namespace rdmatel::messages {
namespace {

struct Read {
  uint32_t first, length;
  uint64_t frame;
};

uint32_t model_last(const Read& r, uint32_t mtu) {
  const uint32_t n = mtu && r.length ? (r.length + mtu - 1) / mtu : 1;
  return psn::add(r.first, int64_t(n) - 1);
}

TEST(ReadLog, RangesFollowTheMtu) {
  ReadLog log;
  log.ranges_for(0);
  log.add(100, 10000, 7);  // MTU unknown: one response
  EXPECT_TRUE(log.any_holds(100));
  EXPECT_FALSE(log.any_holds(101));
  log.ranges_for(4096);  // 10000 bytes: 3 responses, PSNs 100..102
  EXPECT_TRUE(log.any_holds(102));
  EXPECT_FALSE(log.any_holds(103));
  EXPECT_EQ(log.newest_holding(101), 0);
  EXPECT_EQ(log.last(0), 102u);
  EXPECT_EQ(log.frame(0), 7u);
}

TEST(ReadLog, RangesWrapAroundThePsnSpace) {
  ReadLog log;
  log.ranges_for(1024);
  log.add(0xFFFFFE, 4096, 1);  // 4 responses: 0xFFFFFE, 0xFFFFFF, 0, 1
  EXPECT_TRUE(log.any_holds(1));
  EXPECT_FALSE(log.any_holds(2));
  EXPECT_EQ(log.last(log.newest_holding(0)), 1u);
}

TEST(ReadLog, AgreesWithTheLastReadsNewestFirst) {
  ReadLog log;
  std::deque<Read> model;
  std::mt19937 rng(7);
  const uint32_t mtus[] = {0, 1024, 4096};
  uint32_t mtu = 0;
  for (int step = 0; step < 20000; ++step) {
    if (rng() % 500 == 0) mtu = mtus[rng() % 3];
    log.ranges_for(mtu);
    const uint32_t psn = uint32_t(rng() % 3000);
    if (rng() % 2) {
      Read r{psn, uint32_t(rng() % 20000), uint64_t(step)};
      log.add(r.first, r.length, r.frame);
      model.push_back(r);
      if (model.size() > ReadLog::kCapacity) model.pop_front();
      continue;
    }
    const Read* newest = nullptr;
    for (auto it = model.rbegin(); it != model.rend() && !newest; ++it)
      if (psn::in_range(psn, it->first, model_last(*it, mtu))) newest = &*it;
    const uint32_t other = uint32_t(rng() % 3000);
    bool both = false;
    for (const Read& r : model)
      both |= psn::in_range(psn, r.first, model_last(r, mtu)) && psn::in_range(other, r.first, model_last(r, mtu));
    ASSERT_EQ(log.one_holds_both(psn, other), both) << step;
    const long got = log.newest_holding(psn);
    ASSERT_EQ(got >= 0, newest != nullptr) << step;
    ASSERT_EQ(log.any_holds(psn), newest != nullptr) << step;
    if (!newest) continue;
    ASSERT_EQ(log.frame(got), newest->frame) << step;
    ASSERT_EQ(log.first(got), newest->first) << step;
    ASSERT_EQ(log.last(got), model_last(*newest, mtu)) << step;
  }
}


TEST(ReadLog, AgreesWhileReadsMarchAcrossTheWrap) {
  // READ REQUESTs newer and newer, as a requester issues them, across the end of the PSN space:
  // most PSNs asked about lie past every READ (a new request), some among them, some far away.
  ReadLog log;
  std::deque<Read> model;
  std::mt19937 rng(13);
  const uint32_t mtus[] = {0, 256, 4096};
  uint32_t mtu = 4096, next = 0xFFF000;
  log.ranges_for(mtu);
  for (int step = 0; step < 30000; ++step) {
    if (rng() % 2000 == 0) log.ranges_for(mtu = mtus[rng() % 3]);
    if (rng() % 3 == 0) {
      Read r{next, uint32_t(rng() % 40000), uint64_t(step)};
      log.add(r.first, r.length, r.frame);
      model.push_back(r);
      if (model.size() > ReadLog::kCapacity) model.pop_front();
      next = psn::add(next, 1 + rng() % 200);
      continue;
    }
    const uint32_t r = rng() % 10;
    // A new request's PSN, one among the READs, or any.
    const uint32_t psn = r < 5   ? psn::add(next, int64_t(rng() % 64))
                         : r < 9 ? psn::add(next, -int64_t(rng() % 30000))
                                 : uint32_t(rng() % (1u << 24));
    const uint32_t other = psn::add(psn, int64_t(rng() % 9) - 4);
    const Read* newest = nullptr;
    bool both = false;
    for (auto it = model.rbegin(); it != model.rend(); ++it) {
      const bool a = psn::in_range(psn, it->first, model_last(*it, mtu));
      if (a && !newest) newest = &*it;
      both |= a && psn::in_range(other, it->first, model_last(*it, mtu));
    }
    ASSERT_EQ(log.any_holds(psn), newest != nullptr) << step;
    ASSERT_EQ(log.one_holds_both(psn, other), both) << step;
    const long got = log.newest_holding(psn);
    ASSERT_EQ(got >= 0, newest != nullptr) << step;
    if (newest) {
      ASSERT_EQ(log.frame(got), newest->frame) << step;
    }
  }
}

}  // namespace
}  // namespace rdmatel::messages
