#include "query/analysis/critical_path.h"

#include <string>
#include <tuple>
#include <vector>

#include "gtest/gtest.h"
#include "testing/scenario_fixture.h"
#include "testing/scenario_job.h"

namespace meridian {
namespace {

// (rank, class, name, start since t0, duration)
using Segment = std::tuple<int, v1::TimeClass, std::string, int64_t, int64_t>;
constexpr v1::TimeClass kCompute = v1::TIME_CLASS_COMPUTE;
constexpr v1::TimeClass kComm = v1::TIME_CLASS_COMMUNICATION;
constexpr v1::TimeClass kUntraced = v1::TIME_CLASS_UNTRACED;

std::vector<Segment> SegmentsOf(const v1::CriticalPathReply& path) {
  std::vector<Segment> out;
  for (const v1::PathSegment& s : path.segments()) {
    out.emplace_back(s.rank(), s.time_class(), s.name(),
                     s.start_ns() - kScenarioT0, s.dur_ns());
  }
  return out;
}

v1::CriticalPathReply PathOfStep(const ScenarioFixture& f, int64_t step) {
  auto window = StepWindow(*f.spans, step);
  EXPECT_TRUE(window.has_value());
  return CriticalPath(*f.graph, window.value_or(TimeWindow{}));
}

TEST(CriticalPathTest, SlowRankBoundsEveryStep) {
  auto f = ScenarioFixture::Load("slow-rank");
  ASSERT_NE(f, nullptr);
  for (int64_t step = 0; step < 4; ++step) {
    const int64_t t = step * 10 * kMs;
    v1::CriticalPathReply path = PathOfStep(*f, step);
    EXPECT_EQ(path.start_ns() - kScenarioT0, t);
    EXPECT_EQ(path.dur_ns(), 5100 * kUs);
    EXPECT_EQ(SegmentsOf(path),
              (std::vector<Segment>{
                  {2, kCompute, "forward", t, 5 * kMs},
                  {0, kComm, "MPI_Allreduce", t + 5 * kMs, 100 * kUs}}));
    EXPECT_EQ(path.compute_ns(), 5 * kMs);
    EXPECT_EQ(path.communication_ns(), 100 * kUs);
    EXPECT_EQ(path.waiting_ns(), 0);
    EXPECT_EQ(path.untraced_ns(), 0);
    EXPECT_DOUBLE_EQ(path.explained(), 1.0);
    ASSERT_EQ(path.ranks_size(), 2);
    EXPECT_EQ(path.ranks(0).rank(), 2);
    EXPECT_EQ(path.ranks(0).dur_ns(), 5 * kMs);
    EXPECT_EQ(path.segments(0).track(), "main");
  }
}

TEST(CriticalPathTest, WholeJobIncludesTheUntracedTimeBetweenSteps) {
  auto f = ScenarioFixture::Load("slow-rank");
  ASSERT_NE(f, nullptr);
  v1::CriticalPathReply path = CriticalPath(*f->graph, JobWindow(*f->spans));
  EXPECT_EQ(path.start_ns(), kScenarioT0);
  EXPECT_EQ(path.dur_ns(), 35100 * kUs);
  std::vector<Segment> expected;
  for (int64_t step = 0; step < 3; ++step) {
    const int64_t t = step * 10 * kMs;
    expected.push_back({2, kCompute, "forward", t, 5 * kMs});
    expected.push_back({2, kComm, "MPI_Allreduce", t + 5 * kMs, 100 * kUs});
    expected.push_back({2, kUntraced, "", t + 5100 * kUs, 4900 * kUs});
  }
  expected.push_back({2, kCompute, "forward", 30 * kMs, 5 * kMs});
  expected.push_back({0, kComm, "MPI_Allreduce", 35 * kMs, 100 * kUs});
  EXPECT_EQ(SegmentsOf(path), expected);
  EXPECT_EQ(path.compute_ns(), 20 * kMs);
  EXPECT_EQ(path.communication_ns(), 400 * kUs);
  EXPECT_EQ(path.untraced_ns(), 14700 * kUs);
  EXPECT_DOUBLE_EQ(path.explained(), 20.4 / 35.1);
}

TEST(CriticalPathTest, SlowLinkShowsAsTheReceiveOnItsFarEnd) {
  auto f = ScenarioFixture::Load("slow-link");
  ASSERT_NE(f, nullptr);
  for (int64_t step = 0; step < 2; ++step) {
    const int64_t t = step * 10 * kMs;
    v1::CriticalPathReply path = PathOfStep(*f, step);
    EXPECT_EQ(path.dur_ns(), 3010 * kUs);
    EXPECT_EQ(SegmentsOf(path),
              (std::vector<Segment>{
                  {2, kCompute, "compute", t, kMs},
                  {2, kComm, "MPI_Send", t + kMs, 10 * kUs},
                  {2, kComm, "MPI_Wait", t + 1010 * kUs, 1990 * kUs},
                  {0, kComm, "MPI_Barrier", t + 3 * kMs, 10 * kUs}}));
    // The wait was for rank 1's message: the slow link is 1 -> 2.
    ASSERT_TRUE(path.segments(2).has_peer());
    EXPECT_EQ(path.segments(2).peer(), 1);
    EXPECT_FALSE(path.segments(3).has_peer());
    EXPECT_EQ(path.compute_ns(), kMs);
    EXPECT_EQ(path.communication_ns(), 2010 * kUs);
  }
}

TEST(CriticalPathTest, RankLateEveryOtherStepBoundsOnlyThoseSteps) {
  auto f = ScenarioFixture::Load("late-every-other-step");
  ASSERT_NE(f, nullptr);
  for (int64_t step = 0; step < 4; ++step) {
    const int64_t t = step * 10 * kMs;
    v1::CriticalPathReply path = PathOfStep(*f, step);
    if (step % 2 == 0) {
      EXPECT_EQ(SegmentsOf(path),
                (std::vector<Segment>{
                    {0, kCompute, "forward", t, 2 * kMs},
                    {0, kComm, "MPI_Allreduce", t + 2 * kMs, 100 * kUs}}))
          << "step " << step;
    } else {
      EXPECT_EQ(SegmentsOf(path),
                (std::vector<Segment>{
                    {1, kCompute, "forward", t, 4 * kMs},
                    {0, kComm, "MPI_Allreduce", t + 4 * kMs, 100 * kUs}}))
          << "step " << step;
    }
  }
}

TEST(CriticalPathTest, PointToPointChainCrossesEveryRank) {
  auto f = ScenarioFixture::Load("p2p-chain");
  ASSERT_NE(f, nullptr);
  v1::CriticalPathReply path = PathOfStep(*f, 0);
  EXPECT_EQ(path.dur_ns(), 4150 * kUs);
  EXPECT_EQ(SegmentsOf(path),
            (std::vector<Segment>{{0, kCompute, "compute", 0, kMs},
                                  {1, kComm, "MPI_Recv", kMs, 50 * kUs},
                                  {1, kCompute, "compute", 1050 * kUs, kMs},
                                  {2, kComm, "MPI_Recv", 2050 * kUs, 50 * kUs},
                                  {2, kCompute, "compute", 2100 * kUs, kMs},
                                  {3, kComm, "MPI_Recv", 3100 * kUs, 50 * kUs},
                                  {3, kCompute, "compute", 3150 * kUs, kMs}}));
  for (int i : {1, 3, 5}) {
    ASSERT_TRUE(path.segments(i).has_peer());
    EXPECT_EQ(path.segments(i).peer(), path.segments(i).rank() - 1);
  }
  EXPECT_EQ(path.compute_ns(), 4 * kMs);
  EXPECT_EQ(path.communication_ns(), 150 * kUs);
  EXPECT_EQ(path.ranks_size(), 4);
}

TEST(CriticalPathTest, NoStepAndEmptyWindow) {
  auto f = ScenarioFixture::Load("p2p-chain");
  ASSERT_NE(f, nullptr);
  EXPECT_FALSE(StepWindow(*f->spans, 7).has_value());
  v1::CriticalPathReply path =
      CriticalPath(*f->graph, TimeWindow{kScenarioT0, kScenarioT0});
  EXPECT_EQ(path.segments_size(), 0);
  EXPECT_EQ(path.dur_ns(), 0);
}

// MPI_Init and MPI_Finalize are set-up, not communication, on the path.
TEST(CriticalPathTest, InitAndFinalizeAreSetUpNotCommunication) {
  auto f = ScenarioFixture::Load("setup-in-step");
  ASSERT_NE(f, nullptr);
  constexpr v1::TimeClass kSetUp = v1::TIME_CLASS_SETUP;
  const v1::CriticalPathReply step = PathOfStep(*f, 0);
  EXPECT_EQ(SegmentsOf(step),
            (std::vector<Segment>{{0, kSetUp, "MPI_Init", 0, 3 * kMs},
                                  {0, kCompute, "compute", 3 * kMs, 2 * kMs},
                                  {0, kComm, "MPI_Allreduce", 5 * kMs, kMs}}));
  EXPECT_EQ(step.setup_ns(), 3 * kMs);
  EXPECT_EQ(step.compute_ns(), 2 * kMs);
  EXPECT_EQ(step.communication_ns(), kMs);
  const v1::CriticalPathReply job =
      CriticalPath(*f->graph, JobWindow(*f->spans));
  EXPECT_EQ(SegmentsOf(job),
            (std::vector<Segment>{
                {0, kSetUp, "MPI_Init", 0, 3 * kMs},
                {0, kCompute, "compute", 3 * kMs, 2 * kMs},
                {0, kComm, "MPI_Allreduce", 5 * kMs, kMs},
                {0, kCompute, "eval", 6 * kMs, 300 * kUs},
                {0, kSetUp, "MPI_Finalize", 6300 * kUs, 500 * kUs}}));
  EXPECT_EQ(job.dur_ns(), 6800 * kUs);
  EXPECT_EQ(job.setup_ns(), 3500 * kUs);
  EXPECT_EQ(job.communication_ns(), kMs);
  EXPECT_EQ(job.compute_ns(), 2300 * kUs);
  EXPECT_EQ(job.untraced_ns(), 0);
}

}  // namespace
}  // namespace meridian
