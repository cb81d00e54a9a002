#include "query/analysis/step_breakdown.h"

#include "gtest/gtest.h"
#include "testing/scenario_fixture.h"
#include "testing/scenario_job.h"

namespace meridian {
namespace {

TEST(StepBreakdownTest, SlowRankComputeCommunicationAndOverlap) {
  auto f = ScenarioFixture::Load("slow-rank");
  ASSERT_NE(f, nullptr);
  v1::StepsReply reply = StepBreakdown(*f->graph);
  ASSERT_EQ(reply.steps_size(), 4);
  for (int s = 0; s < 4; ++s) {
    const v1::StepSummary& step = reply.steps(s);
    EXPECT_EQ(step.step(), s);
    EXPECT_EQ(step.start_ns(), kScenarioT0 + s * 10 * kMs);
    EXPECT_EQ(step.dur_ns(), 5100 * kUs);
    EXPECT_EQ(step.slowest_rank(), 0);  // all equal: the lowest
    EXPECT_EQ(step.compute_ns(), 3500 * kUs);
    EXPECT_EQ(step.communication_ns(), 2600 * kUs);
    EXPECT_EQ(step.overlap_ns(), kMs);
    ASSERT_EQ(step.ranks_size(), 4);
    for (int r = 0; r < 4; ++r) {
      const v1::RankStep& rank = step.ranks(r);
      EXPECT_EQ(rank.rank(), r);
      EXPECT_EQ(rank.dur_ns(), 5100 * kUs);
      EXPECT_EQ(rank.compute_ns(), r == 2 ? 5 * kMs : 3 * kMs);
      EXPECT_EQ(rank.communication_ns(), r == 2 ? 1100 * kUs : 3100 * kUs);
      EXPECT_EQ(rank.overlap_ns(), kMs);
    }
  }
}

// One rank's own figures, or none: the means stay every rank's.
TEST(StepBreakdownTest, KeepsOneRanksFiguresOrNone) {
  auto f = ScenarioFixture::Load("slow-rank");
  ASSERT_NE(f, nullptr);
  v1::StepsReply one = StepBreakdown(*f->graph);
  KeepRankSteps(2, &one);
  ASSERT_EQ(one.steps(3).ranks_size(), 1);
  EXPECT_EQ(one.steps(3).ranks(0).rank(), 2);
  EXPECT_EQ(one.steps(3).ranks(0).compute_ns(), 5 * kMs);
  EXPECT_EQ(one.steps(3).compute_ns(), 3500 * kUs);
  v1::StepsReply none = StepBreakdown(*f->graph);
  KeepRankSteps(std::nullopt, &none);
  EXPECT_EQ(none.steps(0).ranks_size(), 0);
  EXPECT_EQ(none.steps(0).slowest_rank(), 0);
  v1::StepsReply missing = StepBreakdown(*f->graph);
  KeepRankSteps(9, &missing);
  EXPECT_EQ(missing.steps(0).ranks_size(), 0);
}

TEST(StepBreakdownTest, AlternatingStepsAndAChainsIterationTimes) {
  auto f = ScenarioFixture::Load("late-every-other-step");
  ASSERT_NE(f, nullptr);
  v1::StepsReply reply = StepBreakdown(*f->graph);
  ASSERT_EQ(reply.steps_size(), 4);
  for (int s = 0; s < 4; ++s) {
    EXPECT_EQ(reply.steps(s).dur_ns(), s % 2 ? 4100 * kUs : 2100 * kUs);
    EXPECT_EQ(reply.steps(s).ranks(1).compute_ns(), s % 2 ? 4 * kMs : 2 * kMs);
    EXPECT_EQ(reply.steps(s).ranks(0).communication_ns(),
              s % 2 ? 2100 * kUs : 100 * kUs);
  }

  auto chain = ScenarioFixture::Load("p2p-chain");
  ASSERT_NE(chain, nullptr);
  v1::StepsReply steps = StepBreakdown(*chain->graph);
  ASSERT_EQ(steps.steps_size(), 1);
  const v1::StepSummary& step = steps.steps(0);
  EXPECT_EQ(step.dur_ns(), 4150 * kUs);
  EXPECT_EQ(step.slowest_rank(), 3);
  const int64_t durs[] = {1050 * kUs, 2100 * kUs, 3150 * kUs, 4150 * kUs};
  const int64_t comms[] = {50 * kUs, 1100 * kUs, 2150 * kUs, 3150 * kUs};
  for (int r = 0; r < 4; ++r) {
    EXPECT_EQ(step.ranks(r).dur_ns(), durs[r]);
    EXPECT_EQ(step.ranks(r).compute_ns(), kMs);
    EXPECT_EQ(step.ranks(r).communication_ns(), comms[r]);
    EXPECT_EQ(step.ranks(r).overlap_ns(), 0);
  }
}

TEST(StepBreakdownTest, SlowLinkNonblockingReceiveCountsAsCommunication) {
  auto f = ScenarioFixture::Load("slow-link");
  ASSERT_NE(f, nullptr);
  v1::StepsReply reply = StepBreakdown(*f->graph);
  ASSERT_EQ(reply.steps_size(), 2);
  for (const v1::RankStep& r : reply.steps(1).ranks()) {
    EXPECT_EQ(r.dur_ns(), 3010 * kUs);
    EXPECT_EQ(r.compute_ns(), kMs);
    EXPECT_EQ(r.communication_ns(), 2010 * kUs);
    EXPECT_EQ(r.overlap_ns(), 0);
  }
}

// MPI_Init inside a step is set-up, neither compute nor communication;
// step 1, which never ended (no "step" span), is no step.
TEST(StepBreakdownTest, InitInAStepIsSetUpAndAStepThatNeverEndedIsNone) {
  auto f = ScenarioFixture::Load("setup-in-step");
  ASSERT_NE(f, nullptr);
  v1::StepsReply reply = StepBreakdown(*f->graph);
  ASSERT_EQ(reply.steps_size(), 1);
  const v1::StepSummary& step = reply.steps(0);
  EXPECT_EQ(step.dur_ns(), 6 * kMs);
  EXPECT_EQ(step.setup_ns(), 3250 * kUs);
  EXPECT_EQ(step.compute_ns(), 1750 * kUs);
  EXPECT_EQ(step.communication_ns(), kMs);
  EXPECT_EQ(step.overlap_ns(), 0);
  for (const v1::RankStep& r : step.ranks()) {
    EXPECT_EQ(r.setup_ns(), r.rank() == 2 ? 4 * kMs : 3 * kMs) << r.rank();
    EXPECT_EQ(r.compute_ns(), r.rank() == 2 ? kMs : 2 * kMs) << r.rank();
    EXPECT_EQ(r.communication_ns(), kMs) << r.rank();
  }
}

}  // namespace
}  // namespace meridian
