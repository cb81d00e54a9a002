#include "query/clocks/clock_timeline.h"

#include "gtest/gtest.h"

namespace meridian {
namespace {

constexpr int64_t kT = 1700000000000000000;
constexpr int64_t kSecond = 1000000000;

TEST(ClockTimelineTest, WithoutModelsTimesAreRaw) {
  ClockTimeline timeline;
  EXPECT_FALSE(timeline.known());
  EXPECT_EQ(timeline.ToCollector(kT), kT);
  EXPECT_EQ(timeline.UncertaintyAt(kT), 0);
}

TEST(ClockTimelineTest, OneModelAppliesItsOffsetAndDriftEverywhere) {
  // Node clock 2 ms ahead at kT, gaining 50 ppm.
  ClockTimeline timeline({{kT, 2000000, 50000, 300}});
  EXPECT_EQ(timeline.OffsetAt(kT), 2000000);
  EXPECT_EQ(timeline.OffsetAt(kT + 10 * kSecond), 2000000 + 500000);
  EXPECT_EQ(timeline.OffsetAt(kT - 2 * kSecond), 2000000 - 100000);
  EXPECT_EQ(timeline.ToCollector(kT + 10 * kSecond),
            kT + 10 * kSecond - 2500000);
  EXPECT_EQ(timeline.UncertaintyAt(kT + 10 * kSecond), 300);
}

TEST(ClockTimelineTest, InterpolatesBetweenTheModelsReferences) {
  // Model 0 says 1000 ns at kT (and knows no drift); model 1 says 3000 ns at
  // kT + 4 s, with drift 100 ppb.
  ClockTimeline timeline(
      {{kT, 1000, 0, 100}, {kT + 4 * kSecond, 3000, 100, 500}});
  EXPECT_EQ(timeline.OffsetAt(kT), 1000);
  EXPECT_EQ(timeline.OffsetAt(kT + 4 * kSecond), 3000);
  // At kT + 1 s, a quarter of the way: 1000 + 2000 / 4.
  EXPECT_EQ(timeline.OffsetAt(kT + kSecond), 1500);
  EXPECT_EQ(timeline.UncertaintyAt(kT + kSecond), 200);
  // Before the first reference model 0 applies; after the last, model 1
  // with its drift: 3000 + 100 ppb x 10 s.
  EXPECT_EQ(timeline.OffsetAt(kT - kSecond), 1000);
  EXPECT_EQ(timeline.OffsetAt(kT + 14 * kSecond), 4000);
}

TEST(ClockTimelineTest, KeepsTheFirstOfModelsWithEqualReferences) {
  ClockTimeline timeline({{kT, 10, 0, 0}, {kT, 99, 0, 0}});
  EXPECT_EQ(timeline.models().size(), 1u);
  EXPECT_EQ(timeline.OffsetAt(kT), 10);
}

}  // namespace
}  // namespace meridian
