#include "query/analysis/dependency_graph.h"

#include <tuple>
#include <vector>

#include "gtest/gtest.h"
#include "query/analysis/critical_path.h"
#include "testing/scenario_fixture.h"
#include "testing/scenario_job.h"

namespace meridian {
namespace {

// One rank with a CPU thread (track 1) and a GPU stream (track 2): a fake
// of what CUPTI capture records (the real one: tests/gpu/).
class GpuJob {
 public:
  GpuJob() {
    catalog_.processes = {{1, "node-0", 0, 0, 100}};
    catalog_.tracks = {{1, 1, v1::TRACK_KIND_THREAD, 100, "main"},
                       {2, 1, v1::TRACK_KIND_GPU_STREAM, 7, "stream 7"}};
    catalog_.ops = {{1, v1::CATEGORY_USER, "step"},
                    {2, v1::CATEGORY_CUDA_RUNTIME, "cudaLaunchKernel"},
                    {3, v1::CATEGORY_CUDA_KERNEL, "gemm"},
                    {4, v1::CATEGORY_CUDA_SYNC, "cudaStreamSynchronize"}};
  }
  void Add(int64_t track, int64_t op, int64_t start, int64_t end,
           uint64_t correlation = 0) {
    StoredSpan span;
    span.track_id = track;
    span.op_id = op;
    span.start_ns = start;
    span.dur_ns = end - start;
    span.correlation = correlation;
    spans_.push_back(span);
  }
  JobSpans Build() const {
    JobSpans spans(catalog_);
    for (const StoredSpan& s : spans_) spans.Add(s, s.start_ns, s.dur_ns);
    spans.Finish();
    return spans;
  }

 private:
  JobCatalog catalog_;
  std::vector<StoredSpan> spans_;
};

TEST(DependencyGraphTest, RolesOfOperations) {
  EXPECT_EQ(RoleOf(v1::CATEGORY_MPI, "MPI_Allreduce"), SpanRole::kAllToAll);
  EXPECT_EQ(RoleOf(v1::CATEGORY_MPI, "MPI_Gatherv"), SpanRole::kRootIn);
  EXPECT_EQ(RoleOf(v1::CATEGORY_MPI, "MPI_Ibcast"), SpanRole::kRootOut);
  EXPECT_EQ(RoleOf(v1::CATEGORY_MPI, "MPI_Waitall"), SpanRole::kWait);
  EXPECT_EQ(RoleOf(v1::CATEGORY_MPI, "MPI_Comm_split"), SpanRole::kNone);
  EXPECT_EQ(RoleOf(v1::CATEGORY_NCCL, "ncclAllReduce"), SpanRole::kAllToAll);
  EXPECT_EQ(RoleOf(v1::CATEGORY_NCCL, "ReduceScatter"), SpanRole::kAllToAll);
  EXPECT_EQ(RoleOf(v1::CATEGORY_NCCL, "ncclBroadcast"), SpanRole::kRootOut);
  EXPECT_EQ(RoleOf(v1::CATEGORY_NCCL, "ncclReduce"), SpanRole::kRootIn);
  EXPECT_EQ(RoleOf(v1::CATEGORY_NCCL, "ncclSend"), SpanRole::kSend);
  EXPECT_EQ(RoleOf(v1::CATEGORY_NCCL, "Recv"), SpanRole::kRecv);
  EXPECT_EQ(RoleOf(v1::CATEGORY_CUDA_SYNC, "cudaEventSynchronize"),
            SpanRole::kSync);
  EXPECT_EQ(RoleOf(v1::CATEGORY_CUDA_RUNTIME, "cudaDeviceSynchronize"),
            SpanRole::kSync);
  EXPECT_EQ(RoleOf(v1::CATEGORY_USER, "MPI_Allreduce"), SpanRole::kNone);
  EXPECT_TRUE(IsAsynchronous(v1::CATEGORY_MPI, "MPI_Irecv"));
  EXPECT_TRUE(IsAsynchronous(v1::CATEGORY_MPI, "MPI_Iallreduce"));
  EXPECT_FALSE(IsAsynchronous(v1::CATEGORY_MPI, "MPI_Init"));
  EXPECT_FALSE(IsAsynchronous(v1::CATEGORY_MPI, "MPI_Recv"));
  EXPECT_FALSE(IsAsynchronous(v1::CATEGORY_NCCL, "ncclAllReduce"));
}

TEST(DependencyGraphTest, PiecesGiveEachInstantToTheInnermostSpan) {
  auto f = ScenarioFixture::Load("slow-rank");
  ASSERT_NE(f, nullptr);
  const JobSpans& spans = *f->spans;
  int32_t main2 = -1;
  for (size_t t = 0; t < spans.tracks().size(); ++t) {
    if (spans.tracks()[t].rank == 2 && spans.tracks()[t].name == "main") {
      main2 = static_cast<int32_t>(t);
    }
  }
  ASSERT_GE(main2, 0);
  // Per step: forward, Allreduce (the enclosing "step" owns nothing), then
  // untraced time until the next step.
  auto pieces = f->graph->pieces(main2);
  ASSERT_EQ(pieces.size(), 4u * 3 - 1);
  EXPECT_EQ(pieces[0].t0, kScenarioT0);
  EXPECT_EQ(pieces[0].t1, kScenarioT0 + 5 * kMs);
  EXPECT_EQ(spans.name(spans.spans()[pieces[0].span]), "forward");
  EXPECT_EQ(spans.name(spans.spans()[pieces[1].span]), "MPI_Allreduce");
  EXPECT_EQ(pieces[2].span, -1);
  EXPECT_EQ(pieces[2].t1 - pieces[2].t0, 4900 * kUs);
  EXPECT_EQ(f->graph->PieceBefore(main2, kScenarioT0), nullptr);
  EXPECT_EQ(f->graph->PieceBefore(main2, kScenarioT0 + 1), &pieces[0]);
  EXPECT_EQ(f->graph->mpi().instances(), 8);
  // Rank 2 was last into each main-thread Allreduce: the others' ends bind
  // to its start, its own to nothing.
  for (int32_t m : f->graph->mpi().members(0)) {
    const int32_t b = f->graph->end_binding(m);
    if (spans.spans()[m].rank == 2) {
      EXPECT_EQ(b, -1);
    } else {
      ASSERT_GE(b, 0);
      EXPECT_EQ(spans.spans()[b].rank, 2);
    }
  }
}

TEST(DependencyGraphTest, WaitInheritsItsRequestsAndSendsPairInOrder) {
  auto f = ScenarioFixture::Load("slow-link");
  ASSERT_NE(f, nullptr);
  const std::vector<JobSpan>& all = f->spans->spans();
  EXPECT_EQ(f->graph->mpi().messages().size(), 8u);
  for (const auto& [send, recv] : f->graph->mpi().messages()) {
    EXPECT_EQ(all[send].peer, all[recv].rank);
    EXPECT_EQ(all[recv].peer, all[send].rank);
    EXPECT_EQ(all[send].step, all[recv].step);
    EXPECT_TRUE(all[recv].async);
  }
  int waits = 0;
  for (size_t i = 0; i < all.size(); ++i) {
    if (all[i].role != SpanRole::kWait) continue;
    ++waits;
    std::vector<int32_t> completed = f->graph->Completes(i);
    ASSERT_EQ(completed.size(), 1u);
    EXPECT_EQ(f->spans->name(all[completed[0]]), "MPI_Irecv");
    EXPECT_EQ(all[completed[0]].end, all[i].end);
  }
  EXPECT_EQ(waits, 8);
}

TEST(DependencyGraphTest, GpuLaunchAndSynchronizeAreWaiting) {
  GpuJob job;
  job.Add(1, 1, 0, 100);     // step
  job.Add(1, 2, 10, 15, 1);  // launch gemm #1
  job.Add(1, 2, 20, 25, 2);  // launch gemm #2
  job.Add(2, 3, 30, 60, 1);  // gemm #1: the stream was idle
  job.Add(2, 3, 60, 80, 2);  // gemm #2: after #1 in stream order
  job.Add(1, 4, 40, 90);     // cudaStreamSynchronize
  const JobSpans spans = job.Build();
  const DependencyGraph graph(spans);
  EXPECT_EQ(graph.launch(1), -1);
  const v1::CriticalPathReply path = CriticalPath(graph, TimeWindow{0, 100});
  using Segment =
      std::tuple<std::string, v1::TimeClass, std::string, int64_t, int64_t>;
  std::vector<Segment> segments;
  for (const auto& s : path.segments()) {
    segments.emplace_back(s.track(), s.time_class(), s.name(), s.start_ns(),
                          s.dur_ns());
  }
  constexpr auto kCompute = v1::TIME_CLASS_COMPUTE;
  constexpr auto kWaiting = v1::TIME_CLASS_WAITING;
  EXPECT_EQ(segments, (std::vector<Segment>{
                          {"main", kCompute, "step", 0, 10},
                          {"main", kCompute, "cudaLaunchKernel", 10, 5},
                          {"stream 7", kWaiting, "launch of gemm", 15, 15},
                          {"stream 7", kCompute, "gemm", 30, 30},
                          {"stream 7", kCompute, "gemm", 60, 20},
                          {"main", kWaiting, "cudaStreamSynchronize", 80, 10},
                          {"main", kCompute, "step", 90, 10}}));
  EXPECT_EQ(path.compute_ns(), 75);
  EXPECT_EQ(path.waiting_ns(), 25);
  EXPECT_GT(spans.MemoryBytes() + graph.MemoryBytes(), 0);
}

}  // namespace
}  // namespace meridian
