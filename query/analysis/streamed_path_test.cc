#include "query/analysis/streamed_path.h"

#include <string>
#include <tuple>
#include <vector>

#include "gtest/gtest.h"
#include "query/analysis/critical_path.h"
#include "query/analysis/dependency_graph.h"
#include "query/analysis/job_spans.h"
#include "query/clocks/job_clocks.h"
#include "testing/synthetic_job.h"
#include "testing/synthetic_store.h"
#include "testing/test_store.h"

namespace meridian {
namespace {

using Segment = std::tuple<int, v1::TimeClass, v1::Category, std::string,
                           int64_t, int64_t, int, std::string>;

std::vector<Segment> SegmentsOf(const v1::CriticalPathReply& path) {
  std::vector<Segment> out;
  for (const v1::PathSegment& s : path.segments()) {
    out.emplace_back(s.rank(), s.time_class(), s.category(), s.name(),
                     s.start_ns(), s.dur_ns(), s.has_peer() ? s.peer() : -1,
                     s.track());
  }
  return out;
}

std::vector<std::pair<int, int64_t>> RanksOf(
    const v1::CriticalPathReply& path) {
  std::vector<std::pair<int, int64_t>> out;
  for (const v1::RankTime& r : path.ranks())
    out.emplace_back(r.rank(), r.dur_ns());
  return out;
}

// A job written, its clocks solved and stored as the collector does, then
// opened again for reading.
class StreamedPathTest : public ::testing::Test {
 protected:
  void Write(const SyntheticJob& job) {
    auto location =
        NewStoreLocation(StoreKindFromEnvironment(), "streamed_" + job.job);
    ASSERT_TRUE(location.ok()) << location.status();
    StoreOptions options;
    options.full_sync = false;
    {
      auto writer = Store::Open(*location, options);
      ASSERT_TRUE(writer.ok()) << writer.status();
      ASSERT_TRUE(WriteSyntheticJob(job, **writer).ok());
      auto catalog = (*writer)->LoadCatalog(job.job);
      ASSERT_TRUE(catalog.ok()) << catalog.status();
      auto clocks = JobClocks::Load(**writer, *catalog);
      ASSERT_TRUE(clocks.ok()) << clocks.status();
      ASSERT_TRUE(clocks->new_solution().has_value());
      ASSERT_TRUE(
          (*writer)
              ->SaveClockSolution(catalog->job.id, *clocks->new_solution())
              .ok());
    }
    options.read_only = true;
    auto reader = Store::Open(*location, options);
    ASSERT_TRUE(reader.ok()) << reader.status();
    store_ = std::move(*reader);
    ASSERT_TRUE(store_->BeginSnapshot().ok());
    auto catalog = store_->LoadCatalog(job.job);
    ASSERT_TRUE(catalog.ok()) << catalog.status();
    catalog_ = std::move(*catalog);
    auto stored = store_->LoadClockSolution(catalog_.job.id);
    ASSERT_TRUE(stored.ok()) << stored.status();
    stored_ = *stored;
    ASSERT_TRUE(stored_.has_value());
  }

  // The path of the job loaded whole, as `critical-path` without --step
  // finds it when the job fits the memory budget.
  v1::CriticalPathReply Whole() {
    std::optional<JobClocks> clocks;
    auto spans =
        JobSpans::Load(*store_, catalog_, &clocks, JobRead{}, &stored_);
    EXPECT_TRUE(spans.ok()) << spans.status();
    EXPECT_TRUE(clocks->from_stored());
    const DependencyGraph graph(*spans);
    v1::CriticalPathReply path = CriticalPath(graph, JobWindow(*spans));
    path.set_job(catalog_.job.name);
    return path;
  }

  std::unique_ptr<Store> store_;
  JobCatalog catalog_;
  std::optional<StoredJobResult> stored_;
};

TEST_F(StreamedPathTest, WalkedAStepBlockAtATimeIsTheWholeJobsPath) {
  SyntheticJob job;
  job.job = "blocks";
  job.ranks = 8;
  job.nodes = 4;
  job.steps = 9;
  job.layers = 3;
  job.jitter_ns = 40000;
  job.node_skew_ns = 25000;
  Write(job);
  const v1::CriticalPathReply whole = Whole();
  ASSERT_GT(whole.segments_size(), 9 * 2);  // crosses ranks, every step
  const int64_t per_step = catalog_.job.spans / job.steps;
  // One step a block, two, four (blocks unequal: 9 steps), all at once.
  for (int64_t steps_a_block : {1, 2, 4, 9}) {
    SCOPED_TRACE(steps_a_block);
    ScanStats read;
    auto streamed = StreamedCriticalPath(*store_, catalog_, stored_,
                                         steps_a_block * per_step, &read);
    ASSERT_TRUE(streamed.ok()) << streamed.status();
    EXPECT_EQ(streamed->job(), "blocks");
    EXPECT_EQ(streamed->start_ns(), whole.start_ns());
    EXPECT_EQ(streamed->dur_ns(), whole.dur_ns());
    EXPECT_EQ(SegmentsOf(*streamed), SegmentsOf(whole));
    EXPECT_EQ(streamed->compute_ns(), whole.compute_ns());
    EXPECT_EQ(streamed->communication_ns(), whole.communication_ns());
    EXPECT_EQ(streamed->waiting_ns(), whole.waiting_ns());
    EXPECT_EQ(streamed->untraced_ns(), whole.untraced_ns());
    EXPECT_EQ(streamed->explained(), whole.explained());
    EXPECT_EQ(RanksOf(*streamed), RanksOf(whole));
  }
}

TEST_F(StreamedPathTest, RefusesWithoutStepsOrACurrentSolution) {
  SyntheticJob job;
  job.job = "refused";
  job.ranks = 2;
  job.nodes = 2;
  job.steps = 3;
  job.node_skew_ns = 25000;
  Write(job);
  std::optional<StoredJobResult> stale = stored_;
  stale->spans += 1;  // of another state of the job
  auto refused = StreamedCriticalPath(*store_, catalog_, stale, 1000);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(refused.status().message(),
            "job refused: its stored clock solution is not of the job as it "
            "stands");
  JobCatalog none = catalog_;
  none.job.id = -1;  // no span, so no step
  auto no_steps = StreamedCriticalPath(*store_, none, stored_, 1000);
  EXPECT_EQ(no_steps.status().code(), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace meridian
