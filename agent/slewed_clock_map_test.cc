#include "agent/slewed_clock_map.h"

#include <cstdint>
#include <limits>
#include <vector>

#include "gtest/gtest.h"

namespace meridian {
namespace {

constexpr int64_t kMs = 1000000;
constexpr int64_t kS = 1000000000;

// The header's worked example: a target stepped by 1 ms is slewed to,
// the error halving every second.
TEST(SlewedClockMapTest, WorkedExample) {
  SlewedClockMap map({0, 0}, {kS, kS});
  EXPECT_EQ(map.rate(), 1.0);
  map.Update({2 * kS, 2 * kS + kMs});
  EXPECT_EQ(map.Map(2 * kS), 2 * kS);  // continuous: no jump
  EXPECT_NEAR(map.slope(), 1.0005, 1e-15);
  map.Update({3 * kS, 3 * kS + kMs});
  EXPECT_EQ(map.Map(3 * kS), 3 * kS + 500000);
  map.Update({4 * kS, 4 * kS + kMs});
  EXPECT_EQ(map.Map(4 * kS), 4 * kS + 750000);
  map.Update({5 * kS, 5 * kS + kMs});
  EXPECT_EQ(map.Map(5 * kS), 5 * kS + 875000);
  EXPECT_EQ(map.rate(), 1.0);  // the step did not leak into the rate
  EXPECT_EQ(map.steps(), 0u);
  EXPECT_EQ(map.breakpoints(), 5u);
  // What was mapped stays: 2 s + 500 ms, on the segment from 2 s.
  EXPECT_EQ(map.Map(2 * kS + 500 * kMs), 2 * kS + 500 * kMs + 250000);
}

TEST(SlewedClockMapTest, ATargetFarAheadIsSteppedToForwardOnly) {
  SlewedClockMap ahead({0, 0}, {kS, kS});
  ahead.Update({2 * kS, 2 * kS + 150 * kMs});
  EXPECT_EQ(ahead.steps(), 1u);
  EXPECT_EQ(ahead.Map(2 * kS - 1), 2 * kS - 1);
  EXPECT_EQ(ahead.Map(2 * kS), 2 * kS + 150 * kMs);
  EXPECT_EQ(ahead.Map(3 * kS), 3 * kS + 150 * kMs);
  EXPECT_EQ(ahead.slope(), 1.0);

  // 150 ms behind: slewed at 500 ppm, never back.
  SlewedClockMap behind({0, 0}, {kS, kS});
  behind.Update({2 * kS, 2 * kS - 150 * kMs});
  EXPECT_EQ(behind.steps(), 0u);
  EXPECT_EQ(behind.Map(2 * kS), 2 * kS);
  EXPECT_EQ(behind.Map(3 * kS), 3 * kS - 500000);
  EXPECT_EQ(behind.rate(), 1.0);
}

// An error over max_slew * time_constant (1 ms) closes at 500 ppm, then
// halves with each breakpoint a second apart.
TEST(SlewedClockMapTest, ConvergesAtTheSlewRate) {
  SlewedClockMap map({0, 0}, {kS, kS});
  for (int64_t k = 2; k <= 23; ++k) {
    map.Update({k * kS, k * kS + 10 * kMs});  // 10 ms ahead from 2 s on
  }
  for (int64_t k = 2; k <= 21; ++k) {
    EXPECT_EQ(map.Map(k * kS) - k * kS, (k - 2) * 500000) << k;
  }
  EXPECT_EQ(map.Map(22 * kS) - 22 * kS, 9750000);
  EXPECT_EQ(map.Map(23 * kS) - 23 * kS, 9875000);
  EXPECT_EQ(map.Map(24 * kS) - 24 * kS, 9937500);  // extrapolated
  EXPECT_EQ(map.rate(), 1.0);
}

// A reading 1 ms off, either way, between good ones (every 20 ms, a
// breakpoint at each): the map bends by at most 500 ppm and comes back;
// nothing already mapped moves, and no later time maps before an earlier.
TEST(SlewedClockMapTest, AReadingOffByAMillisecondChangesNothingBackward) {
  for (const int64_t off : {kMs, -kMs}) {
    SlewedClockMap::Options options;
    options.min_spacing_ns = 0;
    SlewedClockMap map({0, 0}, {20 * kMs, 20 * kMs}, options);
    std::vector<int64_t> raws;
    std::vector<int64_t> mapped;
    for (int64_t k = 2; k < 400; ++k) {
      const int64_t raw = k * 20 * kMs;
      // What is mapped now, up to this reading, must stay.
      for (int64_t r = raw - 20 * kMs; r <= raw; r += 1000 * 1000 / 7) {
        raws.push_back(r);
        mapped.push_back(map.Map(r));
      }
      map.Update({raw, k == 50 ? raw + off : raw});
      for (size_t i = 0; i < raws.size(); ++i) {
        ASSERT_EQ(map.Map(raws[i]), mapped[i]) << off << " " << raws[i];
      }
      if (k == 51) {
        // 20 ms at 1 +- 500 ppm from the bent reading at 1 s.
        EXPECT_EQ(map.Map(raw), raw + (off > 0 ? 10000 : -10000)) << off;
      }
      if (k == 52) {
        // Slewed back at 5 ppm (10 us over 2 s).
        EXPECT_EQ(map.Map(raw), raw + (off > 0 ? 9900 : -9900)) << off;
      }
    }
    for (size_t i = 1; i < raws.size(); ++i) {
      ASSERT_LE(mapped[i - 1], mapped[i]) << off << " " << raws[i];
    }
    EXPECT_EQ(map.rate(), 1.0);
    // Then 1% less error each 20 ms (time constant 2 s).
    EXPECT_LT(std::abs(map.Map(399 * 20 * kMs) - 399 * 20 * kMs), 400) << off;
  }
}

// A target 50 ppm fast (the agent's --clock-drift-ppm): the rate is
// measured, the map stays on the target.
TEST(SlewedClockMapTest, FollowsATargetAtAnotherRate) {
  auto target = [](int64_t raw) { return raw + raw / 20000; };
  SlewedClockMap map({0, 0}, {20 * kMs, target(20 * kMs)});
  EXPECT_NEAR(map.rate(), 1.00005, 1e-12);
  int64_t worst = 0;
  for (int64_t raw = 40 * kMs; raw <= 100 * kS; raw += 20 * kMs) {
    map.Update({raw, target(raw)});
    worst = std::max(worst, std::abs(map.Map(raw) - target(raw)));
    // Between readings too, where records fall.
    worst = std::max(
        worst, std::abs(map.Map(raw + 10 * kMs) - target(raw + 10 * kMs)));
  }
  EXPECT_LE(worst, 1);
}

TEST(SlewedClockMapTest, ExtrapolatesBothWays) {
  SlewedClockMap map({0, 0}, {kS, 2 * kS});  // 2 ns a tick
  EXPECT_EQ(map.Map(kS), 2 * kS);
  EXPECT_EQ(map.Map(3 * kS), 6 * kS);
  EXPECT_EQ(map.Map(-kS), -2 * kS);
  map.Update({2 * kS, 4 * kS});
  EXPECT_EQ(map.breakpoints(), 2u);
  EXPECT_EQ(map.Map(3 * kS), 6 * kS);
  EXPECT_EQ(map.Map(0), 0);
}

// At most max_breakpoints; raw times before the oldest kept use its
// segment, and nothing after it moves when older ones go.
TEST(SlewedClockMapTest, KeepsABoundedHistory) {
  SlewedClockMap::Options options;
  options.min_spacing_ns = 0;
  options.max_breakpoints = 4;
  SlewedClockMap map({0, 0}, {kMs, kMs}, options);
  std::vector<int64_t> before;
  for (int64_t k = 2; k <= 11; ++k) {
    // 20 us ahead every other reading: the slope changes each time.
    map.Update({k * kMs, k * kMs + (k % 2 == 0 ? 20000 : 0)});
    EXPECT_LE(map.breakpoints(), 4u);
  }
  EXPECT_EQ(map.breakpoints(), 4u);
  EXPECT_EQ(map.oldest_raw(), 8 * kMs);
  const int64_t o = map.oldest_raw();
  // One line through the oldest segment and back before it.
  EXPECT_EQ(map.Map(o + 500000) - map.Map(o), map.Map(o) - map.Map(o - 500000));
  std::vector<int64_t> kept;
  for (int64_t r = o; r <= 12 * kMs; r += 1000) kept.push_back(map.Map(r));
  map.Update({12 * kMs, 12 * kMs});
  EXPECT_EQ(map.oldest_raw(), 9 * kMs);
  size_t i = 0;
  for (int64_t r = o; r <= 12 * kMs; r += 1000, ++i) {
    if (r >= map.oldest_raw()) {
      EXPECT_EQ(map.Map(r), kept[i]) << r;
    }
  }
}

// Raw times are the traced process's to write: any value maps, without
// overflow, in order.
TEST(SlewedClockMapTest, MapsEveryRawTimeInOrder) {
  SlewedClockMap map({0, 1700000000000000000}, {kS, 1700000001000000000});
  const int64_t kMin = std::numeric_limits<int64_t>::min();
  const int64_t kMax = std::numeric_limits<int64_t>::max();
  EXPECT_EQ(map.Map(kMax), kMax);
  EXPECT_EQ(map.Map(kMin), kMin);
  int64_t previous = kMin;
  for (int64_t raw :
       {kMin, kMin / 2, -kS, int64_t{0}, kS, kMax / 4, kMax / 2, kMax}) {
    EXPECT_LE(previous, map.Map(raw)) << raw;
    previous = map.Map(raw);
  }
}

TEST(SlewedClockMapTest, IgnoresReadingsThatDoNotAdvance) {
  SlewedClockMap map({0, 0}, {kS, kS});
  map.Update({kS, 5 * kS});
  map.Update({kS / 2, 5 * kS});
  EXPECT_EQ(map.ignored(), 2u);
  EXPECT_EQ(map.breakpoints(), 1u);
  EXPECT_EQ(map.Map(2 * kS), 2 * kS);
  // A calibration that went nowhere: rate 1 until readings say otherwise.
  SlewedClockMap still({kS, 0}, {kS, 7});
  EXPECT_EQ(still.rate(), 1.0);
  EXPECT_EQ(still.Map(kS + 10), 17);
}

}  // namespace
}  // namespace meridian
