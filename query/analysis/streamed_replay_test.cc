#include "query/analysis/streamed_replay.h"

#include <memory>
#include <optional>
#include <string>

#include "gtest/gtest.h"
#include "query/analysis/dependency_graph.h"
#include "query/analysis/job_spans.h"
#include "query/analysis/replay.h"
#include "query/analysis/replay_report.h"
#include "query/clocks/job_clocks.h"
#include "testing/solved_job.h"
#include "testing/synthetic_job.h"
#include "testing/synthetic_store.h"

namespace meridian {
namespace {

// A synthetic job written, its clocks solved and stored as the collector
// does, then opened again for reading (solved_job.h).
class StreamedReplayTest : public ::testing::Test {
 protected:
  void SetUp() override {
    SyntheticJob job;
    job.job = "replayed";
    job.ranks = 8;
    job.nodes = 4;
    job.steps = 12;
    job.layers = 2;
    job.jitter_ns = 30000;
    job.node_skew_ns = 25000;
    auto solved = WriteSolvedJob("streamed_replay", job.job, [&](Store& s) {
      return WriteSyntheticJob(job, s).status();
    });
    ASSERT_TRUE(solved.ok()) << solved.status();
    store_ = std::move(solved->store);
    catalog_ = std::move(solved->catalog);
    stored_ = std::move(solved->stored);
    per_step_ = catalog_.job.spans / job.steps;
  }

  // The whole job replayed at once, as a collector within its budget does.
  v1::ReplayReply Whole(const ReplayChanges& changes) {
    std::optional<JobClocks> clocks;
    auto spans =
        JobSpans::Load(*store_, catalog_, &clocks, JobRead{}, &stored_);
    EXPECT_TRUE(spans.ok()) << spans.status();
    const DependencyGraph graph(*spans);
    auto times = Replay(graph, changes);
    EXPECT_TRUE(times.ok()) << times.status();
    auto reply = ReplayReport(graph, *times, std::nullopt);
    EXPECT_TRUE(reply.ok()) << reply.status();
    return *reply;
  }

  std::unique_ptr<Store> store_;
  JobCatalog catalog_;
  std::optional<StoredJobResult> stored_;
  int64_t per_step_ = 0;
};

// Each step as the whole job's replay predicts it, in blocks of 1, 3 and
// all 12 steps, and the same savings: the synthetic job's ranks meet at
// every step's end, so a block replayed from its measured start is the
// whole replay there. The window is the steps': the whole job's also holds
// the Bcast 1 ms before step 0.
TEST_F(StreamedReplayTest, EveryStepAsTheWholeReplayPredictsIt) {
  ReplayChanges changes;
  changes.scales.push_back({"backward", 0.5});
  const v1::ReplayReply whole = Whole(changes);
  ASSERT_EQ(whole.steps_size(), 12);
  ASSERT_GT(whole.saving_ns(), 0);
  for (int64_t steps : {1, 3, 12}) {
    SCOPED_TRACE(steps);
    auto streamed = StreamedReplay(*store_, catalog_, stored_, changes,
                                   steps * per_step_, 0);
    ASSERT_TRUE(streamed.ok()) << streamed.status();
    EXPECT_EQ(streamed->blocks(), 12 / steps);
    EXPECT_EQ(streamed->first_step(), 0);
    EXPECT_EQ(streamed->last_step(), 11);
    ASSERT_EQ(streamed->steps_size(), 12);
    for (int i = 0; i < 12; ++i) {
      EXPECT_EQ(streamed->steps(i).DebugString(), whole.steps(i).DebugString());
    }
    EXPECT_EQ(streamed->saving_ns(), whole.saving_ns());
    EXPECT_EQ(streamed->measured_ns(), whole.measured_ns() - 1000000);
    EXPECT_EQ(streamed->predicted_ns(), whole.predicted_ns() - 1000000);
    ASSERT_EQ(streamed->ranks_size(), 8);
    for (int r = 0; r < 8; ++r) {
      EXPECT_EQ(streamed->ranks(r).rank(), r);
      EXPECT_EQ(
          streamed->ranks(r).measured_ns() - streamed->ranks(r).predicted_ns(),
          whole.ranks(r).measured_ns() - whole.ranks(r).predicted_ns());
    }
    EXPECT_EQ(streamed->scaled_spans(), whole.scaled_spans());
    EXPECT_FALSE(streamed->has_measured_path());
    EXPECT_FALSE(streamed->has_predicted_path());
  }
  // Unchanged, each block ends where it was measured.
  auto unchanged = StreamedReplay(*store_, catalog_, stored_, ReplayChanges{},
                                  3 * per_step_, 0);
  ASSERT_TRUE(unchanged.ok()) << unchanged.status();
  EXPECT_EQ(unchanged->predicted_ns(), unchanged->measured_ns());
  EXPECT_EQ(unchanged->saving_ns(), 0);
}

// Within a limit of spans: blocks over it are read as fewer steps; a step
// over it alone is refused by name. A stale solution, or changes that do
// not check, are refused too.
TEST_F(StreamedReplayTest, StaysWithinItsLimitAndRefusesWhatItCannotDo) {
  ReplayChanges changes;
  changes.scales.push_back({"forward", 2});
  auto all =
      StreamedReplay(*store_, catalog_, stored_, changes, 12 * per_step_, 0);
  ASSERT_TRUE(all.ok()) << all.status();
  EXPECT_EQ(all->blocks(), 1);
  // Two steps' spans at most, in blocks meant for all twelve.
  auto halved = StreamedReplay(*store_, catalog_, stored_, changes,
                               12 * per_step_, 2 * per_step_ + 10);
  ASSERT_TRUE(halved.ok()) << halved.status();
  EXPECT_GT(halved->blocks(), 1);
  EXPECT_EQ(halved->saving_ns(), all->saving_ns());
  ASSERT_EQ(halved->steps_size(), 12);
  for (int i = 0; i < 12; ++i) {
    EXPECT_EQ(halved->steps(i).DebugString(), all->steps(i).DebugString());
  }
  auto over =
      StreamedReplay(*store_, catalog_, stored_, changes, 12 * per_step_, 10);
  EXPECT_EQ(over.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(over.status().message(),
            "job replayed's step 0 holds more than 10 spans");
  std::optional<StoredJobResult> stale = stored_;
  stale->spans += 1;
  auto refused =
      StreamedReplay(*store_, catalog_, stale, changes, 12 * per_step_, 0);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kFailedPrecondition);
  ReplayChanges bad;
  bad.scales.push_back({"forward", -1});
  EXPECT_EQ(StreamedReplay(*store_, catalog_, stored_, bad, 12 * per_step_, 0)
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace meridian
