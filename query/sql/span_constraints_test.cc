#include "query/sql/span_constraints.h"

#include <limits>

#include "gtest/gtest.h"

namespace meridian {
namespace {

constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

TEST(IntRangeTest, NarrowsByEachOperator) {
  IntRange r;
  EXPECT_TRUE(r.whole());
  r.Narrow(SpanOp::kGe, 10);
  r.Narrow(SpanOp::kLe, 19);
  EXPECT_EQ(r.lo, 10);
  EXPECT_EQ(r.hi, 19);
  r.Narrow(SpanOp::kGt, 10);
  r.Narrow(SpanOp::kLt, 19);
  EXPECT_EQ(r.lo, 11);
  EXPECT_EQ(r.hi, 18);
  r.Narrow(SpanOp::kEq, 12);
  EXPECT_EQ(r.lo, 12);
  EXPECT_EQ(r.hi, 12);
  EXPECT_TRUE(r.Contains(12));
  EXPECT_FALSE(r.Contains(13));
  r.Narrow(SpanOp::kEq, 13);
  EXPECT_TRUE(r.empty());
}

TEST(IntRangeTest, LimitsDoNotOverflow) {
  IntRange above;
  above.Narrow(SpanOp::kGt, kMax);
  EXPECT_TRUE(above.empty());
  IntRange below;
  below.Narrow(SpanOp::kLt, kMin);
  EXPECT_TRUE(below.empty());
  IntRange all;
  all.Narrow(SpanOp::kGe, kMin);
  all.Narrow(SpanOp::kLe, kMax);
  EXPECT_TRUE(all.whole());
}

TEST(SpanConstraintsTest, UsableColumnsAndOperators) {
  EXPECT_TRUE(SpanConstraints::Usable(kSpanJob, SpanOp::kEq));
  EXPECT_FALSE(SpanConstraints::Usable(kSpanJob, SpanOp::kGt));
  EXPECT_TRUE(SpanConstraints::Usable(kSpanStep, SpanOp::kLe));
  EXPECT_TRUE(SpanConstraints::Usable(kSpanStart, SpanOp::kGt));
  EXPECT_FALSE(SpanConstraints::Usable(kSpanBytes, SpanOp::kEq));
  EXPECT_FALSE(SpanConstraints::Usable(kSpanArgs, SpanOp::kEq));
  // Each constraint cuts the estimate: a join keyed on job and step is
  // cheaper than one on job alone.
  EXPECT_GT(SpanConstraints::Selectivity(kSpanStep, SpanOp::kEq),
            SpanConstraints::Selectivity(kSpanStep, SpanOp::kGe));
}

TEST(SpanConstraintsTest, AddsValuesAndFindsContradictions) {
  SpanConstraints w;
  w.Add(kSpanJob, SpanOp::kEq, std::string("j"), std::nullopt);
  w.Add(kSpanStep, SpanOp::kGe, std::nullopt, 10);
  w.Add(kSpanStep, SpanOp::kLe, std::nullopt, 19);
  w.Add(kSpanRank, SpanOp::kEq, std::nullopt, 3);
  EXPECT_EQ(*w.job, "j");
  EXPECT_EQ(w.step.lo, 10);
  EXPECT_EQ(w.step.hi, 19);
  EXPECT_EQ(w.rank.lo, 3);
  EXPECT_FALSE(w.none);
  w.Add(kSpanJob, SpanOp::kEq, std::string("k"), std::nullopt);
  EXPECT_TRUE(w.none);

  SpanConstraints pids;
  pids.Add(kSpanPid, SpanOp::kEq, std::nullopt, 7);
  pids.Add(kSpanPid, SpanOp::kEq, std::nullopt, 8);
  EXPECT_TRUE(pids.none);
}

TEST(SpanConstraintsTest, ValuesOfOtherTypesNarrowNothing) {
  SpanConstraints w;
  // rank = 2.5 or rank = 'x': SQLite checks those itself.
  w.Add(kSpanRank, SpanOp::kEq, std::nullopt, std::nullopt);
  w.Add(kSpanJob, SpanOp::kEq, std::nullopt, 5);
  EXPECT_TRUE(w.rank.whole());
  EXPECT_FALSE(w.job.has_value());
  EXPECT_FALSE(w.none);
}

}  // namespace
}  // namespace meridian
