#include "query/analysis/replay.h"

#include <string>

#include "gtest/gtest.h"
#include "query/analysis/replay_report.h"
#include "testing/scenario_fixture.h"
#include "testing/scenario_job.h"

namespace meridian {
namespace {

std::unique_ptr<ScenarioFixture> Scenario(const std::string& name) {
  auto f = ScenarioFixture::Load(name);
  EXPECT_NE(f, nullptr);
  return f;
}

v1::ReplayReply Report(const ScenarioFixture& f, const ReplayChanges& changes,
                       std::optional<StepRange> steps = std::nullopt) {
  auto times = Replay(*f.graph, changes);
  EXPECT_TRUE(times.ok()) << times.status();
  if (!times.ok()) return {};
  auto reply = ReplayReport(*f.graph, *times, steps);
  EXPECT_TRUE(reply.ok()) << reply.status();
  return reply.ok() ? *reply : v1::ReplayReply();
}

// With no change every span of every scenario is where it was measured:
// nothing is lost or invented by the simulation.
TEST(ReplayTest, NoChangeReproducesEverySpanExactly) {
  for (const std::string& name : ScenarioNames()) {
    auto f = Scenario(name);
    ASSERT_NE(f, nullptr);
    auto times = Replay(*f->graph, ReplayChanges{});
    ASSERT_TRUE(times.ok()) << times.status();
    const std::vector<JobSpan>& all = f->spans->spans();
    for (size_t i = 0; i < all.size(); ++i) {
      ASSERT_EQ(times->start[i], all[i].start) << name << " span " << i;
      ASSERT_EQ(times->end[i], all[i].end) << name << " span " << i;
    }
    EXPECT_EQ(times->broken_dependencies, 0) << name;
    const v1::ReplayReply reply = Report(*f, ReplayChanges{});
    EXPECT_EQ(reply.predicted_ns(), reply.measured_ns()) << name;
    EXPECT_EQ(reply.saving_ns(), 0) << name;
    EXPECT_EQ(reply.predicted_path().compute_ns(),
              reply.measured_path().compute_ns())
        << name;
  }
}

// late-every-other-step: rank 1 computes 4 ms instead of 2 in odd steps, and
// everyone waits for it. Like rank 0, it computes 2 ms: every step takes
// 2.1 ms, and the untraced time between steps (7.9 ms after an even step,
// 5.9 after an odd one) follows, so the job ends at 30.1 ms, not 34.1.
TEST(ReplayTest, RankLikeFixesTheStraggler) {
  auto f = Scenario("late-every-other-step");
  ASSERT_NE(f, nullptr);
  ReplayChanges changes;
  changes.rank_like = {{1, 0}};
  const v1::ReplayReply reply = Report(*f, changes);
  EXPECT_EQ(reply.measured_ns(), 34100 * kUs);
  EXPECT_EQ(reply.predicted_ns(), 30100 * kUs);
  EXPECT_EQ(reply.saving_ns(), 4 * kMs);
  ASSERT_EQ(reply.steps_size(), 4);
  for (const v1::ReplayStep& step : reply.steps()) {
    EXPECT_EQ(step.measured_ns(), step.step() % 2 ? 4100 * kUs : 2100 * kUs);
    EXPECT_EQ(step.predicted_ns(), 2100 * kUs) << step.step();
    ASSERT_EQ(step.ranks_size(), 4);
    EXPECT_EQ(step.ranks(1).predicted_ns(), 2100 * kUs);
  }
  // The predicted path: compute then the Allreduce's 100 us, per step.
  EXPECT_EQ(reply.predicted_path().dur_ns(), 30100 * kUs);
  EXPECT_EQ(reply.predicted_path().communication_ns(), 400 * kUs);

  // One step alone.
  const v1::ReplayReply one = Report(*f, changes, StepRange{1, 1});
  EXPECT_EQ(one.measured_ns(), 4100 * kUs);
  EXPECT_EQ(one.predicted_ns(), 2100 * kUs);
  ASSERT_EQ(one.steps_size(), 1);
  // The window's spans, not the job's.
  EXPECT_EQ(reply.spans(), 32);  // 4 steps x 4 ranks x 2
  EXPECT_EQ(one.spans(), 8);
}

// slow-rank: rank 2's forward takes 5 ms, the others' 3. Like rank 0, each
// step takes 3.1 ms and the 4.9 ms untraced after it follows: the job ends
// at 3 x 8 + 3.1 ms. The second thread's Allreduce [1, 2) ms of each step
// follows its main thread (measured 1 ms into the step: still 1 ms in), so
// the steps stay 3.1 ms.
TEST(ReplayTest, OtherThreadsFollowTheirMainThread) {
  auto f = Scenario("slow-rank");
  ASSERT_NE(f, nullptr);
  ReplayChanges changes;
  changes.rank_like = {{2, 0}};
  const v1::ReplayReply reply = Report(*f, changes);
  EXPECT_EQ(reply.measured_ns(), 35100 * kUs);
  EXPECT_EQ(reply.predicted_ns(), 27100 * kUs);
  ASSERT_EQ(reply.steps_size(), 4);
  for (const v1::ReplayStep& step : reply.steps()) {
    EXPECT_EQ(step.predicted_ns(), 3100 * kUs) << step.step();
  }
}

// p2p-chain: four 1 ms computes in a chain of messages. Halving "compute"
// saves 2 ms of the 4.15: rank 3 ends at 2.15 ms.
TEST(ReplayTest, ScaleByNameAlongAChainOfMessages) {
  auto f = Scenario("p2p-chain");
  ASSERT_NE(f, nullptr);
  ReplayChanges changes;
  changes.scales = {{"comp*", 0.5}};
  const v1::ReplayReply reply = Report(*f, changes);
  EXPECT_EQ(reply.measured_ns(), 4150 * kUs);
  EXPECT_EQ(reply.predicted_ns(), 2150 * kUs);
  EXPECT_EQ(reply.scaled_spans(), 4);
  // By category, factor 0: MPI is removed, and with it the chain: every
  // rank computes from 0 to 1 ms.
  ReplayChanges no_mpi;
  no_mpi.scales = {{"mpi", 0}};
  const v1::ReplayReply fast = Report(*f, no_mpi);
  EXPECT_EQ(fast.predicted_ns(), 1 * kMs);
}

// late-every-other-step with a 1 GB/s, 10 us ring: each Allreduce (1 MiB, 4
// ranks) takes 1632.864 us after the last arrival instead of 100 us.
TEST(ReplayTest, CommModelReplacesMeasuredCollectiveTime) {
  auto f = Scenario("late-every-other-step");
  ASSERT_NE(f, nullptr);
  ReplayChanges changes;
  changes.comm_model = CommModel{CommModel::Algorithm::kRing, 1e9, 10000};
  const v1::ReplayReply reply = Report(*f, changes);
  EXPECT_EQ(reply.predicted_ns(), 34100 * kUs + 4 * (1632864 - 100 * kUs));
  EXPECT_EQ(reply.steps(0).predicted_ns(), 2 * kMs + 1632864);
  EXPECT_EQ(reply.steps(1).predicted_ns(), 4 * kMs + 1632864);
}

// --no-wait: rank 0 no longer waits for rank 1 in odd steps (2.1 ms), rank
// 1 is unchanged, so the window is too.
TEST(ReplayTest, NoWaitRemovesWaitingForLateArrivals) {
  auto f = Scenario("late-every-other-step");
  ASSERT_NE(f, nullptr);
  ReplayChanges changes;
  changes.no_wait = true;
  const v1::ReplayReply reply = Report(*f, changes);
  EXPECT_EQ(reply.predicted_ns(), reply.measured_ns());
  EXPECT_EQ(reply.steps(1).ranks(0).predicted_ns(), 2100 * kUs);
  EXPECT_EQ(reply.steps(1).ranks(1).predicted_ns(), 4100 * kUs);
}

// One rank with a GPU stream (us): launches [0, 10) and [10, 20), "prep"
// [20, 520), cudaDeviceSynchronize [520, 2020); kernels [15, 1015) (the
// stream was idle: 15 us after its launch) and [1015, 2015) (queued). The
// sync returned 5 us after the last kernel.
struct GpuJob {
  JobCatalog catalog;
  std::optional<JobSpans> spans;
  std::optional<DependencyGraph> graph;

  GpuJob() {
    catalog.processes = {{1, "node-0", 0, 0, 100}};
    catalog.tracks = {{1, 1, v1::TRACK_KIND_THREAD, 100, "main"},
                      {2, 1, v1::TRACK_KIND_GPU_STREAM, 7, "stream 7"}};
    catalog.ops = {{1, v1::CATEGORY_CUDA_RUNTIME, "cudaLaunchKernel"},
                   {2, v1::CATEGORY_CUDA_KERNEL, "gemm"},
                   {3, v1::CATEGORY_USER, "prep"},
                   {4, v1::CATEGORY_CUDA_SYNC, "cudaDeviceSynchronize"}};
    spans.emplace(catalog);
    struct Row {
      int64_t track, op, start, end;
      uint64_t correlation;
    };
    for (const Row& r : {Row{1, 1, 0, 10, 1}, Row{1, 1, 10, 20, 2},
                         Row{1, 3, 20, 520, 0}, Row{1, 4, 520, 2020, 0},
                         Row{2, 2, 15, 1015, 1}, Row{2, 2, 1015, 2015, 2}}) {
      StoredSpan span;
      span.track_id = r.track;
      span.op_id = r.op;
      span.start_ns = r.start * kUs;
      span.dur_ns = (r.end - r.start) * kUs;
      span.correlation = r.correlation;
      spans->Add(span, span.start_ns, span.dur_ns);
    }
    spans->Finish();
    graph.emplace(*spans);
  }

  int64_t Predicted(const ReplayChanges& changes) {
    auto times = Replay(*graph, changes);
    EXPECT_TRUE(times.ok()) << times.status();
    auto reply = ReplayReport(*graph, *times, std::nullopt);
    EXPECT_TRUE(reply.ok()) << reply.status();
    return reply->predicted_ns();
  }
};

// Kernels twice as fast: [15, 515) and [515, 1015) (the second still after
// its launch); the sync ends 5 us after: 1020 us. Without waiting, the sync
// takes its 5 us at 520 and the kernels run as measured: 2015 us.
TEST(ReplayTest, CudaLaunchesAndSynchronisations) {
  GpuJob job;
  EXPECT_EQ(job.Predicted(ReplayChanges{}), 2020 * kUs);
  ReplayChanges faster;
  faster.scales = {{"cuda_kernel", 0.5}};
  EXPECT_EQ(job.Predicted(faster), 1020 * kUs);
  ReplayChanges no_wait;
  no_wait.no_wait = true;
  EXPECT_EQ(job.Predicted(no_wait), 2015 * kUs);
  // Prep removed: the sync starts at 20 us but still waits for the kernels.
  ReplayChanges no_prep;
  no_prep.scales = {{"prep", 0}};
  EXPECT_EQ(job.Predicted(no_prep), 2020 * kUs);
}

TEST(ReplayTest, BadChangesAreRefusedWithAReason) {
  auto f = Scenario("p2p-chain");
  ASSERT_NE(f, nullptr);
  ReplayChanges negative;
  negative.scales = {{"compute", -1}};
  EXPECT_EQ(Replay(*f->graph, negative).status().message(),
            "--scale compute=-1: the factor must be a number from 0 to 1000");
  ReplayChanges huge;
  huge.scales = {{"compute", 1e300}};
  EXPECT_EQ(Replay(*f->graph, huge).status().code(),
            absl::StatusCode::kInvalidArgument);
  ReplayChanges twice;
  twice.rank_like = {{1, 0}, {1, 2}};
  EXPECT_EQ(Replay(*f->graph, twice).status().message(),
            "--rank-like: rank 1 is given twice; give each rank once");
  ReplayChanges missing;
  missing.rank_like = {{7, 0}};
  auto status = Replay(*f->graph, missing).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(status.message(),
            "--rank-like 7=0: the job has no spans of rank 7 (it has 4 ranks)");
  ReplayChanges model;
  model.comm_model = CommModel{CommModel::Algorithm::kTree, 0, 0};
  EXPECT_EQ(Replay(*f->graph, model).status().code(),
            absl::StatusCode::kInvalidArgument);
  auto times = Replay(*f->graph, ReplayChanges{});
  ASSERT_TRUE(times.ok());
  auto none = ReplayReport(*f->graph, *times, StepRange{5, 9});
  EXPECT_EQ(none.status().message(),
            "no span of this job is tagged with a step in 5..9; `meridian "
            "steps` lists the steps");
}

}  // namespace
}  // namespace meridian
