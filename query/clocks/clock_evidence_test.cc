#include "query/clocks/clock_evidence.h"

#include "gtest/gtest.h"

namespace meridian {
namespace {

TEST(ClockEvidenceTest, FirstStartsKeepEachTracksEarliest) {
  ClockEvidence e;
  e.SawStart(7, 1000);
  e.SawStart(9, 950);
  e.SawStart(9, 900);
  e.SawStart(9, 990);
  ASSERT_EQ(e.first_start.size(), 2u);
  EXPECT_EQ(e.first_start.at(7), 1000);
  EXPECT_EQ(e.first_start.at(9), 900);
}

}  // namespace
}  // namespace meridian
