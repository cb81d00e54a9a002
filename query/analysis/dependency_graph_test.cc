#include "query/analysis/dependency_graph.h"

#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "query/analysis/critical_path.h"
#include "query/analysis/stragglers.h"
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

// Ranks 0..3 on one node, each one process with one thread ("main"):
// spans made by hand, as the probe would record them.
class MpiJob {
 public:
  MpiJob() {
    for (int32_t rank = 0; rank < 4; ++rank) {
      catalog_.processes.push_back({rank + 1, "node-0", rank, rank, 100});
      catalog_.tracks.push_back(
          {rank + 1, rank + 1, v1::TRACK_KIND_THREAD, 100, "main"});
    }
  }
  // A span of `rank` from start to end: an MPI one if `op` starts with
  // "MPI_", else the program's own. Valid until the next Add.
  StoredSpan& Add(int32_t rank, const std::string& op, int64_t start,
                  int64_t end) {
    int64_t id = 0;
    for (const OpInfo& o : catalog_.ops) {
      if (o.name == op) id = o.id;
    }
    if (id == 0) {
      id = static_cast<int64_t>(catalog_.ops.size()) + 1;
      catalog_.ops.push_back(
          {id, op.rfind("MPI_", 0) == 0 ? v1::CATEGORY_MPI : v1::CATEGORY_USER,
           op});
    }
    StoredSpan span;
    span.track_id = rank + 1;
    span.op_id = id;
    span.start_ns = start;
    span.dur_ns = end - start;
    spans_.push_back(span);
    return spans_.back();
  }
  // An instance member: comm 5, sequence number `seq`.
  StoredSpan& AddCollective(int32_t rank, const std::string& op, uint64_t seq,
                            int64_t start, int64_t end) {
    StoredSpan& span = Add(rank, op, start, end);
    span.comm = 5;
    span.seq = seq;
    return span;
  }
  // A one-sided call on window 9 with `target`.
  StoredSpan& AddOneSided(int32_t rank, const std::string& op, int32_t target,
                          int64_t start, int64_t end) {
    StoredSpan& span = Add(rank, op, start, end);
    span.comm = 9;
    span.peer = target;
    return span;
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

StoredArg TextArg(const std::string& key, const std::string& value) {
  StoredArg arg;
  arg.key = key;
  arg.type = StoredArg::Type::kString;
  arg.str = value;
  return arg;
}

StoredArg IntArg(const std::string& key, int64_t value) {
  StoredArg arg;
  arg.key = key;
  arg.int_value = value;
  return arg;
}

// (rank, class, name, start, duration)
using PathSegment =
    std::tuple<int32_t, v1::TimeClass, std::string, int64_t, int64_t>;
constexpr v1::TimeClass kCompute = v1::TIME_CLASS_COMPUTE;
constexpr v1::TimeClass kComm = v1::TIME_CLASS_COMMUNICATION;

std::vector<PathSegment> PathOf(const DependencyGraph& graph,
                                const TimeWindow& window) {
  std::vector<PathSegment> out;
  const v1::CriticalPathReply path = CriticalPath(graph, window);
  for (const auto& s : path.segments()) {
    out.emplace_back(s.rank(), s.time_class(), s.name(), s.start_ns(),
                     s.dur_ns());
  }
  return out;
}

// The rank `span` of `spans` (an index) belongs to, or -1 for none.
int32_t RankOf(const JobSpans& spans, int32_t span) {
  return span < 0 ? -1 : spans.spans()[span].rank;
}

// The span of `rank` named `name` (the first).
int32_t Find(const JobSpans& spans, int32_t rank, const std::string& name) {
  for (size_t i = 0; i < spans.spans().size(); ++i) {
    const JobSpan& s = spans.spans()[i];
    if (s.rank == rank && spans.name(s) == name) return static_cast<int32_t>(i);
  }
  return -1;
}

// Rank 2 computes 50 ns and rank 1 60 ns before an MPI_Neighbor_alltoall
// on a directed ring (rank r receives from r - 1: its "sources"); rank 3
// then computes until 90. Rank 3 waited for its in-neighbor, rank 2, not
// for rank 1, the last to arrive: the path runs through rank 2's compute.
// An all-to-all instance would have rank 3 wait for rank 1, at 60, after
// it had left.
TEST(DependencyGraphTest, NeighborCollectiveWaitsForItsInNeighborsOnly) {
  MpiJob job;
  const char* kOp = "MPI_Neighbor_alltoall";
  job.AddCollective(0, kOp, 0, 0, 5).args = {IntArg("sources", 3)};
  job.Add(1, "compute", 0, 60);
  job.AddCollective(1, kOp, 0, 60, 62).args = {TextArg("sources", "0")};
  job.Add(2, "compute", 0, 50);
  job.AddCollective(2, kOp, 0, 50, 61).args = {IntArg("sources", 1)};
  job.AddCollective(3, kOp, 0, 0, 51).args = {IntArg("sources", 2)};
  job.Add(3, "post", 51, 90);
  const JobSpans spans = job.Build();
  const DependencyGraph graph(spans);
  EXPECT_EQ(RankOf(spans, graph.end_binding(Find(spans, 3, kOp))), 2);
  EXPECT_EQ(RankOf(spans, graph.end_binding(Find(spans, 2, kOp))), 1);
  EXPECT_EQ(graph.end_binding(Find(spans, 1, kOp)), -1);
  EXPECT_EQ(graph.end_binding(Find(spans, 0, kOp)), -1);
  EXPECT_EQ(PathOf(graph, TimeWindow{0, 90}),
            (std::vector<PathSegment>{{2, kCompute, "compute", 0, 50},
                                      {3, kComm, kOp, 50, 1},
                                      {3, kCompute, "post", 51, 39}}));
  // Stragglers: rank 3 waited 50 for rank 2, rank 2 10 for rank 1.
  const v1::StragglersReply stragglers = Stragglers(graph, 0);
  ASSERT_EQ(stragglers.ranks_size(), 4);
  EXPECT_EQ(stragglers.ranks(0).rank(), 2);
  EXPECT_EQ(stragglers.ranks(0).wait_ns(), 50);
  EXPECT_EQ(stragglers.ranks(1).rank(), 1);
  EXPECT_EQ(stragglers.ranks(1).wait_ns(), 10);
  ASSERT_EQ(stragglers.collectives_size(), 1);
  EXPECT_EQ(stragglers.collectives(0).wait_ns(), 60);
}

// Sources that are malformed, out of range or too many give no edge; a
// neighbor collective without "sources" waits for no one.
TEST(DependencyGraphTest, HostileSourcesGiveNoEdge) {
  std::string many = "1";
  for (int i = 0; i < 300; ++i) many += ",1";
  const std::vector<std::vector<StoredArg>> args = {
      {TextArg("sources", "1,x")}, {TextArg("sources", "-1")},
      {IntArg("sources", 4000)},   {TextArg("sources", many)},
      {IntArg("sources", -5)},     {}};
  for (const auto& a : args) {
    MpiJob job;
    job.AddCollective(0, "MPI_Neighbor_allgather", 0, 0, 10).args = a;
    job.AddCollective(1, "MPI_Neighbor_allgather", 0, 5, 10).args = {
        IntArg("sources", 0)};
    const JobSpans spans = job.Build();
    const DependencyGraph graph(spans);
    EXPECT_EQ(graph.end_binding(Find(spans, 0, "MPI_Neighbor_allgather")), -1);
  }
}

// MPI_Scan: ranks 2 and 3 wait for rank 1, the last of the ranks up to
// theirs; rank 0 for no one. MPI_Exscan: the same but rank 1 waits for
// rank 0 only.
TEST(DependencyGraphTest, ScanWaitsForTheRanksUpToItsOwn) {
  MpiJob job;
  const int64_t starts[4] = {10, 40, 20, 30};
  for (int32_t rank = 0; rank < 4; ++rank) {
    job.AddCollective(rank, "MPI_Scan", 0, starts[rank], 50);
    job.AddCollective(rank, "MPI_Exscan", 1, 100 + starts[rank], 150);
  }
  const JobSpans spans = job.Build();
  const DependencyGraph graph(spans);
  std::vector<int32_t> scan, exscan;
  for (int32_t rank = 0; rank < 4; ++rank) {
    scan.push_back(
        RankOf(spans, graph.end_binding(Find(spans, rank, "MPI_Scan"))));
    exscan.push_back(
        RankOf(spans, graph.end_binding(Find(spans, rank, "MPI_Exscan"))));
  }
  EXPECT_EQ(scan, (std::vector<int32_t>{-1, -1, 1, 1}));
  EXPECT_EQ(exscan, (std::vector<int32_t>{-1, -1, 1, 1}));
}

// Two exclusive epochs on rank 1's window memory. Rank 0 holds the lock
// while it computes; rank 2 asks for it at once.
//   eager: rank 2's Win_lock returns only once rank 0's Win_unlock began
//          (which goes on after it let go, as MPICH's does): the path runs
//          through rank 0's compute into rank 2's Win_lock.
//   lazy:  rank 2's Win_lock returns at once and its Win_unlock, begun
//          before rank 0's, waits: ordered first, rank 2's epoch waits for
//          nothing (mpi_semantics.h says why), and the wait stays rank 2's
//          own communication.
//   shared: a shared lock orders nothing.
TEST(DependencyGraphTest, ExclusiveLockEpochsSerialize) {
  for (const std::string mode : {"eager", "lazy", "shared"}) {
    SCOPED_TRACE(mode);
    const bool eager = mode == "eager";
    const std::string type = mode == "shared" ? "shared" : "exclusive";
    MpiJob job;
    job.AddOneSided(0, "MPI_Win_lock", 1, 0, 1).args = {
        TextArg("lock_type", type)};
    job.Add(0, "compute", 1, 50);
    job.AddOneSided(0, "MPI_Win_unlock", 1, 50, 58);
    job.AddOneSided(2, "MPI_Win_lock", 1, 2, eager ? 51 : 3).args = {
        TextArg("lock_type", type)};
    job.AddOneSided(2, "MPI_Put", 1, eager ? 51 : 3, eager ? 52 : 4);
    job.AddOneSided(2, "MPI_Win_unlock", 1, eager ? 52 : 4, 53);
    job.Add(2, "post", 53, 60);
    const JobSpans spans = job.Build();
    const DependencyGraph graph(spans);
    const int32_t unlock0 = Find(spans, 0, "MPI_Win_unlock");
    const int32_t lock2 = Find(spans, 2, "MPI_Win_lock");
    const int32_t unlock2 = Find(spans, 2, "MPI_Win_unlock");
    const std::vector<PathSegment> path = PathOf(graph, TimeWindow{0, 60});
    using Handoffs = std::vector<std::pair<int32_t, int32_t>>;
    if (mode == "eager") {
      EXPECT_EQ(graph.mpi().lock_handoffs(), (Handoffs{{unlock0, lock2}}));
      EXPECT_EQ(graph.end_binding(lock2), unlock0);
      EXPECT_EQ(path,
                (std::vector<PathSegment>{{0, kComm, "MPI_Win_lock", 0, 1},
                                          {0, kCompute, "compute", 1, 49},
                                          {2, kComm, "MPI_Win_lock", 50, 1},
                                          {2, kComm, "MPI_Put", 51, 1},
                                          {2, kComm, "MPI_Win_unlock", 52, 1},
                                          {2, kCompute, "post", 53, 7}}));
    } else if (mode == "lazy") {
      EXPECT_EQ(graph.mpi().lock_handoffs(), (Handoffs{{unlock2, unlock0}}));
      EXPECT_EQ(graph.end_binding(unlock2), -1);
      EXPECT_EQ(graph.end_binding(unlock0), -1);
      EXPECT_EQ(path, (std::vector<PathSegment>{
                          {2, v1::TIME_CLASS_UNTRACED, "", 0, 2},
                          {2, kComm, "MPI_Win_lock", 2, 1},
                          {2, kComm, "MPI_Put", 3, 1},
                          {2, kComm, "MPI_Win_unlock", 4, 49},
                          {2, kCompute, "post", 53, 7}}));
    } else {
      EXPECT_THAT(graph.mpi().lock_handoffs(), ::testing::IsEmpty());
      EXPECT_EQ(graph.end_binding(lock2), -1);
      EXPECT_EQ(std::get<0>(path[0]), 2);
    }
  }
}

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
