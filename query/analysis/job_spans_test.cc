#include "query/analysis/job_spans.h"

#include <set>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "query/analysis/critical_path.h"
#include "query/analysis/dependency_graph.h"
#include "testing/counting_store.h"
#include "testing/scenario_fixture.h"
#include "testing/synthetic_job.h"

namespace meridian {
namespace {

// The path over `step` of spans loaded one way or another.
v1::CriticalPathReply StepPath(const JobSpans& spans, int64_t step) {
  DependencyGraph graph(spans);
  auto window = StepWindow(spans, step);
  EXPECT_TRUE(window.has_value()) << "step " << step;
  return CriticalPath(graph, window.value_or(TimeWindow{}));
}

// A step's own load answers as the whole job's load does, for every step
// of every scenario: nodes with offset clocks (read windows mapped back to
// each node's clock), messages, collectives and waits.
TEST(JobSpansTest, AStepLoadFindsTheWholeJobsPathOfThatStep) {
  const std::pair<const char*, int> scenarios[] = {{"slow-rank", 4},
                                                   {"slow-link", 2},
                                                   {"late-every-other-step", 4},
                                                   {"p2p-chain", 1}};
  for (const auto& [scenario, steps] : scenarios) {
    auto f = ScenarioFixture::Load(scenario);
    ASSERT_NE(f, nullptr);
    for (int64_t step = 0; step < steps; ++step) {
      SCOPED_TRACE(std::string(scenario) + " step " + std::to_string(step));
      std::optional<JobClocks> clocks;
      ScanStats read;
      auto spans =
          JobSpans::LoadStep(*f->store, f->catalog, step, &clocks, &read);
      ASSERT_TRUE(spans.ok()) << spans.status();
      EXPECT_EQ(StepPath(*spans, step).DebugString(),
                StepPath(*f->spans, step).DebugString());
      EXPECT_GT(read.chunks_read, 0);
    }
  }
}

// A step is read in two passes (its tagged spans, then its window); its
// nodes' clock models are read once, by the first.
TEST(JobSpansTest, AStepReadsEachNodesModelsOnce) {
  auto f = ScenarioFixture::Load("slow-rank");
  ASSERT_NE(f, nullptr);
  std::set<std::string> nodes;
  for (const ProcessInfo& p : f->catalog.processes) nodes.insert(p.node);
  CountingStore counting(*f->store);
  std::optional<JobClocks> clocks;
  auto spans = JobSpans::LoadStep(counting, f->catalog, 1, &clocks);
  ASSERT_TRUE(spans.ok()) << spans.status();
  EXPECT_EQ(counting.model_loads(), static_cast<int>(nodes.size()));
  EXPECT_EQ(counting.scans(), 2);
}

TEST(JobSpansTest, AStepNoSpanHasIsNotFound) {
  auto f = ScenarioFixture::Load("slow-rank");
  ASSERT_NE(f, nullptr);
  std::optional<JobClocks> clocks;
  auto spans = JobSpans::LoadStep(*f->store, f->catalog, 9, &clocks);
  EXPECT_EQ(spans.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(spans.status().message(),
            "job slow-rank has no span tagged with step 9; `meridian steps` "
            "lists its steps");
}

// A job whose chunks each hold five steps of one rank: a step's load reads
// the chunks that hold it, twice (tagged spans, then the window), and no
// other; the whole job reads every chunk once.
TEST(JobSpansTest, AStepLoadReadsOnlyThatStepsChunks) {
  SyntheticJob job;
  job.job = "steps";
  job.ranks = 4;
  job.nodes = 2;
  job.steps = 20;
  // Per rank: the Bcast and steps 0-4 (31 spans), then 5-9, 10-14, 15-19.
  job.spans_per_batch = 30;
  const std::string path = std::string(getenv("TEST_TMPDIR")) + "/steps.db";
  StoreOptions options;
  options.full_sync = false;
  auto store = Store::Open(path, options);
  ASSERT_TRUE(store.ok()) << store.status();
  for (int node = 0; node < job.nodes; ++node) {
    std::vector<v1::Batch> batches = SyntheticBatches(job, node);
    std::vector<const v1::Batch*> pointers;
    for (const v1::Batch& b : batches) pointers.push_back(&b);
    ASSERT_TRUE((*store)->Write(pointers).ok());
  }
  auto catalog = (*store)->LoadCatalog("steps");
  ASSERT_TRUE(catalog.ok()) << catalog.status();
  EXPECT_EQ(catalog->job.chunks, 16);

  std::optional<JobClocks> whole_clocks;
  ScanStats whole_read;
  auto whole =
      JobSpans::Load(**store, *catalog, &whole_clocks,
                     JobRead{{ScanRange{}}, std::nullopt, &whole_read});
  ASSERT_TRUE(whole.ok()) << whole.status();
  EXPECT_EQ(whole_read.chunks_read, 16);
  EXPECT_EQ(whole->spans().size(), 4u * (1 + 20 * 6));

  for (int64_t step : {0, 5, 7, 9, 10, 19}) {
    SCOPED_TRACE(step);
    std::optional<JobClocks> clocks;
    ScanStats read;
    auto spans = JobSpans::LoadStep(**store, *catalog, step, &clocks, &read);
    ASSERT_TRUE(spans.ok()) << spans.status();
    EXPECT_EQ(read.chunks_read, 8);  // 4 tracks, one chunk each, twice
    EXPECT_EQ(read.chunk_ids.size(), 4u);
    EXPECT_EQ(spans->spans().size(), 4u * 6);  // the step's own
    v1::CriticalPathReply path = StepPath(*spans, step);
    EXPECT_EQ(path.DebugString(), StepPath(*whole, step).DebugString());
    EXPECT_EQ(path.dur_ns(), 9000000);
  }
}

}  // namespace
}  // namespace meridian
