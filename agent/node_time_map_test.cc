#include "agent/node_time_map.h"

#include <time.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

#include "gtest/gtest.h"

namespace meridian {
namespace {

constexpr int64_t kS = 1000000000;
constexpr int64_t kWall = 1700000000000000000;  // November 2023

// Returns samples[0], samples[1], ... and then the last one again; more
// can be pushed to `samples` as the test goes.
std::function<TimeSample()> Replay(
    std::shared_ptr<std::vector<TimeSample>> samples) {
  auto next = std::make_shared<size_t>(0);
  return [samples, next] {
    const size_t i = std::min(*next, samples->size() - 1);
    *next = i + 1;
    return (*samples)[i];
  };
}

// Ticks of 2 ns: tick 0 is monotonic 0, wall kWall.
std::shared_ptr<std::vector<TimeSample>> TwoNsTicks() {
  return std::make_shared<std::vector<TimeSample>>(
      std::vector<TimeSample>{{0, 0, kWall, 50}, {kS / 2, kS, kWall + kS, 50}});
}

TEST(NodeTimeMapTest, TicksAndMonotonicGoThroughOneMap) {
  auto samples = TwoNsTicks();
  NodeTimeMap time(Replay(samples));
  EXPECT_EQ(time.ticks_map().rate(), 2.0);
  EXPECT_EQ(time.wall_map().rate(), 1.0);
  EXPECT_EQ(time.ToWallNs(kS / 2 + 300, true), kWall + kS + 600);
  EXPECT_EQ(time.ToWallNs(kS + 600, false), kWall + kS + 600);
  EXPECT_EQ(time.ToWallNs(0, true), kWall);
}

// The bug this map fixed: each drain mapped with its own offset, so a
// record read one drain later could move by the clock reads' jitter. Now a
// sample that puts the node's clock 300 us ahead moves no time already
// reached, and later ones only by the slew.
TEST(NodeTimeMapTest, ASampleOffByMicrosecondsMovesNothingAlreadyMapped) {
  auto samples = TwoNsTicks();
  NodeTimeMap time(Replay(samples));
  const int64_t before = time.ToWallNs(kS, true);  // monotonic 2 s
  samples->push_back({5 * kS / 4, 5 * kS / 2, kWall + 5 * kS / 2 + 300000, 50});
  time.Update();
  EXPECT_EQ(time.ToWallNs(kS, true), before);
  EXPECT_EQ(time.ToWallNs(5 * kS / 4, true), kWall + 5 * kS / 2);
  // 150 ppm faster from here on (300 us over 2 s).
  EXPECT_EQ(time.ToWallNs(5 * kS / 4 + kS / 2, true),
            kWall + 7 * kS / 2 + 150000);
}

TEST(NodeTimeMapTest, ASampleReadTooSlowlyIsIgnored) {
  auto samples = TwoNsTicks();
  NodeTimeMap time(Replay(samples));
  samples->push_back({2 * kS, 4 * kS, kWall + 4 * kS + 90000000, 25000});
  time.Update();
  EXPECT_EQ(time.samples_ignored(), 1u);
  EXPECT_EQ(time.wall_map().breakpoints(), 1u);
  EXPECT_EQ(time.ToWallNs(2 * kS, true), kWall + 4 * kS);
}

// Where the tick map runs ahead of CLOCK_MONOTONIC (here by 100 us), ticks
// read before the sample map past the sample's monotonic time: the wall
// map's breakpoint goes after them, or they would move.
TEST(NodeTimeMapTest, TheWallMapDoesNotBendUnderTicksAlreadyMapped) {
  auto samples = std::make_shared<std::vector<TimeSample>>(
      std::vector<TimeSample>{{0, 0, kWall, 50}, {kS, kS, kWall + kS, 50}});
  NodeTimeMap time(Replay(samples));
  const int64_t tick = 2 * kS - 1;
  const int64_t before = time.ToWallNs(tick, true);
  EXPECT_EQ(before, kWall + 2 * kS - 1);
  // CLOCK_MONOTONIC reads 100 us less than the tick map says, and the node
  // clock 1 ms more: the wall map will slew at 500 ppm from its breakpoint.
  samples->push_back({2 * kS, 2 * kS - 100000, kWall + 2 * kS + 900000, 50});
  time.Update();
  EXPECT_EQ(time.ToWallNs(tick, true), before);
  EXPECT_NEAR(time.wall_map().slope(), 1.0005, 1e-12);
}

TEST(NodeTimeMapTest, TheRealClocksAgree) {
  // Breakpoints 20 ms apart instead of 1 s, so that three of them are made
  // in about 60 ms of drains, as fast as Update runs: what is waited for is
  // the map's own state, not a time slept.
  NodeTimeMap::Options options;
  options.map.min_spacing_ns = 20000000;
  NodeTimeMap time(NodeTimeMap::Sampler([] {
                     timespec ts;
                     clock_gettime(CLOCK_REALTIME, &ts);
                     return ts.tv_sec * kS + ts.tv_nsec;
                   }),
                   options);
  while (time.wall_map().breakpoints() < 4) {
    time.Update();
  }
  auto sample = NodeTimeMap::Sampler([] {
    timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return ts.tv_sec * kS + ts.tv_nsec;
  });
  const TimeSample now = sample();
  // A loaded machine's clock reads jitter by microseconds; the map's own
  // error is far less (docs/clocks.md).
  EXPECT_NEAR(static_cast<double>(time.ToWallNs(now.ticks, true)),
              static_cast<double>(now.wall_ns), 5000.0);
  EXPECT_NEAR(static_cast<double>(time.ToWallNs(now.monotonic_ns, false)),
              static_cast<double>(now.wall_ns), 5000.0);
}

}  // namespace
}  // namespace meridian
