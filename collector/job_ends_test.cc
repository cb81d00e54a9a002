#include "collector/job_ends.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "wire/batch_builder.h"

namespace meridian {
namespace {

using Jobs = std::vector<std::string>;

// The processes of one batch declaring each of `processes` (ended or not), as
// an agent's.
std::vector<DeclaredProcess> BatchOf(
    const std::vector<std::pair<ProcessDesc, bool>>& processes) {
  BatchBuilder builder("agent");
  for (const auto& [desc, ended] : processes) {
    const int p = builder.DeclareProcess(desc);
    if (ended) {
      builder.MarkEnded(p);  // as the agent's last batch of it
    } else {
      const int t =
          builder.DeclareTrack(p, v1::TRACK_KIND_THREAD, desc.pid, "main");
      builder.AddSpan(t, v1::CATEGORY_MPI, "MPI_Barrier", 1000, 10);
    }
  }
  return JobEnds::ProcessesOf(builder.Take());
}

ProcessDesc Rank(const std::string& job, const std::string& node, int rank,
                 int world) {
  return {job, node, rank, rank, 100 + rank, world};
}

TEST(JobEndsTest, AJobEndsWhenEveryRankOfItsWorldHasEnded) {
  JobEnds ends;
  // Two nodes of a 4-rank job: node a's ranks end before node b is seen.
  EXPECT_EQ(ends.Saw(BatchOf({{Rank("j", "a", 0, 4), false},
                              {Rank("j", "a", 1, 4), false}})),
            Jobs{});
  EXPECT_EQ(ends.Saw(BatchOf(
                {{Rank("j", "a", 0, 4), true}, {Rank("j", "a", 1, 4), true}})),
            Jobs{});  // ranks 2 and 3 not yet seen
  EXPECT_EQ(ends.Saw(BatchOf(
                {{Rank("j", "b", 2, 4), false}, {Rank("j", "b", 3, 4), true}})),
            Jobs{});  // rank 2 still running
  EXPECT_EQ(ends.Saw(BatchOf({{Rank("j", "b", 2, 4), true}})), Jobs{"j"});
  EXPECT_EQ(ends.jobs(), 0u);  // forgotten once ended
}

TEST(JobEndsTest, WithoutAWorldSizeEveryProcessSeenMustEnd) {
  JobEnds ends;
  const ProcessDesc first{"py", "n", -1, -1, 7, 0};
  const ProcessDesc second{"py", "n", -1, -1, 8, 0};
  const ProcessDesc other_node{"py", "m", -1, -1, 7, 0};  // same pid
  EXPECT_EQ(ends.Saw(BatchOf({{first, false}, {other_node, false}})), Jobs{});
  EXPECT_EQ(ends.Saw(BatchOf({{first, true}, {second, false}})), Jobs{});
  EXPECT_EQ(ends.Saw(BatchOf({{second, true}})), Jobs{});  // "m" runs
  EXPECT_EQ(ends.Saw(BatchOf({{other_node, true}})), Jobs{"py"});
  // A batch of it after its end starts it again.
  EXPECT_EQ(ends.Saw(BatchOf({{first, false}})), Jobs{});
  EXPECT_EQ(ends.jobs(), 1u);
}

TEST(JobEndsTest, ARepeatedEndCountsOnceAndOtherJobsAreApart) {
  JobEnds ends;
  EXPECT_EQ(ends.Saw(BatchOf({{Rank("a", "n", 0, 2), true},
                              {Rank("b", "n", 0, 1), true},
                              {Rank("a", "n", 0, 2), true}})),
            Jobs{"b"});
  EXPECT_EQ(ends.Saw(BatchOf({{Rank("a", "n", 0, 2), true}})), Jobs{});
  EXPECT_EQ(ends.Saw(BatchOf({{Rank("a", "n", 1, 2), true}})), Jobs{"a"});
}

TEST(JobEndsTest, ProcessesOfOnePidAreToldApartByTheirIncarnation) {
  JobEnds ends;
  // Two containers' pid 1 on one node, neither with a rank.
  ProcessDesc a{"k8s", "n", -1, -1, 1, 0};
  ProcessDesc b = a;
  a.incarnation = 0xa;
  b.incarnation = 0xb;
  EXPECT_EQ(ends.Saw(BatchOf({{a, false}, {b, false}})), Jobs{});
  EXPECT_EQ(ends.Saw(BatchOf({{a, true}})), Jobs{});  // b still runs
  EXPECT_EQ(ends.Saw(BatchOf({{b, true}})), Jobs{"k8s"});
}

TEST(JobEndsTest, AProcessSeenAgainAfterItsEndRunsAgain) {
  JobEnds ends;
  const ProcessDesc a{"j", "n", 0, 0, 7, 2};
  const ProcessDesc b{"j", "n", 1, 1, 8, 2};
  EXPECT_EQ(ends.Saw(BatchOf({{a, false}, {b, false}})), Jobs{});
  EXPECT_EQ(ends.Saw(BatchOf({{a, true}})), Jobs{});
  // a's connection came back (a new agent): its spans again.
  EXPECT_EQ(ends.Saw(BatchOf({{a, false}})), Jobs{});
  EXPECT_EQ(ends.Saw(BatchOf({{b, true}})), Jobs{});  // a runs
  EXPECT_EQ(ends.Saw(BatchOf({{a, true}})), Jobs{"j"});
}

TEST(JobEndsTest, TheJobsFollowedAreBoundedByTheLeastRecentlySeen) {
  JobEnds ends(/*max_jobs=*/2);
  ends.Saw(BatchOf({{Rank("old", "n", 0, 2), true}}));
  ends.Saw(BatchOf({{Rank("new", "n", 0, 2), true}}));
  ends.Saw(BatchOf({{Rank("newer", "n", 0, 2), true}}));  // "old" goes
  EXPECT_EQ(ends.jobs(), 2u);
  EXPECT_EQ(ends.evicted(), 1);
  // "old"'s first rank is forgotten: its end needs both again. Seen anew,
  // it takes the place of "new", now the least recently seen.
  EXPECT_EQ(ends.Saw(BatchOf({{Rank("old", "n", 1, 2), true}})), Jobs{});
  EXPECT_EQ(ends.evicted(), 2);
  EXPECT_EQ(ends.Saw(BatchOf({{Rank("newer", "n", 1, 2), true}})),
            Jobs{"newer"});
  EXPECT_EQ(ends.jobs(), 1u);
}

}  // namespace
}  // namespace meridian
