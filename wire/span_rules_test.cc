#include "wire/span_rules.h"

#include <cmath>

#include "gtest/gtest.h"
#include "meridian/v1/span.pb.h"

namespace meridian {
namespace {

constexpr int64_t kJan2026 = 1767225600LL * 1000000000LL;

SpanFacts Good() {
  return {13, v1::CATEGORY_MPI, v1::SPAN_KIND_COMPLETE, kJan2026, 1000, 8, 0.0};
}

TEST(SpanRulesTest, AGoodSpanPasses) { EXPECT_EQ(SpanProblem(Good()), ""); }

TEST(SpanRulesTest, EachRuleNamesItsField) {
  SpanFacts f = Good();
  f.bytes = -1;
  EXPECT_EQ(SpanProblem(f), "bytes is -1; must be >= 0");
  f = Good();
  f.dur_ns = 31LL * 24 * 3600 * 1000000000LL;
  EXPECT_EQ(SpanProblem(f),
            "dur_ns is 2678400000000000; durations must be at most 30 days "
            "(2592000000000000 ns)");
  f = Good();
  f.dur_ns = -5;
  EXPECT_EQ(SpanProblem(f), "dur_ns is -5; durations must be >= 0");
  f = Good();
  f.name_bytes = 70 * 1024;
  EXPECT_EQ(SpanProblem(f), "name is 71680 bytes; at most 65536 are allowed");
  f = Good();
  f.name_bytes = 0;
  EXPECT_EQ(SpanProblem(f), "name is empty");
  f = Good();
  f.start_ns = -2208988800LL * 1000000000LL;  // 1900
  EXPECT_EQ(SpanProblem(f),
            "start_ns -2208988800000000000 is not a Unix-epoch time in "
            "nanoseconds between the years 2000 and 2100");
  f = Good();
  f.start_ns = kMaxTimestampNs - 10;
  f.dur_ns = 11;
  EXPECT_EQ(SpanProblem(f), "ends after the year 2100");
  f = Good();
  f.category = v1::CATEGORY_UNSPECIFIED;
  EXPECT_EQ(SpanProblem(f), "category 0 is not a known category");
  f = Good();
  f.kind = 1LL << 40;
  EXPECT_EQ(SpanProblem(f), "kind 1099511627776 is not a known span kind");
  f = Good();
  f.value = NAN;
  EXPECT_EQ(SpanProblem(f), "value is not a finite number");
}

}  // namespace
}  // namespace meridian
