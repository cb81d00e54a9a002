#include "query/analysis/interval_set.h"

#include "gtest/gtest.h"

namespace meridian {
namespace {

TEST(IntervalSetTest, MergesAndMeasuresExactly) {
  IntervalSet set({{10, 20}, {0, 5}, {15, 30}, {40, 50}, {7, 7}});
  ASSERT_EQ(set.intervals().size(), 3u);
  EXPECT_EQ(set.intervals()[1], IntervalSet::Interval(10, 30));
  EXPECT_EQ(set.Measure(0, 100), 5 + 20 + 10);
  EXPECT_EQ(set.Measure(3, 12), 2 + 2);
  EXPECT_EQ(set.Measure(25, 45), 5 + 5);
  EXPECT_EQ(set.Measure(30, 40), 0);
  EXPECT_EQ(set.Measure(12, 14), 2);
  EXPECT_EQ(set.Measure(50, 10), 0);
  EXPECT_EQ(IntervalSet().Measure(0, 10), 0);
}

TEST(IntervalSetTest, IntersectsTwoUnions) {
  IntervalSet a({{0, 10}, {20, 30}});
  IntervalSet b({{5, 25}, {28, 40}});
  IntervalSet both = a.Intersect(b);
  ASSERT_EQ(both.intervals().size(), 3u);
  EXPECT_EQ(both.intervals()[0], IntervalSet::Interval(5, 10));
  EXPECT_EQ(both.intervals()[1], IntervalSet::Interval(20, 25));
  EXPECT_EQ(both.intervals()[2], IntervalSet::Interval(28, 30));
  EXPECT_EQ(both.Measure(0, 100), 12);
}

}  // namespace
}  // namespace meridian
