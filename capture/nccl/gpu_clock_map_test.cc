#include "capture/nccl/gpu_clock_map.h"

#include "gtest/gtest.h"

namespace meridian {
namespace {

TEST(GpuClockMapTest, TheSmallestDifferenceIsTheOffset) {
  GpuClockMap map;
  EXPECT_FALSE(map.ready());
  map.Observe(1000, 400);
  map.Observe(1100, 520);
  map.Observe(1300, 690);
  ASSERT_TRUE(map.ready());
  EXPECT_EQ(map.offset(), 580);
  EXPECT_EQ(map.ToHost(700), 1280);
}

TEST(GpuClockMapTest, OffsetsWithBigClockValues) {
  // %globaltimer counts ns since 1970; CLOCK_MONOTONIC since boot.
  GpuClockMap map;
  map.Observe(5000000000, 1765223116927674080ULL);
  EXPECT_EQ(map.ToHost(1765223116927675080ULL), 5000001000);
}

TEST(GpuClockMapTest, FollowsDriftOverTwoWindows) {
  GpuClockMap map(/*window_ns=*/1000);
  map.Observe(0, 0);        // offset 0: window [0, 1000)
  map.Observe(1500, 1400);  // 100: a new window; the previous one still counts
  EXPECT_EQ(map.offset(), 0);
  map.Observe(2600, 2500);  // 100: the window of offset 0 is now too old
  EXPECT_EQ(map.offset(), 100);
  map.Observe(9000, 8800);  // long after: nothing older counts
  EXPECT_EQ(map.offset(), 200);
}

}  // namespace
}  // namespace meridian
