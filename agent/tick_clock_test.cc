#include "agent/tick_clock.h"

#include <time.h>

#include <vector>

#include "gtest/gtest.h"

namespace meridian {
namespace {

TEST(TickClockTest, MapsTicksFromTheLatestPairAtTheLongTermRate) {
  std::vector<ClockPair> pairs = {
      {1000, 50}, {3000000, 20000050}, {60000000, 20000050 + 19000000}};
  size_t next = 0;
  TickClock clock([&] { return pairs[std::min(next++, pairs.size() - 1)]; });
  // Calibration read pair 1, the constructor's Update pair 2.
  EXPECT_NEAR(clock.ns_per_tick(), 39000000.0 / 59999000, 1e-12);
  EXPECT_EQ(clock.ToMonotonicNs(60000000), 39000050);
  EXPECT_EQ(clock.ToMonotonicNs(60000000) - clock.ToMonotonicNs(1000),
            39000000);
  EXPECT_EQ(clock.ToMonotonicNs(60000000 - 59999000), 50);
}

// The header's worked example.
TEST(TickClockTest, WorkedExample) {
  std::vector<ClockPair> pairs = {{1000, 50}, {3001000, 1000050}};
  size_t next = 0;
  TickClock clock([&] { return pairs[std::min(next++, pairs.size() - 1)]; });
  EXPECT_EQ(clock.ToMonotonicNs(3001300), 1000150);
}

TEST(TickClockTest, TheRealCounterAgreesWithTheClock) {
  TickClock clock;
  const ClockPair now = TickClock::Sample();
  // Within 2 µs: the rate is calibrated over 20 ms and the pair is fresh.
  EXPECT_NEAR(static_cast<double>(clock.ToMonotonicNs(now.ticks)),
              static_cast<double>(now.monotonic_ns), 2000.0);
}

}  // namespace
}  // namespace meridian
