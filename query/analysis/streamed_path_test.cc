#include "query/analysis/streamed_path.h"

#include <algorithm>
#include <functional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "gtest/gtest.h"
#include "query/analysis/critical_path.h"
#include "query/analysis/dependency_graph.h"
#include "query/analysis/job_spans.h"
#include "query/clocks/job_clocks.h"
#include "testing/solved_job.h"
#include "testing/synthetic_job.h"
#include "testing/synthetic_store.h"
#include "wire/batch_builder.h"

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

constexpr int64_t kUs = 1000;
constexpr int64_t kMs = 1000 * kUs;

// What block edges meet in a real job, on 4 ranks on 2 nodes, steps 0..8
// but 5 (a gap):
//  - each rank's main thread holds one untagged "train" span over the whole
//    job, which every step's spans are children of (a block reads only some
//    of its children);
//  - each step: "forward" (tagged), a kernel launch (cudaLaunchKernel,
//    tagged) whose kernel (untagged, on the rank's GPU stream) runs on past
//    the next step's start, an MPI_Send from rank 0 to rank 1 (tagged)
//    received late, an MPI_Allreduce the ranks enter at different times,
//    and a cudaDeviceSynchronize waiting for the kernel;
//  - rank 2 has a "loader" thread with one span, mid-job (a track with
//    nothing in most blocks).
std::vector<v1::Batch> EdgesJob() {
  std::vector<v1::Batch> batches;
  const int64_t t0 = 1700000000000000000;
  uint64_t correlation = 1;
  for (int node = 0; node < 2; ++node) {
    BatchBuilder builder("edges-" + std::to_string(node));
    for (int local = 0; local < 2; ++local) {
      const int rank = 2 * node + local;
      const int process =
          builder.DeclareProcess({"edges", "node-" + std::to_string(node), rank,
                                  local, 100 + rank, 4});
      const int main =
          builder.DeclareTrack(process, v1::TRACK_KIND_THREAD, 1, "main");
      const int gpu = builder.DeclareTrack(process, v1::TRACK_KIND_GPU_STREAM,
                                           7, "stream 7");
      const int64_t step_ns = 20 * kMs;
      builder.AddSpan(main, v1::CATEGORY_USER, "train", t0 - kMs,
                      10 * step_ns + kMs);
      if (rank == 2) {
        const int loader =
            builder.DeclareTrack(process, v1::TRACK_KIND_THREAD, 2, "loader");
        builder.AddSpan(loader, v1::CATEGORY_USER, "load", t0 + 3 * step_ns,
                        7 * kMs);
      }
      for (int64_t step = 0; step < 9; ++step) {
        if (step == 5) continue;
        // Rank r starts its steps r ms late: rank 3's kernel and sync run
        // past rank 0's start of the next step (where a block begins).
        const int64_t t = t0 + step * step_ns + rank * kMs;
        const int64_t forward = (4 + (step + rank) % 3) * kMs;
        builder.AddSpan(main, v1::CATEGORY_USER, "forward", t, forward)
            ->set_step(step);
        v1::Span* launch =
            builder.AddSpan(main, v1::CATEGORY_CUDA_RUNTIME, "cudaLaunchKernel",
                            t + forward, 20 * kUs);
        launch->set_step(step);
        launch->set_correlation(correlation);
        // The kernel starts late (the stream was busy); rank 0's is short,
        // so that its synchronisation does not wait and its path goes
        // through the Allreduce to the last rank into it.
        const int64_t kernel_ns = rank == 0 ? kMs : (8 + rank) * kMs;
        const int64_t kernel_end = t + forward + 2 * kMs + kernel_ns;
        v1::Span* kernel =
            builder.AddSpan(gpu, v1::CATEGORY_CUDA_KERNEL, "gemm",
                            t + forward + 2 * kMs, kernel_ns);
        kernel->set_correlation(correlation++);
        int64_t at = t + forward + 100 * kUs;
        if (rank <= 1) {
          v1::Span* p2p = builder.AddSpan(
              main, v1::CATEGORY_MPI, rank == 0 ? "MPI_Send" : "MPI_Recv", at,
              rank == 0 ? 50 * kUs : 1500 * kUs);
          p2p->set_step(step);
          p2p->set_peer(1 - rank);
          p2p->set_tag(3);
          p2p->set_comm(1);
          p2p->set_comm_size(4);
          at += 2 * kMs;
        }
        v1::Span* allreduce = builder.AddSpan(main, v1::CATEGORY_MPI,
                                              "MPI_Allreduce", at, 3 * kMs);
        allreduce->set_step(step);
        allreduce->set_comm(1);
        allreduce->set_comm_size(4);
        allreduce->set_seq(static_cast<uint64_t>(step));
        // Waits for the kernel (ends just after it) if it still runs.
        const int64_t sync_start = at + 3 * kMs + 200 * kUs;
        const int64_t sync_end =
            std::max(kernel_end + 50 * kUs, sync_start + 300 * kUs);
        builder
            .AddSpan(main, v1::CATEGORY_CUDA_SYNC, "cudaDeviceSynchronize",
                     sync_start, sync_end - sync_start)
            ->set_step(step);
      }
    }
    batches.push_back(builder.Take());
  }
  return batches;
}

// Steps of uneven size, on 2 ranks on 2 nodes, steps 0..7 at t0 + s x 10 ms:
// each rank's "forward" [T, T + 4 ms) and an MPI_Allreduce [T + 4 ms,
// T + 5 ms) (4 spans a step), and besides:
//  - step 3: 200 "op" spans of rank 0 inside its forward (204 spans);
//  - before step 0: 300 untagged "init" spans of rank 1;
//  - after step 7: 100 untagged "save" spans of rank 0.
std::vector<v1::Batch> UnevenJob() {
  std::vector<v1::Batch> batches;
  const int64_t t0 = 1700000000000000000;
  for (int rank = 0; rank < 2; ++rank) {
    BatchBuilder builder("uneven-" + std::to_string(rank));
    const int process = builder.DeclareProcess(
        {"uneven", "node-" + std::to_string(rank), rank, 0, 100 + rank, 2});
    const int main =
        builder.DeclareTrack(process, v1::TRACK_KIND_THREAD, 1, "main");
    if (rank == 1) {
      for (int i = 0; i < 300; ++i) {
        builder.AddSpan(main, v1::CATEGORY_USER, "init",
                        t0 - 10 * kMs + 20 * kUs * i, 10 * kUs);
      }
    }
    for (int64_t step = 0; step < 8; ++step) {
      const int64_t t = t0 + step * 10 * kMs;
      builder.AddSpan(main, v1::CATEGORY_USER, "forward", t, 4 * kMs)
          ->set_step(step);
      if (step == 3 && rank == 0) {
        for (int i = 0; i < 200; ++i) {
          builder
              .AddSpan(main, v1::CATEGORY_USER, "op", t + 15 * kUs * i,
                       10 * kUs)
              ->set_step(step);
        }
      }
      v1::Span* allreduce = builder.AddSpan(main, v1::CATEGORY_MPI,
                                            "MPI_Allreduce", t + 4 * kMs, kMs);
      allreduce->set_step(step);
      allreduce->set_comm(1);
      allreduce->set_comm_size(2);
      allreduce->set_seq(static_cast<uint64_t>(step));
    }
    if (rank == 0) {
      for (int i = 0; i < 100; ++i) {
        builder.AddSpan(main, v1::CATEGORY_USER, "save",
                        t0 + 80 * kMs + 20 * kUs * i, 10 * kUs);
      }
    }
    batches.push_back(builder.Take());
  }
  return batches;
}

// A job written, its clocks solved and stored as the collector does, then
// opened again for reading.
class StreamedPathTest : public ::testing::Test {
 protected:
  void Write(const SyntheticJob& job) {
    WriteWith(job.job, [&job](Store& store) {
      ASSERT_TRUE(WriteSyntheticJob(job, store).ok());
    });
  }
  void Write(const std::string& name, const std::vector<v1::Batch>& batches) {
    WriteWith(name, [&batches](Store& store) {
      std::vector<const v1::Batch*> all;
      for (const v1::Batch& b : batches) all.push_back(&b);
      ASSERT_TRUE(store.Write(all).ok());
    });
  }
  void WriteWith(const std::string& name,
                 const std::function<void(Store&)>& write) {
    auto job = WriteSolvedJob("streamed_" + name, name, [&](Store& store) {
      write(store);
      return absl::OkStatus();
    });
    ASSERT_TRUE(job.ok()) << job.status();
    store_ = std::move(job->store);
    catalog_ = std::move(job->catalog);
    stored_ = std::move(job->stored);
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

  // The path walked in blocks of each of `steps_a_block` steps (a block
  // reads its steps and the one before) is `whole`, segment for segment.
  void ExpectTheWholePathInBlocksOf(std::vector<int64_t> steps_a_block,
                                    int64_t steps,
                                    const v1::CriticalPathReply& whole) {
    const int64_t per_step = catalog_.job.spans / steps;
    for (int64_t block : steps_a_block) {
      SCOPED_TRACE(block);
      auto streamed = StreamedCriticalPath(*store_, catalog_, stored_,
                                           (block + 1) * per_step, 0);
      ASSERT_TRUE(streamed.ok()) << streamed.status();
      EXPECT_EQ(streamed->job(), catalog_.job.name);
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
  // One step a block, two, four (blocks unequal: 9 steps), all at once.
  ExpectTheWholePathInBlocksOf({1, 2, 4, 9}, job.steps, whole);
}

TEST_F(StreamedPathTest, BlockEdgesInsideSpansKernelsAndAGapJoinAsOnePath) {
  Write("edges", EdgesJob());
  const v1::CriticalPathReply whole = Whole();
  ASSERT_GT(whole.segments_size(), 8 * 3);
  // The path uses what the job was made to have at the edges.
  std::set<std::string> names;
  std::set<v1::TimeClass> classes;
  for (const v1::PathSegment& s : whole.segments()) {
    names.insert(s.name());
    classes.insert(s.time_class());
  }
  for (const char* name :
       {"forward", "gemm", "train", "MPI_Allreduce", "cudaDeviceSynchronize"}) {
    EXPECT_TRUE(names.count(name)) << name;
  }
  EXPECT_TRUE(classes.count(v1::TIME_CLASS_WAITING));
  EXPECT_TRUE(classes.count(v1::TIME_CLASS_COMMUNICATION));
  ExpectTheWholePathInBlocksOf({1, 2, 3, 4, 9}, 9, whole);
}

// No block holds more spans than the budget: blocks over it are read again
// as fewer steps (the path is the same), and a step over it alone, or with
// the time before the first step or after the last, is refused by name.
TEST_F(StreamedPathTest, BlocksStayWithinTheBudgetWhateverTheStepsSizes) {
  Write("uneven", UnevenJob());
  ASSERT_EQ(catalog_.job.spans, 8 * 4 + 200 + 300 + 100);
  const v1::CriticalPathReply whole = Whole();
  const auto in_blocks = [&](int64_t max_spans) {
    // One block of every step, but for the limit.
    return StreamedCriticalPath(*store_, catalog_, stored_, 100000, max_spans);
  };
  for (int64_t max_spans : {0, 2000, 400}) {
    SCOPED_TRACE(max_spans);
    auto path = in_blocks(max_spans);
    ASSERT_TRUE(path.ok()) << path.status();
    EXPECT_EQ(SegmentsOf(*path), SegmentsOf(whole));
    EXPECT_EQ(path->dur_ns(), whole.dur_ns());
  }
  // Steps 0 and 1 fit 400 with the 300 spans before them, not 250.
  auto before = in_blocks(250);
  EXPECT_EQ(before.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(before.status().message(),
            "job uneven's step 0, with the time before its first step, "
            "holds more than 250 spans");
  // Step 4's block reads step 3 (204 spans) with it.
  auto step = in_blocks(150);
  EXPECT_EQ(step.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(step.status().message(),
            "job uneven's step 4 and the step before it hold more than 150 "
            "spans");
  auto after = in_blocks(100);
  EXPECT_EQ(after.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(after.status().message(),
            "job uneven's step 7 and the step before it, with the time after "
            "its last step, hold more than 100 spans");
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
  auto refused = StreamedCriticalPath(*store_, catalog_, stale, 1000, 0);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(refused.status().message(),
            "job refused: its stored clock solution is not of the job as it "
            "stands");
  JobCatalog none = catalog_;
  none.job.id = -1;  // no span, so no step
  auto no_steps = StreamedCriticalPath(*store_, none, stored_, 1000, 0);
  EXPECT_EQ(no_steps.status().code(), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace meridian
