#include "query/analysis/slowdown_detector.h"

#include <cstdint>
#include <optional>

#include "gtest/gtest.h"

namespace meridian {
namespace {

// Step times of `base` ns with +-3 % noise, the same for every run.
int64_t Noisy(int64_t base, int64_t step) {
  const uint64_t h = static_cast<uint64_t>(step) * 0x9E3779B97F4A7C15ull;
  const double unit = static_cast<double>(h >> 11) / 9007199254740992.0;
  return base + static_cast<int64_t>(base * 0.06 * (unit - 0.5));
}

TEST(SlowdownDetectorTest, ASteadySeriesIsNeverSlow) {
  SlowdownDetector d;
  for (int64_t step = 0; step < 1000; ++step) {
    d.Add(step, Noisy(2000000, step));
    ASSERT_FALSE(d.slowdown()) << "step " << step;
  }
}

TEST(SlowdownDetectorTest, ALastingChangeIsFoundWithItsStepAndRatio) {
  SlowdownDetector d;
  std::optional<int64_t> found_at;
  for (int64_t step = 0; step < 400; ++step) {
    d.Add(step, Noisy(step < 200 ? 2000000 : 3200000, step));
    if (d.slowdown() && !found_at) found_at = step;
  }
  ASSERT_TRUE(d.slowdown());
  // Once half of the recent window is slow (its median, the 9th of 16
  // values, is): the 8th slow step.
  EXPECT_EQ(found_at, 207);
  EXPECT_EQ(d.slowdown()->from_step, 200);
  EXPECT_NEAR(d.slowdown()->ratio, 1.6, 0.05);
  EXPECT_NEAR(static_cast<double>(d.slowdown()->baseline_ns), 2e6, 2e4);
  EXPECT_NEAR(static_cast<double>(d.slowdown()->now_ns), 3.2e6, 5e4);
}

TEST(SlowdownDetectorTest, BurstsOutliersSmallChangesAndWarmUpAreNot) {
  SlowdownDetector burst;  // 7 slow steps in a row
  SlowdownDetector tail;   // every 10th step 5 times slower
  SlowdownDetector small;  // 10 % slower for good
  SlowdownDetector warm;   // the first 5 steps 10 times slower
  SlowdownDetector tiny;   // 40 us steps, 60 us from step 200: under 50 us
  for (int64_t step = 0; step < 600; ++step) {
    const int64_t base = Noisy(2000000, step);
    burst.Add(step, step >= 300 && step < 307 ? 3 * base : base);
    tail.Add(step, step % 10 == 0 ? 5 * base : base);
    small.Add(step, step >= 300 ? base * 11 / 10 : base);
    warm.Add(step, step < 5 ? 10 * base : base);
    tiny.Add(step, step >= 200 ? 60000 : 40000);
    ASSERT_FALSE(burst.slowdown()) << step;
    ASSERT_FALSE(tail.slowdown()) << step;
    ASSERT_FALSE(small.slowdown()) << step;
    ASSERT_FALSE(warm.slowdown()) << step;
    ASSERT_FALSE(tiny.slowdown()) << step;
  }
}

TEST(SlowdownDetectorTest, RecoveryEndsItAndALaterChangeIsNew) {
  SlowdownDetector d;
  for (int64_t step = 0; step < 300; ++step) {
    d.Add(step, Noisy(step >= 150 && step < 250 ? 4000000 : 2000000, step));
  }
  EXPECT_FALSE(d.slowdown());  // recovered from step 250
  for (int64_t step = 300; step < 400; ++step) {
    d.Add(step, Noisy(step >= 350 ? 3000000 : 2000000, step));
  }
  ASSERT_TRUE(d.slowdown());
  EXPECT_EQ(d.slowdown()->from_step, 350);
  EXPECT_NEAR(d.slowdown()->ratio, 1.5, 0.05);
}

TEST(SlowdownDetectorTest, OldOrRepeatedStepsAreIgnored) {
  SlowdownDetector d;
  for (int64_t step = 0; step < 100; ++step) d.Add(step, 2000000);
  for (int64_t step = 0; step < 100; ++step) d.Add(step, 9000000);  // again
  d.Add(99, 9000000);
  EXPECT_FALSE(d.slowdown());
}

}  // namespace
}  // namespace meridian
